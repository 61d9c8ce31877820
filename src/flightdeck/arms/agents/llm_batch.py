"""The LLM agent over many questions at once: one inspect eval, its samples the questions.

What ``experiment agent llm`` does when the runner hands it a batch
(:data:`flightdeck.arms.batch_trial.ENV_BATCH`, see :mod:`flightdeck.arms.batch_trial`):
inspect_ai is imported once and one eval runs every question of the batch as a sample, so
the per-question cost is the model's own time plus a little; concurrency (``max_samples``,
the runner's ``--jobs``), retries, rate limits and the per-sample time limit are inspect's.

Each sample is one trial, as a process per question would be:

- its tools read its own workspace only: a sample's grep, read, list and submit are built
  for that sample (:class:`~flightdeck.arms.agents.tools.WorkspaceTools` of its folder,
  resolved and checked on every path), so the model of one question never reaches another's;
- when it ends, an inspect ``on_sample_end`` hook writes its trace (the
  notes and the sample's whole inspect log, keys redacted) and then, atomically, its result,
  which the runner collects at once: a killed batch loses no finished sample, and a rerun
  runs only the questions still missing;
- a sample that fails (the model unreachable after retries, a bad key) or hits the time
  limit writes ``failed.txt`` with the one-line reason instead of a result.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.arms.agents.dry_run import agent_outputs, is_dry_run
from flightdeck.arms.agents.llm import NO_ANSWER, AgentOptions, sample_timing, user_prompt
from flightdeck.arms.agents.tools import Submission, WorkspaceTools, inspect_tools, submit_tool
from flightdeck.models import TokenUsage, get_model, redact, skip_other_providers_state

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

RESULT, FAILED, TRACE, TIMING = "result.json", "failed.txt", "trace.log", "timing.json"


@dataclass
class _Trial:
    task: dict[str, Any]
    workspace: Path
    out: Path
    tools: WorkspaceTools
    submission: Submission = field(default_factory=Submission)


def read_batch(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The batch file the runner wrote: its settings and its trials (task, workspace, out)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data, list(data["trials"])


def run_batch(
    options: AgentOptions, batch_file: Path, started: float, startup: float | None = None
) -> int:
    """Answer every trial of the batch; return how many got a result (the rest failed.txt).

    ``started`` is when the command began (monotonic), ``startup`` the seconds the process
    took to get there (interpreter and imports), for each trial's ``timing``.
    """
    imported = time.monotonic()
    from inspect_ai import Task, eval
    from inspect_ai.agent import AgentSubmit, as_solver, react
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import Generate, Solver, TaskState, solver

    import_seconds = time.monotonic() - imported
    settings, entries = read_batch(batch_file)
    trials = {
        str(n): _Trial(
            e["task"], Path(e["workspace"]), Path(e["out"]), WorkspaceTools(Path(e["workspace"]))
        )
        for n, e in enumerate(entries)
    }
    model_settings = options.settings
    if is_dry_run(model_settings.name) and "custom_outputs" not in model_settings.model_args:
        import dataclasses

        script = {"custom_outputs": agent_outputs(model_settings.name)}
        model_settings = dataclasses.replace(model_settings, model_args=script)
    provenance = options.provenance()
    time_limit = settings.get("timeout")
    process: dict[str, Any] = {"import_seconds": round(import_seconds, 3), "samples": len(trials)}
    if startup is not None:
        process["startup_seconds"] = startup

    @solver
    def one_question() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            trial = trials[str(state.sample_id)]
            agent = react(
                prompt=options.system_prompt,
                tools=inspect_tools(trial.tools),
                submit=AgentSubmit(
                    tool=submit_tool(trial.tools, trial.submission),
                    answer_only=True,
                    keep_in_messages=True,
                ),
            )
            return await as_solver(agent)(state, generate)

        return solve

    written: list[int] = []

    def collect(sample: EvalSample) -> None:
        trial = trials[str(sample.id)]
        written.append(
            write_sample(
                trial, sample, provenance=provenance, time_limit=time_limit, process=process
            )
        )

    _on_sample_end(collect)
    skip_other_providers_state(model_settings.name)
    setup = time.monotonic()
    process["setup_seconds"] = round(setup - started - import_seconds, 3)
    process["eval_called"] = time.time()  # each sample's wait: its start minus this
    eval(
        Task(
            dataset=[
                Sample(input=user_prompt(t.task, t.workspace), id=key) for key, t in trials.items()
            ]
        ),
        solver=one_question(),
        model=get_model(model_settings),
        log_dir=str(Path(os.environ.get("TMPDIR", "/tmp")) / "inspect-logs"),
        log_format="json",
        log_samples=False,
        display="none",
        max_samples=int(settings.get("jobs", 1)),
        turn_limit=options.max_steps,
        token_limit=options.token_limit,
        time_limit=int(time_limit) if time_limit else None,
        score=False,
        fail_on_error=False,
    )
    for key, trial in trials.items():  # a sample inspect never ended (an eval-level error)
        if not (trial.out / RESULT).exists() and not (trial.out / FAILED).exists():
            _atomic(trial.out / FAILED, f"the inspect eval ended before sample {key} ran\n")
    return sum(written)


_route: list[Any] = []  # the running batch's collector (one batch per process at a time)


def _on_sample_end(collect: Any) -> None:
    """Route inspect's ``on_sample_end`` to ``collect``; the hook is registered once."""
    from inspect_ai.hooks import Hooks, SampleEnd, hooks

    if not _route:

        @hooks(name="flightdeck_batch_trials", description="writes each sample as one trial")
        class _Collector(Hooks):
            def enabled(self) -> bool:
                return _route[0] is not None

            async def on_sample_end(self, data: SampleEnd) -> None:
                _route[0](data.sample)

        _route.append(None)
    _route[0] = collect


def write_sample(
    trial: _Trial,
    sample: EvalSample,
    *,
    provenance: Mapping[str, Any],
    time_limit: float | None,
    process: Mapping[str, Any],
) -> int:
    """Write one ended sample's trace, then its result (or why it failed); 1 when answered."""
    began = time.monotonic()
    usage = TokenUsage.total(TokenUsage.from_inspect(u) for u in sample.model_usage.values())
    notes = [f"read {path}" for path in trial.tools.read_paths]
    notes += [f"cite {uri} sha256={sha}" for uri, sha in trial.submission.citations]
    failure = None
    stopped = None
    if sample.error is not None:
        failure = redact(_error_line(sample.error.message, sample.error.traceback))[:300]
    elif sample.limit is not None and sample.limit.type == "time":
        failure = f"timed out after {time_limit:g} s (inspect's time limit on the sample)"
    elif trial.submission.answer is None:
        limit = sample.limit
        stopped = f"{limit.type} limit of {limit.limit:g}" if limit is not None else "no submit"
        notes.append(f"stopped without submitting: {stopped}")
    notes.append(f"tokens: {usage.input_tokens} in, {usage.output_tokens} out")
    timing = {**process, **sample_timing(sample)}
    called = timing.pop("eval_called")
    if sample.started_at:  # inspect's start-up and the queue before this sample began
        begun = datetime.fromisoformat(sample.started_at).timestamp()
        timing["wait_seconds"] = round(max(0.0, begun - called), 3)
    log_json = redact(sample.model_dump_json(exclude_none=True))
    timing["write_seconds"] = round(time.monotonic() - began, 3)
    notes.append("timing: " + json.dumps(timing, sort_keys=True))
    body = "".join(f"{note}\n" for note in notes)
    _atomic(trial.out / TRACE, body + "==> inspect log (JSON) <==\n" + log_json + "\n")
    _atomic(trial.out / TIMING, json.dumps(timing, sort_keys=True))
    if failure is not None:
        _atomic(trial.out / FAILED, f"agent failed: {failure}\n")
        return 0
    answer = trial.submission.answer
    result = {
        "answer": answer if answer is not None else NO_ANSWER.format(why=stopped),
        "citations": [{"uri": u, "sha256": s} for u, s in trial.submission.citations],
        "usage": usage.to_json(),
        "provenance": dict(provenance),
        "read": list(trial.tools.read_paths),
    }
    _atomic(trial.out / RESULT, redact(json.dumps(result, ensure_ascii=False, sort_keys=True)))
    return 1


_ERROR_LINE_RE = re.compile(r"^[\w.]*(?:Error|Exception): \S")


def _error_line(message: str, traceback: str) -> str:
    """The provider's own words: the traceback's last ``SomeError: ...`` line, else the message.

    A request that failed after inspect's retries surfaces as ``RetryError(<Future ...>)``;
    the error it wraps (``openai.InternalServerError: Error code: 500 - ...``) is in the
    traceback.
    """
    lines = [line.strip() for line in traceback.splitlines()]
    found = [line for line in lines if _ERROR_LINE_RE.match(line) and "RetryError" not in line]
    return " ".join((found[-1] if found else message).split())


def _atomic(path: Path, text: str) -> None:
    from flightdeck.files.jsonl import atomic_write

    atomic_write(path, text)
