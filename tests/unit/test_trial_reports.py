"""What a harness may report beside its answer: token usage and provenance (protocol, runner)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from flightdeck.arms.arm_meta import default_model, provenance_conflict, with_provenance
from flightdeck.arms.protocol import ProtocolError, check_result
from flightdeck.suite.records import Question

QUESTION = Question("q1", "?", "how-to", {"sdlc": "a" * 40}, ())
USAGE = {"input_tokens": 120, "cached_tokens": 100, "output_tokens": 9}


def test_usage_and_provenance_are_kept_beside_the_answer_not_in_it() -> None:
    value = {"answer": "x", "usage": USAGE, "provenance": {"model": "m", "prompt_sha256": "ab"}}
    result = check_result(value, QUESTION)
    assert result.usage == USAGE
    assert result.provenance == {"model": "m", "prompt_sha256": "ab"}
    assert result.record("q1") == {"id": "q1", "answer": "x", "citations": []}
    assert check_result({"answer": "x"}, QUESTION).usage is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"usage": [1]}, "result 'usage' must be an object of at most 32 counts"),
        ({"usage": {"input_tokens": -1}}, "usage 'input_tokens' must be a non-negative integer"),
        ({"usage": {"input_tokens": 1.5}}, "usage 'input_tokens' must be a non-negative integer"),
        ({"usage": {"cached": True}}, "usage 'cached' must be a non-negative integer"),
        ({"usage": {f"k{i}": 1 for i in range(33)}}, "at most 32 counts"),
        ({"provenance": "m"}, "result 'provenance' must be a JSON object"),
        ({"provenance": {"x": "y" * 20000}}, "result 'provenance' is over 16 KiB"),
    ],
)
def test_bad_reports_break_the_protocol(value: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(message)):
        check_result({"answer": "x", **value}, QUESTION)


@pytest.mark.parametrize(
    ("command", "model"),
    [
        (
            "flightdeck experiment agent attached --model anthropic/claude-x --attach d",
            "anthropic/claude-x",
        ),
        (
            "python -m flightdeck experiment agent attached --attach d --model=openai/gpt-x",
            "openai/gpt-x",
        ),
        (
            "python -m flightdeck experiment agent repo-search",
            "none (flightdeck repo-search, BM25)",
        ),
        ("./my-harness --model x", "none"),
        ("flightdeck experiment agent attached --model 'unclosed", "none"),
        ("flightdeck experiment agent attached --attach d --model", "none"),
    ],
)
def test_the_meta_names_the_built_in_harnesses_model(command: str, model: str) -> None:
    assert default_model(command) == model


def test_one_arm_never_mixes_two_provenances() -> None:
    reported = {"model": "m", "knowledge_snapshot": {"folder": "att", "sha256": "1", "files": 2}}
    meta: dict[str, Any] = {"model": "m", "knowledge_snapshot": {"sdlc": ["a" * 40]}}
    assert provenance_conflict(meta, reported) is None
    recorded = with_provenance(meta, reported)
    assert recorded["knowledge_snapshot"] == reported["knowledge_snapshot"]  # not as_of's
    assert recorded["provenance"] == reported
    assert provenance_conflict(recorded, reported) is None
    changed = {**reported, "knowledge_snapshot": {"folder": "att", "sha256": "2", "files": 3}}
    assert provenance_conflict(recorded, changed) == (
        "the harness reports a different knowledge_snapshot than the arm's earlier answers "
        "(its attachments or prompt changed?); use a new arm name"
    )
    assert provenance_conflict({"model": "other"}, reported) == (
        "the harness reports model 'm' but the arm's meta says 'other'; "
        "drop --model from experiment run or make the two agree"
    )
