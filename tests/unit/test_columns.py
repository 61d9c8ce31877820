"""The rules a type carries for Python, checked a column at a time (#23 item 5), refuse exactly
what msgspec refused when each was a ``Meta(pattern=...)`` searched string by string.

The reference is msgspec itself given the old patterns (written out here as they were), on
generated strings near the rule's edge: valid values with one character replaced, added or
dropped, white space of every kind, wrong lengths. A refused value is also described as
before (the same Problem, so the same words), and a file whose first bad line fails a moved
rule is named at that line even when a later line fails a msgspec constraint.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import Meta

from flightdeck.suite.citations import span_in_order
from flightdeck.suite.columns import Columns, accepts, places
from flightdeck.suite.decoding import NonBlank, decode_lines, show
from flightdeck.suite.explanations import ANSWER, KEY, LABEL
from flightdeck.suite.problems import problems
from flightdeck.suite.schema import (
    CANARY_PREFIX,
    Commit,
    Digest,
    KeyCanary,
    RepoName,
    SealedName,
    Uri,
)

# The patterns msgspec searched before the move, copied from the old schema.py.
OLD_URI = (
    r"\A(?:(?s:[A-Za-z][A-Za-z0-9+.-]*:.*)|(?P<repo>[^/#\s]+)/(?P<path>[^#]+)"
    r"(?:#L(?P<start>[1-9]\d{0,17})(?:-L(?P<end>[1-9]\d{0,17}))?)?\Z)"
)
OLD = {
    "non-blank": (NonBlank, r"\S"),
    "commit": (Commit, r"\A[0-9a-fA-F]{40}\Z"),
    "sha256": (Digest, r"\A[0-9a-fA-F]{64}\Z"),
    "canary": (KeyCanary, r"\A" + re.escape(CANARY_PREFIX) + r"[0-9a-f]{32}\Z"),
    "repo-name": (RepoName, r"\A[^/]+\Z"),
    "sealed-name": (SealedName, r"\A(?:questions|keys)\.jsonl\Z"),
    "uri": (Uri, OLD_URI),
}


def old_type(pattern: str) -> Any:
    return Annotated[str, Meta(pattern=pattern)]


def old_accepts(values: list[str], pattern: str) -> bool:
    try:
        msgspec.convert(values, list[old_type(pattern)])  # type: ignore[misc]
    except msgspec.ValidationError:
        return False
    return True


def new_accepts(values: list[str], type_: Any) -> bool:
    """msgspec's part of the new type (its length), then its rules over the one column."""
    try:
        msgspec.convert(values, list[type_])
    except msgspec.ValidationError:
        return False
    return accepts(places(list[type_]), Columns([values]))


VALID = {
    "non-blank": ["q1", " a ", "\u2003x"],
    "commit": ["a" * 40, "0123456789abcdefABCDEF0123456789abcdef01"],
    "sha256": ["b" * 64, "F" * 64],
    "canary": [CANARY_PREFIX + "0123456789abcdef" * 2],
    "repo-name": ["sdlc", "a b", "x\ny"],
    "sealed-name": ["questions.jsonl", "keys.jsonl"],
    "uri": ["sdlc/a.md", "sdlc/a.md#L3-L9", "sdlc/d/b.md#L4", "https://w.example/p#x", "urn:x\ny"],
}
# characters at the edge of the rules: hex of both cases, white space str.isspace knows
# (\x1c-\x1f and U+2003 among them), the uri's and the glob's punctuation, non-ASCII digits
EDGE = "0aAfFgG9 \t\n\r\x0b\x0c\x1c\x1f\x85\u2003\u3000/#:-L.\u0660\U0001f600_"


@st.composite
def near(draw: st.DrawFn, which: str) -> str:
    """A valid value with one character replaced, added or dropped, or any short string."""
    if draw(st.integers(0, 4)) == 0:
        return draw(st.text(alphabet=EDGE, max_size=90))
    value = draw(st.sampled_from(VALID[which]))
    at = draw(st.integers(0, len(value)))
    char = draw(st.sampled_from(EDGE))
    how = draw(st.sampled_from(["replace", "add", "drop", "keep"]))
    if how == "replace" and at < len(value):
        return value[:at] + char + value[at + 1 :]
    if how == "add":
        return value[:at] + char + value[at:]
    if how == "drop" and at < len(value):
        return value[:at] + value[at + 1 :]
    return value


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(OLD)), st.data())
def test_a_column_is_refused_exactly_when_a_value_was(which: str, data: st.DataObject) -> None:
    type_, pattern = OLD[which]
    values = data.draw(st.lists(near(which), max_size=6))
    assert new_accepts(values, type_) == old_accepts(values, pattern), values


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(OLD)), st.data())
def test_a_refused_value_is_described_as_msgspec_described_it(
    which: str, data: st.DataObject
) -> None:
    """The same Problem for the value (kind, place, msgspec's words), so the same message."""
    type_, pattern = OLD[which]
    value = data.draw(near(which))

    def described(t: Any) -> list[tuple[Any, ...]]:
        found = problems(value, t)
        return [
            (p.kind, p.path, p.at_key, p.surrogate, p.detail) for p in found if p.kind != "check"
        ]

    assert described(type_) == described(old_type(pattern))


@pytest.mark.parametrize(
    "values",
    [
        pytest.param(["a" * 39 + "g"], id="one-bad-digit"),
        pytest.param(["a" * 40, "a" * 39 + "Z"], id="the-second-value"),
        pytest.param(["a" * 20, "a" * 60], id="lengths-that-join-to-two-good-ones"),
    ],
)
def test_a_commit_column_needs_each_value_right(values: list[str]) -> None:
    """The joined-class check alone would take the last case; msgspec's length refuses it."""
    assert not new_accepts(values, Commit)
    assert not old_accepts(values, OLD["commit"][1])


def test_the_span_order_is_checked_over_the_column() -> None:
    uris = ["sdlc/a.md#L1-L9", "sdlc/b.md#L12-L3", "https://x/p#L9-L3"]
    assert not new_accepts(uris, Uri)
    assert new_accepts([uris[0], uris[2]], Uri)
    assert [span_in_order(u) for u in uris] == [True, False, True]


# --- the line-by-line walk still names the first bad line in file order ---------------------

PATH = Path("f.jsonl")
SHA = "ab" * 32


def answer(i: int, **change: object) -> str:
    record: dict[str, object] = {
        "id": f"q{i}",
        "answer": f"a {i}",
        "citations": [{"uri": f"sdlc/{i}.md#L1-L2", "sha256": SHA}],
    }
    return json.dumps(record | change)


def first_bad(lines: list[str], schema: Any = ANSWER) -> tuple[int | None, str | None]:
    records, error = decode_lines(PATH, "\n".join(lines).encode(), schema)
    assert all(r.line < (error.line if error else 10**9) for r in records)
    return (None, None) if error is None else (error.line, error.message)


BLANK_ID = answer(2, id=" ")  # a moved rule (non-blank) refuses it
NOT_A_STRING = answer(3, answer=3)  # msgspec refuses it as it decodes
BAD_HASH = answer(2, citations=[{"uri": "sdlc/x.md", "sha256": "g" * 64}])  # moved, per class


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        pytest.param(
            [answer(0), answer(1), BLANK_ID, NOT_A_STRING],
            3,
            "id is empty; give a non-empty string",
            id="moved-rule-first",
        ),
        pytest.param(
            [answer(0), NOT_A_STRING, BLANK_ID],
            2,
            "answer must be a string, got 3",
            id="msgspec-first",
        ),
        pytest.param(
            [*(answer(i) for i in range(300)), BAD_HASH, NOT_A_STRING],
            301,
            f"citations sha256 of 'sdlc/x.md' must be 64 hex digits, got {show('g' * 64)}",
            id="after-many-good-lines",
        ),
        pytest.param(
            [answer(0), answer(1, citations=[{"uri": "s/a.md#L9-L3", "sha256": SHA}]), BLANK_ID],
            2,
            "citations uri 's/a.md#L9-L3' has a span that ends before it starts",
            id="a-check-before-a-moved-pattern",
        ),
    ],
)
def test_the_first_bad_line_in_file_order_is_named(
    lines: list[str], line: int, message: str
) -> None:
    assert first_bad(lines) == (line, message)


def test_a_label_with_a_null_where_none_may_be_is_named_before_a_later_bad_line() -> None:
    good = json.dumps({"id": "q1", "rater": "ada", "correct": True})
    null_time = json.dumps({"id": "q2", "rater": "ada", "correct": True, "time": None})
    blank_rater = json.dumps({"id": "q3", "rater": "", "correct": True})
    line, message = first_bad([good, null_time, blank_rater], LABEL)
    assert (line, message) == (2, "time must be a string, got None")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["good", "blank-id", "bad-type", "bad-canary"]), max_size=8))
def test_keys_name_the_line_a_walk_line_by_line_names(kinds: list[str]) -> None:
    """Whatever the mix, the error is the one the first bad line gives when read alone."""

    def key(i: int, kind: str) -> str:
        record: dict[str, object] = {
            "id": " " if kind == "blank-id" else f"q{i}",
            "answer_key": 1 if kind == "bad-type" else "k",
            "required_facts": ["f"],
            "valid_sources": [{"uri": "sdlc/a.md", "sha256": SHA}],
            "canary": CANARY_PREFIX + ("G" if kind == "bad-canary" else "a") * 32,
        }
        return json.dumps(record)

    lines = [key(i, kind) for i, kind in enumerate(kinds)]
    expected: tuple[int | None, str | None] = (None, None)
    for number, text in enumerate(lines, start=1):
        alone = first_bad([text], KEY)
        if alone != (None, None):
            expected = (number, alone[1])
            break
    assert first_bad(lines, KEY) == expected


# --- a key given twice, told by the colons (a field given at its default included) ---------


@pytest.mark.parametrize(
    ("second", "refused"),
    [
        pytest.param('"unsupported": [], "unsupported": []', True, id="twice-at-the-default"),
        pytest.param('"unsupported": ["s/a.md"], "unsupported": []', True, id="twice-last-default"),
        pytest.param('"\\u0075nsupported": [], "unsupported": []', True, id="twice-one-escaped"),
        pytest.param('"\\u0075nsupported": []', False, id="once-escaped"),
        pytest.param('"unsupported": []', False, id="once-at-the-default"),
    ],
)
def test_a_label_giving_a_key_twice_is_refused_among_labels_giving_it_at_its_default(
    second: str, refused: bool
) -> None:
    lines = [
        f'{{"id": "q{i}", "rater": "ada", "correct": true, "unsupported": []}}' for i in range(4)
    ]
    lines.insert(2, f'{{"id": "q9", "rater": "ada", "correct": false, {second}}}')
    line, message = first_bad(lines, LABEL)
    if refused:
        assert line == 3
        assert message is not None
        assert "duplicate key" in message
    else:
        assert (line, message) == (None, None)
