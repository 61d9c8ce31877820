"""The dry run: ``--model mockllm/model`` answers without a model, offline, in seconds.

A team checks its pipeline (sandbox, workspaces, tools, citations, traces, meta, scoring
inputs) before it pays for a model. ``mockllm/model`` is inspect_ai's own mock provider, so
the dry run goes through the same inspect calls as a real model (``get_model``, ``eval`` and
the ReAct loop, ``generate``); flightdeck only scripts what it says:

- :func:`agent_outputs`, for ``agent llm``: grep the question's longest word, read the lines
  around the first hit, submit them citing that span (no hit: submit that nothing matched),
  so every tool and the citation hashing run;
- :func:`attached_outputs`, for ``agent attached``: the first lines of the attached document
  that shares the most words with the question, with it under ``Sources:``.

Every output carries its token usage (none: no model ran). That is what keeps the dry run
offline: given an output without usage, inspect's mockllm counts the prompt's tokens with
tiktoken's ``o200k_base``, whose file tiktoken downloads on first use (``MockLLM.
_ensure_default_usage`` -> ``ModelAPI.count_tokens`` -> ``inspect_ai.model._tokens.
count_text_tokens`` -> ``tiktoken.get_encoding``), which in a sandbox without network retries
for seconds and fails. Answers start with :data:`MARK`; the arm's meta says ``dry_run: true``
and ``knowledge score`` refuses the arm unless ``--allow-dry-run``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from flightdeck.models.provider_env import DRY_RUN_PROVIDER

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
    from inspect_ai.tool import ToolChoice, ToolInfo

MARK = "Dry run ({model}; no model was called):"
_STOP = {"what", "which", "when", "does", "did", "the", "who", "how", "why", "and", "for"}
_HIT_RE = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): ", re.MULTILINE)
_NUMBERED_RE = re.compile(r"^(\d+): ?(.*)$")
_EXCERPT_LINES = 4

Outputs = Callable[
    ["list[ChatMessage]", "list[ToolInfo]", "ToolChoice", "GenerateConfig"], "ModelOutput"
]


def is_dry_run(model: str) -> bool:
    """Whether ``model`` names the dry-run provider (``mockllm/...``)."""
    return model.split("/")[0] == DRY_RUN_PROVIDER


def question_words(question: str) -> list[str]:
    """The question's words that say something (longest first, then in order)."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+", question) if w.lower() not in _STOP]
    return sorted(dict.fromkeys(words), key=lambda w: -len(w))


def _output(model: str, tool: str | None, arguments: dict[str, Any], text: str) -> ModelOutput:
    from inspect_ai.model import ModelOutput, ModelUsage

    if tool is None:
        output = ModelOutput.from_content(model=model, content=text)
    else:
        output = ModelOutput.for_tool_call(model, tool, arguments, content="")
    output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
    return output


def _question(messages: Sequence[ChatMessage]) -> str:
    for message in messages:
        if message.role == "user":
            return message.text.split("\n")[0].removeprefix("Question: ")
    return ""


def _last_call(messages: Sequence[ChatMessage]) -> tuple[str | None, str, dict[str, Any], bool]:
    """The last tool result: its tool, its text, the call's arguments, whether it failed."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    last = messages[-1] if messages else None
    if not isinstance(last, ChatMessageTool):
        return None, "", {}, False
    arguments: dict[str, Any] = {}
    for message in reversed(messages):
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                if call.id == last.tool_call_id:
                    arguments = dict(call.arguments)
            break
    return last.function, last.text, arguments, last.error is not None


def agent_outputs(model: str) -> Outputs:
    """The dry run's script for the ReAct agent: grep, read, submit."""
    mark = MARK.format(model=model)

    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, _: GenerateConfig
    ) -> ModelOutput:
        question = _question(messages)
        tool, text, arguments, failed = _last_call(messages)
        words = question_words(question)
        if tool is None and words:
            return _output(model, "grep", {"pattern": re.escape(words[0])}, "")
        if tool == "grep" and not failed and (hit := _HIT_RE.search(text)) is not None:
            line = int(hit["line"])
            where = {"path": hit["path"], "start": max(1, line - 1), "end": line + 2}
            return _output(model, "read", where, "")
        if tool == "read" and not failed:
            rows = [m for m in map(_NUMBERED_RE.match, text.splitlines()) if m]
            if rows:
                excerpt = " ".join(m[2].strip() for m in rows if m[2].strip())
                span = f"{arguments['path']}#L{rows[0][1]}-L{rows[-1][1]}"
                return _submit(model, f"{mark} {excerpt}", [span])
        found = f"nothing in the workspace matches {words[0]!r}" if words else "no question"
        return _submit(model, f"{mark} {found}.", [])

    return respond


def _submit(model: str, answer: str, citations: list[str]) -> ModelOutput:
    return _output(model, "submit", {"answer": answer, "citations": citations}, "")


def attached_outputs(model: str, documents: Sequence[tuple[str, str]]) -> Outputs:
    """The dry run's script for the attached arm: the best-matching document's first lines."""
    mark = MARK.format(model=model)

    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, _: GenerateConfig
    ) -> ModelOutput:
        words = {w.lower() for w in question_words(_question_of_attached(messages))}

        def shared(document: tuple[str, str]) -> int:
            found = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", document[1])}
            return len(words & found)

        name, text = max(documents, key=shared)  # the first of the best, in name order
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        excerpt = " ".join(lines[:_EXCERPT_LINES]) or "(empty)"
        return _output(model, None, {}, f"{mark} {excerpt}\n\nSources:\n- {name}")

    return respond


def _question_of_attached(messages: Sequence[ChatMessage]) -> str:
    """The question: the last text part of the user message (the documents come first)."""
    for message in messages:
        if message.role == "user":
            lines = message.text.strip().splitlines()
            return lines[-1].removeprefix("Question: ") if lines else ""
    return ""
