"""The attached arm in process: what the model is given, how its sources map, the budget.

The model is inspect_ai's ``mockllm`` with scripted outputs that carry their usage (mockllm
would otherwise count tokens with a tokenizer downloaded at run time).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import (
    ChatMessage,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.model._providers.mockllm import MockLLM

from flightdeck.arms.agents import inspect_call
from flightdeck.arms.agents.attached import (
    PROMPT_SHA256,
    QUESTION_TEMPLATE,
    SYSTEM_PROMPT,
    answer,
    load_attachments,
    map_citations,
    parse_reply,
)
from flightdeck.arms.agents.inspect_call import ESTIMATE, ContextTooLarge, ModelFailed
from flightdeck.arms.snapshot import EMPTY_SHA256, folder_hash
from flightdeck.errors import FlightdeckError, InputError
from flightdeck.suite.records import CANARY_PREFIX

AS_OF = {"sdlc": "a" * 40}
TASK = {"id": "q1", "question": "Why Postgres?", "kind": "decision-why", "as_of": AS_OF}
ADR = "# ADR 1\n\nPostgres, for JSONB.\n"


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def folder(root: Path, files: dict[str, str | bytes]) -> Path:
    top = root / "att"
    for name, content in files.items():
        path = top / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return top


class Scripted:
    """mockllm outputs that record what each call was given."""

    def __init__(self, text: str, usage: ModelUsage | None = None, stop: str = "stop") -> None:
        self.text, self.stop = text, stop
        self.usage = usage or ModelUsage(input_tokens=40, output_tokens=7, total_tokens=47)
        self.calls: list[tuple[list[ChatMessage], GenerateConfig]] = []

    def __call__(self, messages: list[ChatMessage], tools: Any, choice: Any, config: Any) -> Any:
        self.calls.append((messages, config))
        output = ModelOutput.from_content("mockllm", self.text, stop_reason=self.stop)  # type: ignore[arg-type]
        output.usage = self.usage
        return output

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


# --- the reply's sources ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Postgres.\n\nSources:\n- sdlc/a.md\n- sdlc/b.md#L2-L4", ["sdlc/a.md", "sdlc/b.md#L2-L4"]),
        (
            "Postgres.\nSources: sdlc/a.md, sdlc/b.md; sdlc/c.md",
            ["sdlc/a.md", "sdlc/b.md", "sdlc/c.md"],
        ),
        (
            "Postgres.\n\n**Sources:**\n1. `sdlc/a.md` (the ADR)\n2. <sdlc/b.md>",
            ["sdlc/a.md", "sdlc/b.md"],
        ),
        ("No document says.\nSources: none", []),
        ("Just an answer.", []),
        ("Sources: x\n\nPostgres.\nSources:\n- sdlc/a.md\n- sdlc/a.md", ["sdlc/a.md"]),
    ],
)
def test_the_sources_are_the_names_after_the_last_sources_line(
    reply: str, expected: list[str]
) -> None:
    text, names = parse_reply(reply)
    assert names == expected
    assert "Sources" not in text or reply.startswith("Sources: x")


def test_the_answer_is_the_text_before_the_sources() -> None:
    assert (
        parse_reply("Postgres,\nfor JSONB.\n\nSources:\n- sdlc/a.md")[0] == "Postgres,\nfor JSONB."
    )
    assert parse_reply("Just an answer.\n")[0] == "Just an answer."


# --- the attachment folder ----------------------------------------------------------------


def test_only_text_without_a_canary_goes_into_the_context(tmp_path: Path) -> None:
    top = folder(
        tmp_path,
        {
            "sdlc/docs/adr.md": ADR,
            "sdlc/logo.png": b"\x89PNG\r\n\x1a\n\0\0",
            "sdlc/latin1.txt": "caf\xe9".encode("latin-1"),
            "sdlc/keys.jsonl": f'{{"canary": "{CANARY_PREFIX}{"0" * 32}"}}\n',
        },
    )
    attachments = load_attachments(top)
    assert [d.name for d in attachments.documents] == ["sdlc/docs/adr.md"]
    assert attachments.left_out == (
        "sdlc/keys.jsonl: holds a sealed-key canary",
        "sdlc/latin1.txt: not UTF-8",
        "sdlc/logo.png: binary",
    )
    # the folder's provenance covers every file, as import-answers --snapshot records it
    assert attachments.snapshot == {
        "folder": top.as_posix(),
        "sha256": folder_hash(top)[0],
        "files": 4,
    }


def test_a_folder_without_text_or_missing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no text file to attach"):
        load_attachments(folder(tmp_path, {"sdlc/logo.png": b"\0\1"}))
    with pytest.raises(InputError, match="attachment folder not found"):
        load_attachments(tmp_path / "nowhere")


# --- citations, hashed from the attached bytes --------------------------------------------


def test_citations_are_hashed_from_the_attachments_not_from_as_of(tmp_path: Path) -> None:
    exported_later = "# ADR 1 (superseded)\n\nNow SQLite.\n"
    top = folder(tmp_path, {"sdlc/docs/adr.md": exported_later, "other/notes.md": "notes\n"})
    citations, notes = map_citations(
        ["sdlc/docs/adr.md#L1-L2", "other/notes.md", "sdlc/imagined.md", "sdlc/docs/adr.md#L5-L2"],
        load_attachments(top),
        AS_OF,
    )
    assert citations == [
        ("sdlc/docs/adr.md#L1-L2", sha(exported_later)),  # scores stale: as_of had ADR
        ("attachment:other/notes.md", sha("notes\n")),  # outside as_of: scores fabricated
        ("sdlc/imagined.md", EMPTY_SHA256),  # not attached: as import-answers records it
        ("sdlc/docs/adr.md", sha(exported_later)),  # a backwards span is dropped
    ]
    assert notes == [
        "other/notes.md: outside the question's as_of (sdlc); cited as attachment:other/notes.md",
        "sdlc/imagined.md: not attached; recorded with the sha256 of no bytes",
    ]


def test_a_name_that_climbs_out_of_the_folder_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("secret\n")
    top = folder(tmp_path, {"sdlc/a.md": "a\n"})
    citations, _ = map_citations(
        ["sdlc/../../secret.md", "../secret.md"], load_attachments(top), AS_OF
    )
    assert citations == [
        ("attachment:sdlc/../../secret.md", EMPTY_SHA256),
        ("attachment:../secret.md", EMPTY_SHA256),
    ]


# --- one call with the documents in its context -------------------------------------------


def test_the_model_gets_every_document_by_name_then_the_question(tmp_path: Path) -> None:
    top = folder(tmp_path, {"sdlc/docs/adr.md": ADR, "sdlc/CODEOWNERS": "docs/ @ada\n"})
    script = Scripted(
        "Postgres, for JSONB.\n\nSources:\n- sdlc/docs/adr.md",
        ModelUsage(input_tokens=12, output_tokens=7, total_tokens=119, input_tokens_cache_read=100),
    )
    result = answer(
        TASK, load_attachments(top), script.model(), max_tokens=64, context_window=10_000
    )

    assert len(script.calls) == 1
    messages, config = script.calls[0]
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].text == SYSTEM_PROMPT
    documents, question = messages[1].content
    assert isinstance(documents, ContentText)
    assert isinstance(question, ContentText)
    assert documents.text == (
        '<document name="sdlc/CODEOWNERS">\ndocs/ @ada\n</document>\n\n'
        f'<document name="sdlc/docs/adr.md">\n{ADR}</document>'
    )
    assert documents.cache_breakpoint is True  # the shared prefix is what gets cached
    assert question.text == QUESTION_TEMPLATE.format(question="Why Postgres?")
    assert config.cache_prompt is True
    assert config.max_tokens == 64

    assert result["answer"] == "Postgres, for JSONB."
    assert result["citations"] == [{"uri": "sdlc/docs/adr.md", "sha256": sha(ADR)}]
    prompt_bytes = [len(t.encode()) for t in (SYSTEM_PROMPT, documents.text, question.text)]
    assert result["usage"] == {
        "input_tokens": 112,  # inspect's input_tokens leave out the cached ones: added back
        "cached_tokens": 100,
        "cache_write_tokens": 0,
        "output_tokens": 7,
        "counted_input_tokens": sum(math.ceil(n / 3) for n in prompt_bytes),
    }
    assert result["provenance"] == {
        "harness": "flightdeck experiment agent attached",
        "model": "mockllm/model",
        "knowledge_snapshot": {"folder": top.as_posix(), "sha256": folder_hash(top)[0], "files": 2},
        "documents_in_context": 2,
        "left_out": [],
        "prompt_sha256": PROMPT_SHA256,
        "token_count": ESTIMATE,
        "max_tokens": 64,
        "dry_run": True,  # mockllm: no model answered, whoever scripted it
    }
    assert sha(SYSTEM_PROMPT + "\n\n" + QUESTION_TEMPLATE) == PROMPT_SHA256


def test_a_folder_too_large_for_the_window_is_refused_before_any_call(tmp_path: Path) -> None:
    top = folder(tmp_path, {"sdlc/big.md": "word " * 3000})
    script = Scripted("unused")
    with pytest.raises(ContextTooLarge) as refused:
        answer(TASK, load_attachments(top), script.model(), max_tokens=500, context_window=5000)
    assert script.calls == []
    message = str(refused.value)
    tokens = int(message.split("does not fit: ")[1].split(" prompt tokens")[0].replace(",", ""))
    assert tokens > 5000 - 500
    assert tokens >= math.ceil(15000 / 3)
    assert " prompt tokens + 500 for the answer exceed 5,000, the context window of " in message
    assert "mockllm/model (--context-window); tokens counted by estimate: " in message


def test_the_answer_budget_counts_against_the_window() -> None:
    reply = inspect_call.ask(
        Scripted("ok").model(), "s", "d", "q", max_tokens=97, context_window=100
    )
    assert reply.count.tokens == 3
    assert reply.count.fits()
    with pytest.raises(ContextTooLarge):
        inspect_call.ask(Scripted("ok").model(), "s", "d", "q", max_tokens=98, context_window=100)


def test_an_unknown_window_must_be_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = folder(tmp_path, {"sdlc/a.md": "a\n"})
    # nothing listens there: the refusal comes before any request
    monkeypatch.setenv("NOWHERE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NOWHERE_API_KEY", "unused")
    with pytest.raises(
        FlightdeckError,
        match="does not know the context window of openai-api/nowhere/m; pass --context-window",
    ):
        answer(TASK, load_attachments(top), "openai-api/nowhere/m", max_tokens=10)


class CountingMock(MockLLM):
    """A provider with its own token count, as Anthropic's count endpoint is in inspect."""

    async def count_tokens(self, input: Any, config: Any = None) -> int:
        return 123_456


def test_the_providers_own_count_is_used_where_inspect_has_one(tmp_path: Path) -> None:
    top = folder(tmp_path, {"sdlc/a.md": "a\n"})
    script = Scripted("ok\nSources: none")
    model = script.model()
    model.api.__class__ = CountingMock  # the registered mockllm, with a count of its own
    with pytest.raises(
        ContextTooLarge,
        match=r"123,456 prompt tokens .* counted by provider count \(CountingMock.count_tokens",
    ):
        answer(TASK, load_attachments(top), model, max_tokens=10, context_window=100_000)
    result = answer(TASK, load_attachments(top), model, max_tokens=10, context_window=200_000)
    assert result["usage"]["counted_input_tokens"] == 123_456
    assert result["provenance"]["token_count"].startswith("provider count (CountingMock")


def test_a_reply_cut_at_the_context_length_fails_instead_of_answering(tmp_path: Path) -> None:
    top = folder(tmp_path, {"sdlc/a.md": "a\n"})
    script = Scripted("partial", stop="model_length")
    with pytest.raises(ModelFailed, match="stopped at its context length"):
        answer(TASK, load_attachments(top), script.model(), max_tokens=10, context_window=1000)


def test_a_model_inspect_cannot_open_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        FlightdeckError, match=r"--model: cannot open 'nosuch/x' \(Model API nosuch"
    ):
        inspect_call.ask("nosuch/x", "s", "d", "q", max_tokens=1, context_window=100)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(FlightdeckError, match="No ANTHROPIC_API_KEY defined in the environment"):
        inspect_call.ask("anthropic/claude-sonnet-4-5", "s", "d", "q", max_tokens=1)
    monkeypatch.delenv("NOKEY_BASE_URL", raising=False)
    with pytest.raises(InputError, match="^--model: openai-api/nokey/m reads NOKEY_BASE_URL"):
        inspect_call.ask("openai-api/nokey/m", "s", "d", "q", max_tokens=1)  # the shared rule
