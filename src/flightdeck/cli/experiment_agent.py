"""`flightdeck experiment agent …`: the built-in harnesses, each one trial's process.

`experiment run` launches them like any team's harness: they read the task, print the result
JSON (also to FLIGHTDECK_RESULT) and log to FLIGHTDECK_TRACE, so they are commands, not calls.
The inspect_ai agent (`agent llm`) lives in `experiment_llm.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from flightdeck.cli._options import question_option, workspace_option
from flightdeck.errors import ContextTooLarge, InputError, ModelFailed


@click.group("agent")
def agent() -> None:
    """Built-in harnesses, to pass as `experiment run --harness`.

    \b
    Example:
        flightdeck experiment run suites/knowledge-demo-v1 --arm repo-search-passages \\
            --harness "python -m flightdeck experiment agent repo-search"
    """


@agent.command("repo-search")
@workspace_option
@question_option
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
    from flightdeck.arms.protocol import ENV_RESULT, ENV_TRACE, read_task
    from flightdeck.files.jsonl import atomic_write

    task = {"question": question} if question is not None else read_task()
    text, kind = task["question"], task.get("kind")  # the kind steers the whole-passage mode
    trace_path = os.environ.get(ENV_TRACE)
    if trace_path:
        with open(trace_path, "a", encoding="utf-8") as trace:
            result = search(workspace, text, trace=trace, passages=passages, kind=kind)
    else:
        result = search(workspace, text, passages=passages, kind=kind)
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
        export LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none
        flightdeck experiment run suites/knowledge-demo-v1 --arm baseline-projects-api \\
            --harness "flightdeck experiment agent attached --model openai-api/local/qwen3-32b \\
                --context-window 32768 --attach demo/projects-attachments"
    """
    from flightdeck.arms.agents.attached import answer, load_attachments
    from flightdeck.arms.protocol import ENV_RESULT, ENV_TRACE, read_task
    from flightdeck.files.jsonl import atomic_write
    from flightdeck.models import model_failure

    task = read_task()
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
        except ModelFailed as exc:  # a wrong key, model or server: exit 2, as agent llm
            trace.write(f"model call failed: {exc}\n")
            raise model_failure(model, str(exc)) from None
        except ContextTooLarge as exc:
            trace.write(f"refused: {exc}\n")
            raise InputError(folder, None, str(exc)) from None
    output = json.dumps(result, ensure_ascii=False)
    if os.environ.get(ENV_RESULT):
        atomic_write(Path(os.environ[ENV_RESULT]), output + "\n")
    click.echo(output)


def _add_llm_command() -> None:
    """The inspect_ai agent, whose module keeps its heavy imports inside the command."""
    from flightdeck.cli.experiment_llm import llm_command

    agent.add_command(llm_command)


_add_llm_command()
