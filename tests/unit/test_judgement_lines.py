"""A judgements line is checked against its Struct, and a bad one named in the same words.

The cases were written against the hand-made checks the Struct replaced (each message below is
what they said), so the messages are pinned to what users have seen.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flightdeck.errors import InputError
from flightdeck.rating.judgements import FactVerdict, read_judgements

JUDGE = {"name": "facts", "kind": "facts", "model": None, "prompt_sha256": None,
         "temperature": None, "rules": "1"}  # fmt: skip


def line(**changes: Any) -> dict[str, Any]:
    record = {
        "id": "q1",
        "correct": True,
        "facts": [{"fact": "f", "present": True, "quote": "it is f"}],
        "unsupported": ["sdlc/a.md#L1"],
        "answer_sha256": "AB" * 32,
        "judge": JUDGE,
    }
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


def write(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "search.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_good_line_reads_with_its_hash_lower_cased(tmp_path: Path) -> None:
    (j,) = read_judgements(write(tmp_path, line()), ["q1"])
    assert (j.id, j.correct, j.answer_sha256, j.line) == ("q1", True, "ab" * 32, 1)
    assert j.facts == (FactVerdict("f", True, "it is f"),)
    assert j.unsupported == ("sdlc/a.md#L1",)
    assert j.judge == JUDGE
    assert j.to_json() == line(answer_sha256="ab" * 32)


FIELDS = "answer_sha256, correct, facts, id, judge, unsupported"
BAD = [
    pytest.param(line(extra=1), f"a judgement has exactly the fields {FIELDS}", id="extra"),
    pytest.param(line(judge=...), f"a judgement has exactly the fields {FIELDS}", id="missing"),
    pytest.param(line(id="q9"), "id 'q9' is not a question of this suite", id="unknown-id"),
    pytest.param(line(id=7), "id 7 is not a question of this suite", id="id-number"),
    pytest.param(line(id=["q1"]), "id ['q1'] is not a question of this suite", id="id-list"),
    pytest.param(line(correct="yes"), "correct must be true or false", id="correct"),
    pytest.param(line(correct=1), "correct must be true or false", id="correct-int"),
    pytest.param(line(answer_sha256="ab"), "answer_sha256 must be 64 hex digits", id="sha"),
    pytest.param(line(answer_sha256="g" * 64), "answer_sha256 must be 64 hex digits", id="hex"),
    pytest.param(line(answer_sha256=None), "answer_sha256 must be 64 hex digits", id="sha-null"),
    pytest.param(line(facts={}), "facts must be a list of {fact, present, quote}", id="facts"),
    pytest.param(
        line(facts=[{"fact": "f", "present": True}]),
        "facts must be a list of {fact, present, quote}",
        id="fact-without-quote",
    ),
    pytest.param(
        line(facts=[{"fact": "f", "present": "no", "quote": None}]),
        "facts must be a list of {fact, present, quote}",
        id="fact-present",
    ),
    pytest.param(
        line(facts=[{"fact": "f", "present": False, "quote": None, "x": 1}]),
        "facts must be a list of {fact, present, quote}",
        id="fact-extra",
    ),
    pytest.param(line(unsupported="a"), "unsupported must be a list of uris", id="unsupported"),
    pytest.param(line(unsupported=[1]), "unsupported must be a list of uris", id="uri-number"),
    pytest.param(line(judge="facts"), "judge must be the judge's identity object", id="judge"),
    pytest.param(  # two faults: the first in the checks' order is named
        line(correct=None, unsupported=None), "correct must be true or false", id="first-fault"
    ),
    pytest.param(
        line(facts=None, answer_sha256=1), "answer_sha256 must be 64 hex digits", id="order"
    ),
]


@pytest.mark.parametrize(("record", "message"), BAD)
def test_a_bad_line_is_named_with_its_fault(
    tmp_path: Path, record: dict[str, Any], message: str
) -> None:
    path = write(tmp_path, line(id="q2"), record)
    with pytest.raises(InputError) as caught:
        read_judgements(path, ["q1", "q2"])
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert caught.value.message == f"{message}; judge the arm again (`knowledge judge`)"


def test_a_second_judgement_of_an_id_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, line(), line())
    with pytest.raises(InputError, match="a second judgement of 'q1'; remove one") as caught:
        read_judgements(path, ["q1"])
    assert caught.value.line == 2
