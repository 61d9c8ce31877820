"""`flightdeck experiment agent llm` and `flightdeck experiment mcp repo-search`.

The two commands that need the ``llm`` extra (inspect_ai, mcp), apart from the other
harnesses; they import it inside their bodies, so without it only they fail, and say why.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import click

from flightdeck.cli._options import question_option, workspace_option
from flightdeck.errors import AgentError, InputError


@click.command("llm")
@click.option(
    "--model",
    required=True,
    help="An inspect model name: anthropic/..., openai/..., openai-api/<service>/<model>.",
)
@workspace_option
@question_option
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Model generations per question (inspect's turn limit).",
)
@click.option("--temperature", type=click.FloatRange(min=0), default=None, help="Sampling.")
@click.option(
    "--max-tokens", type=click.IntRange(min=1), default=None, help="Tokens per generation."
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="inspect's retries of a failed call, with backoff (rate limits, timeouts); a server "
    "that is down fails after about two minutes instead of retrying for ever.",
)
@click.option(
    "--token-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Tokens per question, all generations (inspect's token limit).",
)
@click.option(
    "--system-prompt",
    "prompt_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Replace the built-in system prompt with this file's text.",
)
@click.option(
    "--mcp",
    "mcp_commands",
    multiple=True,
    metavar="CMD",
    help="A stdio MCP server whose tools join read and grep (repeatable).",
)
@click.option(
    "--snapshot",
    "snapshot_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The retrieval index's manifest, recorded as the arm's knowledge_snapshot.",
)
@click.option(
    "--no-batch",
    is_flag=True,
    help="experiment run starts a process per question instead of one per batch (slower).",
)
def llm_command(
    *,
    model: str,
    workspace: Path,
    question: str | None,
    max_steps: int,
    temperature: float | None,
    max_tokens: int | None,
    max_retries: int,
    token_limit: int | None,
    prompt_file: Path | None,
    mcp_commands: tuple[str, ...],
    snapshot_file: Path | None,
    no_batch: bool,
) -> None:
    """Answer one question with an inspect_ai ReAct agent that has only grep, read and list.

    The harness protocol's LLM baseline: the model searches the workspace with grep(pattern,
    glob), read(path, start, end) and list(glob), and answers with submit(answer, citations);
    citation hashes come from the workspace's bytes. With --mcp, a pinned retrieval server's
    tools join them (the candidate arm). Prints the result JSON (with the tokens used and
    the arm's provenance) and writes the inspect log, keys redacted, to FLIGHTDECK_TRACE.
    Credentials come from the model's environment variables, e.g. LOCAL_BASE_URL and
    LOCAL_API_KEY for openai-api/local/<model> (experiment run passes them into the sandbox
    and opens the network, read off --model); --model mockllm/model is an offline dry run.

    \b
    Example:
        export LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none
        flightdeck experiment run suites/knowledge-demo-v1 --arm llm-grep \\
            --harness "flightdeck experiment agent llm --model openai-api/local/qwen3-32b"
        flightdeck experiment agent llm --model openai-api/local/qwen3-32b \\
            --workspace demo/projects-attachments --question "Who owns the gateway?" \\
            --mcp "flightdeck experiment mcp repo-search"
    """
    from flightdeck.arms.agents.llm import (
        SYSTEM_PROMPT,
        AgentOptions,
        load_snapshot,
        parse_mcp_commands,
        run_agent,
    )
    from flightdeck.arms.batch_trial import ENV_BATCH
    from flightdeck.arms.protocol import ENV_RESULT, ENV_TRACE, read_task
    from flightdeck.files.jsonl import atomic_write
    from flightdeck.models import (
        ModelSettings,
        check_model_name,
        inspect_version,
        model_failure,
        redact,
    )

    started = time.monotonic()
    startup = _process_age()
    inspect_version()
    check_model_name(model)
    prompt = SYSTEM_PROMPT
    if prompt_file is not None:
        prompt = prompt_file.read_text(encoding="utf-8")
        if not prompt.strip():
            raise InputError(prompt_file, None, "the system prompt is empty; write one")
    options = AgentOptions(
        settings=ModelSettings(
            model, temperature=temperature, max_tokens=max_tokens, max_retries=max_retries
        ),
        max_steps=max_steps,
        token_limit=token_limit,
        system_prompt=prompt,
        prompt_file=prompt_file.name if prompt_file is not None else None,
        mcp=parse_mcp_commands(mcp_commands),
        snapshot=load_snapshot(snapshot_file) if snapshot_file is not None else None,
    )
    batch_file = os.environ.get(ENV_BATCH)  # many questions, one eval (arms/batch_trial.py)
    if batch_file and question is None and not no_batch:
        from flightdeck.arms.agents.llm_batch import run_batch

        _private_inspect_dirs(Path(tempfile.mkdtemp(prefix="inspect-")))
        run_batch(options, Path(batch_file), started, startup)
        return
    task = {"question": question} if question is not None else read_task()
    result_path, trace_path = os.environ.get(ENV_RESULT), os.environ.get(ENV_TRACE)
    scratch = Path(result_path).parent if result_path else None
    if scratch is not None:
        _private_inspect_dirs(scratch)
    try:
        run = run_agent(options, workspace, task, scratch=scratch)
    except AgentError as exc:
        _write_trace(trace_path, [f"agent failed: {exc}"], exc.log_json)
        raise model_failure(model, str(exc)) from None
    notes = [f"read {path}" for path in run.read_paths]
    notes += [f"cite {uri} sha256={sha}" for uri, sha in run.citations]
    if run.stopped:
        notes.append(f"stopped without submitting: {run.stopped}")
    usage = run.usage
    notes.append(f"tokens: {usage.input_tokens} in, {usage.output_tokens} out")
    writing = time.monotonic()
    output = redact(json.dumps(run.result(), ensure_ascii=False, sort_keys=True))
    if result_path:
        atomic_write(Path(result_path), output + "\n")
    timing = {**run.timing, "command_seconds": round(writing - started, 3)}
    if startup is not None:
        timing["startup_seconds"] = startup
    timing["write_seconds"] = round(time.monotonic() - writing, 3)
    notes.append("timing: " + json.dumps(timing, sort_keys=True))
    _write_trace(trace_path, notes, run.log_json)
    click.echo(output)


def _process_age() -> float | None:
    """Seconds since this process started (interpreter and imports), from Linux's /proc."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    return round(max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")), 3)


def _private_inspect_dirs(scratch: Path) -> None:
    """inspect keeps its data and cache under the XDG folders: put them in the trial's scratch.

    A sandboxed trial needs nothing writable but it, and nothing outlives the trial.
    """
    os.environ["XDG_DATA_HOME"] = str(scratch / "xdg-data")
    os.environ["XDG_CACHE_HOME"] = str(scratch / "xdg-cache")


def _write_trace(path: str | None, notes: list[str], log_json: str) -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as trace:
        trace.write("".join(f"{note}\n" for note in notes))
        trace.write("==> inspect log (JSON) <==\n")
        trace.write(log_json.rstrip("\n") + "\n")


@click.group("mcp")
def mcp() -> None:
    """Reference MCP servers, to pin with `experiment agent llm --mcp`.

    \b
    Example:
        export LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none
        flightdeck experiment agent llm --model openai-api/local/qwen3-32b \\
            --workspace demo/projects-attachments --question "How do we deploy?" \\
            --mcp "flightdeck experiment mcp repo-search"
    """


@mcp.command("repo-search")
@workspace_option
def mcp_repo_search_command(workspace: Path) -> None:
    """Serve the built-in repo-search over the workspace as a stdio MCP server.

    One tool, search(query), answers with the best-matching passages and their uris; the
    resource knowledge_snapshot says what the index holds (file count, digest), which the
    agent records in the arm's meta. Offline: the retrieval arm runs end to end without a
    real retrieval service.

    \b
    Example:
        export LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none
        flightdeck experiment run suites/knowledge-demo-v1 --arm llm-retrieval --harness \\
            "flightdeck experiment agent llm --model openai-api/local/qwen3-32b \\
             --mcp 'flightdeck experiment mcp repo-search'"
    """
    from flightdeck.arms.agents.mcp import serve
    from flightdeck.models import inspect_version

    inspect_version()
    serve(workspace)
