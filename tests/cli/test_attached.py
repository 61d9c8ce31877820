"""`experiment run --harness "flightdeck experiment agent attached ..."`, end to end.

The model is a scripted server on 127.0.0.1 (``tests/model_stub.py``), reached by inspect_ai
as ``openai-api/stub/m1`` or ``anthropic/claude-sonnet-4-5``, or inspect's ``mockllm``. The attachments
are the folder a person would attach: one file exported after ``as_of`` (stale), one as it
was at ``as_of``, one from a repository no question names.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.builders import FILES_AS_OF, FILES_LATER, BuiltProject, sha
from tests.citations_reference import classify_citation
from tests.model_stub import Stub, message_text

from flightdeck.arms.agents.attached import PROMPT_SHA256, SYSTEM_PROMPT
from flightdeck.arms.snapshot import folder_hash
from flightdeck.cli import cli
from flightdeck.suite.records import Source, read_keys, read_meta

ADR = "docs/adr/0001-database.md"
DEPLOY = "docs/runbooks/deploy.md"
REPLIES = {
    "Why did we choose Postgres?": f"Postgres, for JSONB.\n\nSources:\n- sdlc/{ADR}",
    "How do we deploy?": f"Run make release, then tag.\n\nSources:\n- sdlc/{DEPLOY}#L3-L4",
    "Who owns the docs?": "Ada, says the notes file.\n\nSources:\n- other/notes.md",
    "What changed in 2.0?": "The documents do not say.\n\nSources: none",
}


def attachments(root: Path) -> Path:
    top = root / "attachments"
    files = {
        f"sdlc/{ADR}": FILES_LATER[ADR],  # exported after as_of: stale
        f"sdlc/{DEPLOY}": FILES_AS_OF[DEPLOY],
        "sdlc/CODEOWNERS": FILES_AS_OF["CODEOWNERS"],
        "other/notes.md": "The docs belong to Ada.\n",  # outside every as_of repository
    }
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text)
    return top


def script(request: dict[str, Any]) -> tuple[int, str]:
    question = message_text(request).rsplit("Question: ", 1)[1]
    return 200, REPLIES[question]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    server = Stub(script)
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    yield server
    server.close()


def harness(model: str, folder: Path, *extra: str) -> str:
    return shlex.join(
        [sys.executable, "-m", "flightdeck", "experiment", "agent", "attached"]
        + ["--model", model, "--attach", str(folder), *extra]
    )


def run(
    runner: CliRunner, project: BuiltProject, command: str, *extra: str, arm: str = "projects-api"
) -> Result:
    args = ["experiment", "run", str(project.suite), "--arm", arm, "--harness", command]
    # The sandbox passes no network and no variable unless named: the stub is a server on
    # this machine's loopback, reached through its URL and key variables.
    args += ["--network", *(f"--pass-env={name}" for name in STUB_VARIABLES)]
    return runner.invoke(cli, [*args, *extra], catch_exceptions=False)


STUB_VARIABLES = ("STUB_BASE_URL", "STUB_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


def answers(project: BuiltProject) -> dict[str, dict[str, Any]]:
    path = project.suite / "answers" / "projects-api.jsonl"
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def ledger(project: BuiltProject, arm: str = "projects-api") -> list[dict[str, Any]]:
    path = project.root / "runs" / project.suite.name / f"{arm}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_api_run_scores_stale_and_outside_attachments_for_what_they_are(
    runner: CliRunner, project: BuiltProject, stub: Stub
) -> None:
    folder = attachments(project.root)
    command = harness("openai-api/stub/m1", folder, "--context-window", "20000")
    result = run(runner, project, command, "--jobs", "1")
    assert result.exit_code == 0, result.output

    # one call per question, no tools, every attached document and then the question
    assert len(stub.requests) == 4
    for request in stub.requests:
        assert "tools" not in request
        assert request["messages"][0]["content"] == SYSTEM_PROMPT
        text = message_text(request)
        for name in ("sdlc/" + ADR, "sdlc/" + DEPLOY, "sdlc/CODEOWNERS", "other/notes.md"):
            assert f'<document name="{name}">' in text
        assert text.rsplit("\n", 1)[1].startswith("Question: ")

    got = answers(project)
    keys = {k.id: k for k in read_keys(project.suite / "keys.jsonl")}
    classes = {
        qid: [
            classify_citation(Source(c["uri"], c["sha256"]), keys[qid].valid_sources, [])
            for c in got[qid]["citations"]
        ]
        for qid in got
    }
    assert got["q1"]["citations"] == [{"uri": f"sdlc/{ADR}", "sha256": sha(FILES_LATER[ADR])}]
    assert classes == {"q1": ["stale"], "q2": ["valid"], "q3": ["fabricated"], "q4": []}
    assert got["q2"]["citations"][0]["uri"] == f"sdlc/{DEPLOY}#L3-L4"
    assert got["q3"]["citations"] == [
        {"uri": "attachment:other/notes.md", "sha256": sha("The docs belong to Ada.\n")}
    ]
    assert got["q4"]["answer"] == "The documents do not say."

    meta = read_meta(project.suite / "answers" / "projects-api.meta.json").fields
    snapshot = {"folder": folder.as_posix(), "sha256": folder_hash(folder)[0], "files": 4}
    assert meta["runner"] == "harness"
    assert meta["model"] == "openai-api/stub/m1"
    assert meta["knowledge_snapshot"] == snapshot
    assert meta["provenance"]["knowledge_snapshot"] == snapshot
    assert meta["provenance"]["prompt_sha256"] == PROMPT_SHA256
    assert meta["provenance"]["harness"] == "flightdeck experiment agent attached"

    # tokens per question, as the provider reported them: later calls hit the cached prefix
    usage = {e["id"]: e["usage"] for e in ledger(project)}
    assert [usage[q]["cached_tokens"] > 0 for q in ("q1", "q2", "q3", "q4")] == [
        False,
        True,
        True,
        True,
    ]
    for qid, counts in usage.items():
        assert counts["input_tokens"] >= counts["cached_tokens"]
        assert counts["output_tokens"] >= 1
        line = (
            f"  {qid}: {counts['input_tokens']:,} in, {counts['cached_tokens']:,} cached, "
            f"{counts['output_tokens']:,} out"
        )
        assert line in result.output.splitlines()
    assert "tokens per question (input, of them cached, output):" in result.output


def keep_questions(project: BuiltProject, *ids: str) -> None:
    """Keep only these questions (and keys): fewer harness processes for a failure test."""
    for name in ("questions.jsonl", "keys.jsonl"):
        path = project.suite / name
        lines = [line for line in path.read_text().splitlines() if json.loads(line)["id"] in ids]
        path.write_text("".join(line + "\n" for line in lines))


def test_a_folder_too_large_for_the_context_is_refused_before_any_call(
    runner: CliRunner, project: BuiltProject, stub: Stub
) -> None:
    keep_questions(project, "q1")
    folder = attachments(project.root)
    (folder / "sdlc" / "docs" / "big.md").write_text("lorem ipsum " * 2000)  # 24,000 bytes
    command = harness("openai-api/stub/m1", folder, "--context-window", "4000")
    result = run(runner, project, command)
    assert result.exit_code == 1
    assert stub.requests == []
    [entry] = ledger(project)
    assert entry["status"] == "failed"
    assert entry["exit_code"] == 2
    assert f"error: {folder}: does not fit: " in entry["reason"]
    trace = (project.root / entry["trace"]).read_text()
    [refusal] = [line for line in trace.splitlines() if line.startswith(f"error: {folder}")]
    counted = int(refusal.split("does not fit: ")[1].split(" prompt")[0].replace(",", ""))
    assert counted > 24_000 / 3  # the stated estimate: three bytes a token, over every part
    assert refusal.endswith(
        " prompt tokens + 2,048 for the answer exceed 4,000, the context window of "
        "openai-api/stub/m1 (--context-window); tokens counted by estimate: ceil(UTF-8 bytes "
        "/ 3) per text part (no provider count in inspect); attach fewer or smaller files, or "
        "use a model with a larger window"
    )
    assert not (project.suite / "answers" / "projects-api.jsonl").read_text().strip()


def test_mockllm_is_a_dry_run_whose_window_is_checked_only_when_given(
    runner: CliRunner, project: BuiltProject
) -> None:
    keep_questions(project, "q1")
    folder = attachments(project.root)
    result = run(runner, project, harness("mockllm/model", folder), arm="dry")
    assert result.exit_code == 0, result.output
    (got,) = map(json.loads, (project.suite / "answers" / "dry.jsonl").read_text().splitlines())
    # the attached document sharing most words with "Why did we choose Postgres?", cited
    assert got["answer"].startswith("Dry run (mockllm/model; no model was called): ")
    assert got["citations"] == [{"uri": "sdlc/" + ADR, "sha256": sha(FILES_LATER[ADR])}]
    [entry] = ledger(project, "dry")
    trace = (project.root / entry["trace"]).read_text()
    assert "(not checked: a dry run (pass --context-window to check one))" in trace
    meta = read_meta(project.suite / "answers" / "dry.meta.json").fields
    assert meta["provenance"]["dry_run"] is True
    assert meta["harness_needs"]["dry_run"] is True

    command = harness("mockllm/model", folder, "--context-window", "200")
    result = run(runner, project, command, arm="small")
    assert result.exit_code == 1
    [entry] = ledger(project, "small")
    assert (
        "the context window of mockllm/model (--context-window)"
        in (project.root / entry["trace"]).read_text()
    )


def test_a_resumed_arm_refuses_changed_attachments(
    runner: CliRunner, project: BuiltProject, stub: Stub
) -> None:
    keep_questions(project, "q1", "q4")
    folder = attachments(project.root)
    fail_q4 = {"on": True}

    def flaky(request: dict[str, Any]) -> tuple[int, str]:
        if fail_q4["on"] and "2.0" in message_text(request).rsplit("Question: ", 1)[1]:
            return 400, "bad request"
        return script(request)

    stub.script = flaky
    command = harness(
        "openai-api/stub/m1", folder, "--context-window", "20000", "--max-retries", "0"
    )
    first = run(runner, project, command, "--jobs", "2")
    assert first.exit_code == 1
    assert sorted(answers(project)) == ["q1"]
    [failed] = [e for e in ledger(project) if e["status"] == "failed"]
    assert failed["id"] == "q4"
    assert failed["reason"].startswith(
        "exit status 2 (stderr: error: --model: the model call failed (openai-api/stub/m1: "
    )

    fail_q4["on"] = False
    (folder / "sdlc" / "README.md").write_text("A file attached later.\n")
    second = run(runner, project, command)
    assert second.exit_code == 1
    last = ledger(project)[-1]
    assert last["id"] == "q4"
    assert last["reason"] == (
        "the harness reports a different documents_in_context, knowledge_snapshot than the "
        "arm's earlier answers (its attachments or prompt changed?); use a new arm name"
    )
    assert sorted(answers(project)) == ["q1"]

    (folder / "sdlc" / "README.md").unlink()
    third = run(runner, project, command)
    assert third.exit_code == 0, third.output
    assert sorted(answers(project)) == ["q1", "q4"]


def test_a_model_given_to_experiment_run_must_be_the_harnesss(
    runner: CliRunner, project: BuiltProject, stub: Stub
) -> None:
    folder = attachments(project.root)
    command = harness("openai-api/stub/m1", folder, "--context-window", "20000")
    result = run(runner, project, command, "--model", "gpt-imaginary")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "error: --model: the harness runs model 'openai-api/stub/m1', not 'gpt-imaginary'; "
        "drop --model or make the two agree"
    )
    assert stub.requests == []  # refused before any trial spent a call


@pytest.fixture
def anthropic_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    server = Stub(script)
    server.keep_path = True
    for name, value in server.anthropic_env().items():
        monkeypatch.setenv(name, value)
    yield server
    server.close()


def test_through_anthropic_the_count_is_the_providers_and_the_documents_are_cached(
    runner: CliRunner, project: BuiltProject, anthropic_stub: Stub
) -> None:
    keep_questions(project, "q1", "q2")
    folder = attachments(project.root)
    result = run(runner, project, harness("anthropic/claude-sonnet-4-5", folder), "--jobs", "1")
    assert result.exit_code == 0, result.output

    paths = [r["path"] for r in anthropic_stub.requests]
    assert paths == ["/v1/messages/count_tokens", "/v1/messages"] * 2  # counted, then asked
    for request in anthropic_stub.requests[1::2]:
        documents, question = request["messages"][0]["content"]
        assert documents["text"].startswith('<document name="other/notes.md">')
        assert documents["cache_control"] == {"type": "ephemeral"}  # the cached prefix
        assert question["text"].startswith("Question: ")
        assert "cache_control" not in question
        assert request["tools"] == []

    usage = [e["usage"] for e in ledger(project)]
    assert [u["cache_write_tokens"] > 0 for u in usage] == [True, False]
    assert [u["cached_tokens"] > 0 for u in usage] == [False, True]
    assert usage[1]["cached_tokens"] == usage[0]["cache_write_tokens"]
    for u, count in zip(usage, anthropic_stub.requests[0::2], strict=True):
        assert u["counted_input_tokens"] == len(message_text(count)) // 4  # what it answered

    meta = read_meta(project.suite / "answers" / "projects-api.meta.json").fields
    assert meta["model"] == "anthropic/claude-sonnet-4-5"
    assert meta["provenance"]["token_count"] == (
        "provider count (AnthropicAPI.count_tokens, through inspect)"
    )


def test_through_anthropic_the_window_comes_from_inspects_model_database(
    runner: CliRunner, project: BuiltProject, anthropic_stub: Stub
) -> None:
    keep_questions(project, "q1")
    folder = attachments(project.root)
    (folder / "sdlc" / "export.md").write_text("lorem ipsum dolor sit amet\n" * 32_000)
    result = run(runner, project, harness("anthropic/claude-sonnet-4-5", folder))
    assert result.exit_code == 1
    assert [r["path"] for r in anthropic_stub.requests] == ["/v1/messages/count_tokens"]
    counted = len(message_text(anthropic_stub.requests[0])) // 4
    [entry] = ledger(project)
    trace = (project.root / entry["trace"]).read_text()
    assert (
        f"does not fit: {counted:,} prompt tokens + 2,048 for the answer exceed 200,000, the "
        "context window of anthropic/claude-sonnet-4-5 (inspect's model database); tokens "
        "counted by provider count (AnthropicAPI.count_tokens, through inspect)"
    ) in trace
