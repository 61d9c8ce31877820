"""A harness's result, whatever its bytes: a result or a one-line ProtocolError, never a crash.

The runner turns a ProtocolError into that trial's failure (tests/unit/test_trial_limits.py
runs the hostile harnesses for real); here hypothesis throws random bytes, and valid results
mutated by hand, at the reader the runner calls, `trial_output.collect_result`, through both
ways a harness answers: the FLIGHTDECK_RESULT file and stdout.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.arms.protocol import HarnessResult, ProtocolError
from flightdeck.arms.trial_output import collect_result
from flightdeck.suite.records import Question

QUESTION = Question("q1", "Why Postgres?", "decision-why", {"sdlc": "a" * 40}, ())
VALID = {
    "answer": "We chose Postgres for JSONB.",
    "citations": [{"uri": "sdlc/docs/adr/0001-database.md#L1-L3", "sha256": "b" * 64}],
    "read": ["sdlc/docs/adr/0001-database.md"],
}
CAP = 1 << 20

SNIPPETS = [
    b'"answer": "x", "answer": "y"',  # a repeated key
    b"9" * 5000,  # an integer past Python's int-string limit
    b'"\\ud800"',  # a lone surrogate
    b"\xff\xfe",  # not UTF-8
    b"1e400",  # a float past the double range
    b"NaN",
    b"[" * 5000,  # nested past the recursion limit
    b"\x1b[31m",  # a terminal escape
    b"\x00",
]


def _outcome(data: bytes, *, as_file: bool, tmp: Path) -> HarnessResult | str:
    for stale in tmp.glob("*"):
        stale.unlink()
    if as_file:
        (tmp / "result.json").write_bytes(data)
    try:
        return collect_result(QUESTION, tmp, io.BytesIO(b"" if as_file else data), CAP)
    except ProtocolError as exc:
        message = str(exc)
        assert message
        assert "\n" not in message, message
        return message


def _mutated(draw: st.DrawFn) -> bytes:
    text = json.dumps(VALID).encode()
    at = draw(st.integers(0, len(text)))
    how = draw(st.sampled_from(["insert", "cut", "replace"]))
    snippet = draw(st.sampled_from(SNIPPETS))
    if how == "insert":
        return text[:at] + snippet + text[at:]
    if how == "cut":
        return text[:at]
    return text[:at] + snippet + text[at + len(snippet) :]


@pytest.mark.slow  # a property test over 150 cases
@pytest.mark.parametrize("as_file", [True, False], ids=["result-file", "stdout"])
@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=400))
def test_random_bytes_give_a_result_or_one_line(
    as_file: bool, data: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _outcome(data, as_file=as_file, tmp=tmp_path_factory.mktemp("out"))


@pytest.mark.slow  # a property test over 150 cases
@pytest.mark.parametrize("as_file", [True, False], ids=["result-file", "stdout"])
@settings(max_examples=150, deadline=None)
@given(draw=st.data())
def test_mutated_results_give_a_result_or_one_line(
    as_file: bool, draw: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _outcome(draw.draw(st.composite(_mutated)()), as_file=as_file, tmp=tmp_path_factory.mktemp("o"))


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: repr(s[:12]))
def test_each_hostile_value_in_the_answer_is_refused_or_kept_whole(
    snippet: bytes, tmp_path: Path
) -> None:
    data = b'{"answer": ' + snippet + b', "citations": []}'
    got = _outcome(data, as_file=True, tmp=tmp_path)
    assert isinstance(got, str), got  # none of them is an answer string
    assert got.startswith("FLIGHTDECK_RESULT "), got


def test_the_valid_result_is_read(tmp_path: Path) -> None:
    got = _outcome(json.dumps(VALID).encode(), as_file=False, tmp=tmp_path)
    assert isinstance(got, HarnessResult)
    assert got.answer == VALID["answer"]


def test_a_span_past_any_line_number_is_refused_not_a_crash(tmp_path: Path) -> None:
    # Found by the mutation test above: int() of a 5,000-digit line number passed Python's
    # int-string limit inside the citation check.
    cited = {"uri": "sdlc/docs/adr/0001-database.md#L" + "9" * 5000, "sha256": "b" * 64}
    data = json.dumps({"answer": "a", "citations": [cited]}).encode()
    got = _outcome(data, as_file=True, tmp=tmp_path)
    assert isinstance(got, str), got
