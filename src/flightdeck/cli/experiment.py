"""`flightdeck experiment run`: run an arm as trials, with progress and a summary.

The harnesses it launches are elsewhere: the built-in ones in `experiment_agent.py` (and
the inspect agent and MCP server in `experiment_llm.py`), since each is a process of its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flightdeck.cli._options import (
    json_option,
    open_project,
    params_options,
    suite_argument,
    warn_if_unsealed,
)
from flightdeck.cli.lazy import LazyCommands
from flightdeck.errors import NegativeVerdict

if TYPE_CHECKING:
    from flightdeck.arms.runner import RunResult
    from flightdeck.arms.trial import TrialOutcome


# The `agent` and `mcp` groups live in modules of their own, imported when they run
ATTACHED = {
    "agent": "flightdeck.cli.experiment_agent:agent",
    "mcp": "flightdeck.cli.experiment_llm:mcp",
}


@click.group("experiment", commands=LazyCommands(ATTACHED))
def experiment() -> None:
    """Run arms as trials: one harness process per question, resumable.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm repo-search-passages \\
            --harness "python -m flightdeck experiment agent repo-search"
    """


@experiment.command("run")
@suite_argument
@click.option("--arm", required=True, help="Arm name: answers go to answers/<arm>.jsonl.")
@click.option(
    "--harness",
    "command",
    required=True,
    metavar="CMD",
    help="The harness command, split like a shell would (no pipes or expansion).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Trials at once [default: the number of cores].",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Kill a trial's whole process group after this long [default: no limit].",
)
@click.option("--model", default=None, help="The model behind the harness, for the meta file.")
@click.option(
    "--by",
    metavar="WHO",
    default=None,
    help="Who ran the arm, for the meta file [default: git's user.name, else your login].",
)
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "none"]),
    default=None,
    help="Run each harness in a bubblewrap sandbox, or unconfined [params: sandbox, bwrap].",
)
@click.option(
    "--network/--no-network",
    default=None,
    help="Share this machine's whole network with the sandboxed harness, loopback services "
    "included [params: harness_sandbox.<arm>.network; default: off, or a built-in model "
    "agent's endpoint alone (see --network-allow) when known, else on for it].",
)
@click.option(
    "--network-allow",
    "network_allow",
    multiple=True,
    metavar="HOST:PORT",
    help="Let the sandboxed harness reach HOST:PORT and nothing else (repeat), through "
    "flightdeck's relay; not with --network [params: harness_sandbox.<arm>.network_allow].",
)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    help="Pass environment variable NAME to the harness (repeat; e.g. an API key). A built-in "
    "model agent gets its model's variables without it.",
)
@click.option(
    "--bind",
    "bind",
    multiple=True,
    metavar="PATH",
    type=click.Path(exists=True, path_type=Path),
    help="Let the sandboxed harness read PATH (repeat) [params: harness_sandbox.<arm>.bind].",
)
@click.option(
    "--max-output-mb",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="Cap on each file a trial writes (result, log, stdout, stderr) and its out folder.",
)
@click.option(
    "--max-tmp-mb",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help="Size of the sandbox's private /tmp, $HOME and /dev/shm, each.",
)
@click.option(
    "--max-memory-mb",
    type=click.IntRange(min=1),
    default=8192,
    show_default=True,
    help="Address space cap per harness process (RLIMIT_AS).",
)
@click.option(
    "--max-processes",
    type=click.IntRange(min=1),
    default=1024,
    show_default=True,
    help="Cap on the sandbox's processes and threads (RLIMIT_NPROC; not for root).",
)
@click.option(
    "--workspace-cache-mb",
    type=click.IntRange(min=1),
    default=None,
    help="Disk cap for the run's workspaces, in MiB [default: 4096].",
)
@click.option(
    "--scratch",
    is_flag=True,
    help="A scratch run: write under .flightdeck/scratch/<suite>/, apart from the pipeline's "
    "tracked files [also for an arm params.yaml's pipeline does not name].",
)
@params_options
@json_option
@click.pass_context
def run_command(
    ctx: click.Context,
    *,
    suite: Path,
    arm: str,
    command: str,
    jobs: int | None,
    timeout: float | None,
    model: str | None,
    by: str | None,
    sandbox: str | None,
    network: bool | None,
    network_allow: tuple[str, ...],
    pass_env: tuple[str, ...],
    bind: tuple[Path, ...],
    max_output_mb: int,
    max_tmp_mb: int,
    max_memory_mb: int,
    max_processes: int,
    workspace_cache_mb: int | None,
    scratch: bool,
    params_file: Path | None,
    repo: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run an arm: each question missing from its answers is one trial of CMD.

    The harness reads the question (never its key) on stdin or in FLIGHTDECK_TASK, may read
    the read-only folder FLIGHTDECK_WORKSPACE (<repo>/<path> at the question's as_of, within
    its scope), and prints {"answer": ..., "citations": [{"uri", "sha256"}]} or writes it to
    FLIGHTDECK_RESULT. Answers are saved as trials finish, so a rerun resumes; failed trials
    are listed in runs/<suite>/<arm>.jsonl and make the exit status 1. Traces go to
    traces/<suite>/<arm>/<id>.log. The meta file records who ran the arm: --by, else git's
    user.name in the project (on CI, where neither is set, name the person or the job).

    The sandbox shows the harness only the system's runtime, its own installation, paths on
    its command line and --bind paths, all read-only, plus its workspace, its out folder and
    a private /tmp and $HOME. --network shares this machine's network (loopback services
    included); --network-allow HOST:PORT opens only those endpoints. A trial over a cap
    (--max-output-mb and the others) fails, naming the cap; a trial whose output holds a
    registered canary fails and voids the suite.

    A sealed suite whose questions or keys changed is refused; an unsealed one only gets a
    warning, since its answers cannot be scored until it is sealed.

    A scratch run (--scratch, or an arm that params.yaml's harnesses, people and arms do not
    name when it names harnesses) writes all of the above under .flightdeck/scratch/<suite>/,
    which no pipeline stage reads, so the committed pipeline stays up to date.

    The model agents read their provider's variables (LOCAL_BASE_URL and LOCAL_API_KEY for
    an OpenAI-compatible server such as vLLM or llama.cpp, as below; ANTHROPIC_API_KEY for
    --model anthropic/...), which the runner passes, opening only the model's endpoint.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm repo-search-passages \\
            --harness "python -m flightdeck experiment agent repo-search" --jobs 4 --timeout 60
        flightdeck experiment run suites/knowledge-demo-v1 --arm my-repo-search \\
            --harness "python -m flightdeck experiment agent repo-search" --by ada
        export LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none
        flightdeck experiment run suites/knowledge-demo-v1 --arm llm-local \\
            --harness "flightdeck experiment agent llm --model openai-api/local/qwen3-32b"
    """
    from flightdeck.arms.limits import Limits
    from flightdeck.arms.run_request import RunRequest

    project = open_project(params_file, repo, near=suite)
    running = project.suite(suite)
    warn_if_unsealed(running)
    request = RunRequest(
        command=command,
        jobs=jobs,
        timeout=timeout,
        model=model,
        by=by,
        sandbox=sandbox,
        network=network,
        network_allow=network_allow,
        pass_env=pass_env,
        bind=bind,
        limits=Limits(max_output_mb, max_tmp_mb, max_memory_mb, max_processes),
        workspace_cache_mb=workspace_cache_mb,
        scratch=True if scratch else None,  # else the project decides (#21)
    )
    request = running.run_request(arm, request=request)
    if request.scratch:
        click.echo(
            f"scratch run: {arm} writes under {project.paths.scratch}, apart from the "
            "pipeline (not an arm of params.yaml)",
            err=True,
        )
    progress = _Progress(quiet=as_json)
    try:
        result = running.run(arm, request=request, on_start=progress.start, on_trial=progress.trial)
    finally:
        progress.finish()
    if as_json:
        click.echo(json.dumps(_result_json(result), indent=2))
    else:
        _print_summary(result)
    if result.failed:
        raise NegativeVerdict()


class _Progress:
    """A progress bar on a terminal (stderr), one plain line per trial otherwise."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet
        self.bar: Any = None

    def start(self, pending: int, total: int) -> None:
        done = total - pending
        if done:
            click.echo(f"resuming: {done} of {total} questions already answered", err=True)
        if pending and not self.quiet and sys.stderr.isatty():
            self.bar = click.progressbar(length=pending, label="trials", file=sys.stderr)
            self.bar.__enter__()

    def trial(self, outcome: TrialOutcome) -> None:
        if self.bar is not None:
            self.bar.update(1)
        elif not self.quiet:
            status = "ok" if outcome.ok else f"failed: {_shown(outcome.reason)}"
            click.echo(f"{outcome.id}: {status} ({outcome.seconds:.2f} s)", err=True)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _result_json(result: RunResult) -> dict[str, Any]:
    return {
        "suite": result.suite,
        "arm": result.arm,
        "questions": result.total,
        "answered": result.answered,
        "already_answered": result.already_answered,
        "ran": len(result.outcomes),
        "failed": [
            {"id": o.id, "reason": o.reason, "trace": o.trace.as_posix()} for o in result.failed
        ],
        "answers": result.answers_path.as_posix(),
        "meta": result.meta_path.as_posix(),
        "runs": result.runs_path.as_posix(),
        "repaired": result.repaired,
        "sandbox": result.sandbox,
        "left_out": result.omissions,
        "workspace_peak_bytes": result.workspace_peak_bytes,
        "usage": {o.id: o.usage for o in result.outcomes if o.usage is not None},
    }


def _print_summary(result: RunResult) -> None:
    if result.repaired:
        click.echo(f"{result.answers_path}: {result.repaired}")
    ran = len(result.outcomes)
    ok = ran - len(result.failed)
    click.echo(
        f"{result.suite} / {result.arm}: {result.answered} of {result.total} questions answered "
        f"({ok} of {ran} trials this run succeeded, {result.already_answered} answered before)"
    )
    click.echo(f"answers: {result.answers_path}")
    if result.sandbox.get("mode") == "none":
        click.echo("sandbox: none (the arm ran without a sandbox)")
    if result.omissions:
        counts = ", ".join(f"{n} {why}" for why, n in result.omissions.items())
        click.echo(
            f"workspaces left out {sum(result.omissions.values())} files ({counts}); "
            "each trial's trace lists them"
        )
    _print_usage(result.outcomes)
    if result.failed:
        click.echo(f"{len(result.failed)} failed (recorded in {result.runs_path}):")
        for outcome in result.failed:
            reason = _shown(outcome.reason)
            click.echo(f"  {_shown(outcome.id)}: {reason} [trace: {outcome.trace.as_posix()}]")
        click.echo("Rerun the same command to retry only the failed and missing questions.")


def _shown(text: str | None) -> str:
    """Harness-made text for the terminal: control characters escaped, so none acts there."""
    from flightdeck.arms.limits import escape_control

    return escape_control(text or "")


def _print_usage(outcomes: tuple[TrialOutcome, ...]) -> None:
    """Tokens per question, for the trials whose harness reported them (protocol ``usage``)."""
    reported = [o for o in outcomes if o.usage is not None]
    if not reported:
        return
    click.echo("tokens per question (input, of them cached, output):")
    totals = [0, 0, 0]
    for outcome in reported:
        assert outcome.usage is not None
        counts = [
            outcome.usage.get(k, 0) for k in ("input_tokens", "cached_tokens", "output_tokens")
        ]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        click.echo(f"  {outcome.id}: {counts[0]:,} in, {counts[1]:,} cached, {counts[2]:,} out")
    click.echo(f"  total: {totals[0]:,} in, {totals[1]:,} cached, {totals[2]:,} out")
