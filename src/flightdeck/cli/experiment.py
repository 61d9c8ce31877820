"""`flightdeck experiment`: run an arm as trials, and the built-in repo-search harness."""

from __future__ import annotations

import json
import os
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
from flightdeck.errors import InputError

if TYPE_CHECKING:
    from flightdeck.arms.runner import RunResult
    from flightdeck.arms.trial import TrialOutcome


@click.group("experiment")
def experiment() -> None:
    """Run arms as trials: one harness process per question, resumable.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm baseline-repo-search \\
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
    help="Let the sandboxed harness reach the network [params: harness_sandbox.<arm>.network].",
)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    help="Pass environment variable NAME to the harness (repeat; e.g. an API key).",
)
@click.option(
    "--workspace-cache-mb",
    type=click.IntRange(min=1),
    default=None,
    help="Disk cap for the run's workspaces, in MiB [default: 4096].",
)
@params_options
@json_option
@click.pass_context
def run_command(
    ctx: click.Context,
    suite: Path,
    arm: str,
    command: str,
    jobs: int | None,
    timeout: float | None,
    model: str | None,
    by: str | None,
    sandbox: str | None,
    network: bool | None,
    pass_env: tuple[str, ...],
    workspace_cache_mb: int | None,
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

    A sealed suite whose questions or keys changed is refused; an unsealed one only gets a
    warning, since its answers cannot be scored until it is sealed.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm baseline-repo-search \\
            --harness "python -m flightdeck experiment agent repo-search" --jobs 4 --timeout 60
        flightdeck experiment run suites/knowledge-demo-v1 --arm baseline-repo-search \\
            --harness "python -m flightdeck experiment agent repo-search" --by ada
        flightdeck experiment run suites/knowledge-demo-v1 --arm llm-claude \\
            --harness "python examples/llm_harness.py" --network --pass-env ANTHROPIC_API_KEY
    """
    from flightdeck.arms.runner import RunConfig, run_experiment
    from flightdeck.arms.workspace import DEFAULT_CAP_MB

    project = open_project(params_file, repo, near=suite)
    warn_if_unsealed(suite)
    params = project.params
    arm_sandbox = params.harness_sandbox.get(arm, {})
    config = RunConfig(
        suite_dir=suite,
        arm=arm,
        command=command,
        root=project.root,
        repos=project.params.repos,
        jobs=jobs or os.cpu_count() or 1,
        timeout=timeout,
        model=model,
        by=by,
        sandbox=sandbox or arm_sandbox.get("sandbox") or params.sandbox,
        network=network if network is not None else bool(arm_sandbox.get("network", False)),
        pass_env=tuple(arm_sandbox.get("pass_env", ())) + pass_env,
        holdouts=params.holdouts,
        workspace_cache_mb=workspace_cache_mb or DEFAULT_CAP_MB,
    )
    progress = _Progress(quiet=as_json)
    try:
        result = run_experiment(config, on_start=progress.start, on_trial=progress.trial)
    finally:
        progress.finish()
    if as_json:
        click.echo(json.dumps(_result_json(result), indent=2))
    else:
        _print_summary(result)
    if result.failed:
        ctx.exit(1)


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
            status = "ok" if outcome.ok else f"failed: {outcome.reason}"
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
            click.echo(f"  {outcome.id}: {outcome.reason} [trace: {outcome.trace.as_posix()}]")
        click.echo("Rerun the same command to retry only the failed and missing questions.")


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


@experiment.group("agent")
def agent() -> None:
    """Built-in harnesses, to pass as `experiment run --harness`.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm baseline-repo-search \\
            --harness "python -m flightdeck experiment agent repo-search"
    """


@agent.command("repo-search")
@click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    envvar="FLIGHTDECK_WORKSPACE",
    required=True,
    help="Folder of <repo>/<path> files to search [env: FLIGHTDECK_WORKSPACE].",
)
@click.option(
    "--question",
    default=None,
    help="Ask this instead of reading the task from FLIGHTDECK_TASK or stdin.",
)
@click.option(
    "--passages",
    type=click.Choice(["section", "window"]),
    default="section",
    show_default=True,
    help="Whole sections, blocks and paragraphs; or the first version's 20-line windows.",
)
def repo_search_command(workspace: Path, question: str | None, passages: str) -> None:
    """Answer one question by BM25 over the workspace's passages; cite what it read.

    Offline and deterministic: reads the task (the question record) from FLIGHTDECK_TASK or
    stdin, ranks the passages of every text file (markdown sections, YAML entries,
    paragraphs), answers with the best ones whole and cites their files with line spans and
    the SHA-256 of the bytes read. Prints the result JSON (and writes it to FLIGHTDECK_RESULT
    when set); logs what it read to FLIGHTDECK_TRACE. --passages window reproduces the first
    version's answers (20-line windows quoted as 12-line excerpts).

    \b
    Example:
        flightdeck experiment agent repo-search --workspace ws/ --question "Who owns docs?"
    """
    from flightdeck.arms.agents.repo_search import search
    from flightdeck.arms.protocol import ENV_RESULT, ENV_TRACE
    from flightdeck.jsonl import atomic_write

    text = question if question is not None else _read_task()["question"]
    trace_path = os.environ.get(ENV_TRACE)
    if trace_path:
        with open(trace_path, "a", encoding="utf-8") as trace:
            result = search(workspace, text, trace=trace, passages=passages)
    else:
        result = search(workspace, text, passages=passages)
    output = json.dumps(result.to_json(), ensure_ascii=False)
    if os.environ.get(ENV_RESULT):
        atomic_write(Path(os.environ[ENV_RESULT]), output + "\n")
    click.echo(output)


@agent.command("attached")
@click.option(
    "--model",
    required=True,
    help="An inspect_ai model, e.g. anthropic/claude-sonnet-4-5 or openai-api/SERVICE/MODEL.",
)
@click.option(
    "--attach",
    "folder",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    metavar="DIR",
    help="The attached documents, laid out as <repo>/<path> (as import-answers --snapshot).",
)
@click.option(
    "--context-window",
    type=click.IntRange(min=1),
    default=None,
    metavar="TOKENS",
    help="The model's context window [default: inspect's model database].",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=2048,
    show_default=True,
    help="The answer's budget; the prompt must leave room for it.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="inspect's retries of a failed call (rate limits, timeouts).",
)
def attached_command(
    model: str, folder: Path, context_window: int | None, max_tokens: int, max_retries: int
) -> None:
    """Answer one question with the documents of DIR in the model's context; no tools.

    The chat-product baseline ("a project with the documents attached") through the API: one
    model call per question (inspect_ai), with every text file of DIR under its name, then the
    question. The answer's "Sources:" names are cited as <repo>/<path> and hashed from the
    attached bytes, so an attachment older than as_of scores stale. Before the call the
    prompt's tokens are counted (the provider's count where inspect has one, else a stated
    estimate) and a prompt that does not fit the context window is refused (exit 2). Reads
    the task from FLIGHTDECK_TASK or stdin; prints the result JSON (also to FLIGHTDECK_RESULT)
    with the tokens used and the arm's provenance; logs to FLIGHTDECK_TRACE.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm baseline-projects-api \\
            --harness "flightdeck experiment agent attached \\
                --model anthropic/claude-sonnet-4-5 --attach demo/projects-attachments"
    """
    from flightdeck.arms.agents.attached import answer, load_attachments
    from flightdeck.arms.agents.inspect_call import ContextTooLarge, ModelFailed
    from flightdeck.arms.protocol import ENV_RESULT, ENV_TRACE
    from flightdeck.jsonl import atomic_write

    task = _read_task()
    attachments = load_attachments(folder)
    trace_path = os.environ.get(ENV_TRACE)
    with open(trace_path or os.devnull, "a", encoding="utf-8") as trace:
        try:
            result = answer(
                task,
                attachments,
                model,
                max_tokens=max_tokens,
                context_window=context_window,
                max_retries=max_retries,
                trace=trace,
            )
        except ModelFailed as exc:  # the provider's fault, not the input's: exit 1, one line
            trace.write(f"model call failed: {exc}\n")
            click.echo(f"error: the model call failed: {exc}", err=True)
            sys.exit(1)
        except ContextTooLarge as exc:
            trace.write(f"refused: {exc}\n")
            raise InputError(folder, None, str(exc)) from None
    output = json.dumps(result, ensure_ascii=False)
    if os.environ.get(ENV_RESULT):
        atomic_write(Path(os.environ[ENV_RESULT]), output + "\n")
    click.echo(output)


def _read_task() -> dict[str, Any]:
    """The task (the question record) from FLIGHTDECK_TASK, else from its JSON on stdin."""
    from flightdeck.arms.protocol import ENV_TASK

    source = ENV_TASK
    raw = os.environ.get(ENV_TASK)
    if raw is None:
        source = "<stdin>"
        stdin = sys.stdin
        if stdin.isatty():
            raise InputError(
                source, None, "no task; pipe the question record in, or pass --question"
            )
        raw = stdin.read()
    try:
        task = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, None, f"the task is not JSON ({exc.msg}); pass the question record as JSON"
        ) from None
    if not isinstance(task, dict) or not isinstance(task.get("question"), str):
        raise InputError(source, None, 'the task needs a "question" string; pass the record')
    as_of = task.setdefault("as_of", {})
    if not isinstance(as_of, dict):
        raise InputError(source, None, 'the task\'s "as_of" must map repositories to commits')
    return task


def _add_llm_commands() -> None:
    """The inspect_ai agent and the reference MCP server (their imports stay lazy)."""
    from flightdeck.cli.experiment_llm import llm_command, mcp

    agent.add_command(llm_command)
    experiment.add_command(mcp)


_add_llm_commands()
