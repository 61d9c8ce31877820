"""The frame-based scoring (scoring/tables.py) against the spec, read in plain Python.

The reference below is written from SPEC.md's words, not from the module: majority of the
raters' ``correct`` (a tie is incorrect); each citation fabricated, stale, unsupported or
valid, the first that applies; an answer citation-valid when it cites and every citation is
valid; a missing answer incorrect and invalid.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.files.jsonl import encode_lines
from flightdeck.scoring.results import encode_results, frame_from_rows, result_rows
from flightdeck.scoring.rules import score_arm
from flightdeck.scoring.stats import cohens_kappa
from flightdeck.scoring.tables import CLASSES, strip_span
from flightdeck.suite.citations import strip_span as strip_span_py
from flightdeck.suite.records import Answer, Key, Label, Question, Source

KINDS = ["decision-why", "blocker", "how-to"]


def spec_strip(uri: str) -> str:
    """A uri without its ``#L…`` span; an opaque ``scheme:`` uri stays whole."""
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", uri):
        return uri
    base, sep, span = uri.rpartition("#")
    return base if sep and span.startswith("L") else uri


def spec_class(cite: Source, valid: list[Source], entries: list[str]) -> str:
    same = [s for s in valid if spec_strip(s.uri) == spec_strip(cite.uri)]
    if not same:
        return "fabricated"
    if all(s.sha256 != cite.sha256 for s in same):
        return "stale"
    bare = spec_strip(cite.uri)
    if any(e == cite.uri or (spec_strip(e) == e and e == bare) for e in entries):
        return "unsupported"
    return "valid"


def spec_rows(
    questions: list[Question], keys: dict[str, Key], answers: dict[str, Answer], labels: list[Label]
) -> list[dict[str, Any]]:
    rows = []
    for q in questions:
        answer = answers.get(q.id)
        if answer is None:
            rows.append(
                {
                    "id": q.id,
                    "kind": q.kind,
                    "answered": False,
                    "votes": {},
                    "majority": False,
                    "correct": False,
                    "citations": [],
                    "citation_valid": False,
                }
            )
            continue
        mine = [lb for lb in labels if lb.id == q.id]
        votes = {lb.rater: lb.correct for lb in mine}
        yes = sum(votes.values())
        correct = yes > len(votes) - yes
        entries = [e for lb in mine for e in lb.unsupported]
        classes = [spec_class(c, list(keys[q.id].valid_sources), entries) for c in answer.citations]
        rows.append(
            {
                "id": q.id,
                "kind": q.kind,
                "answered": True,
                "votes": votes,
                "majority": correct,
                "correct": correct,
                "citations": [
                    {"uri": c.uri, "class": k}
                    for c, k in zip(answer.citations, classes, strict=True)
                ],
                "citation_valid": bool(classes) and all(k == "valid" for k in classes),
            }
        )
    return rows


def question(qid: str, kind: str = "how-to") -> Question:
    return Question(id=qid, question="?", kind=kind, as_of={"r": "c" * 40}, scope=())


def key(qid: str, sources: list[tuple[str, str]]) -> Key:
    valid = tuple(Source(uri=u, sha256=h) for u, h in sources)
    return Key(id=qid, answer_key="k", required_facts=("f",), valid_sources=valid, canary=None)


def answer(qid: str, cites: list[tuple[str, str]]) -> Answer:
    citations = tuple(Source(uri=u, sha256=h) for u, h in cites)
    return Answer(id=qid, answer="a", citations=citations, sha256="0" * 64)


def label(qid: str, rater: str, correct: bool, unsupported: tuple[str, ...] = ()) -> Label:
    return Label(id=qid, rater=rater, correct=correct, unsupported=unsupported, answer_sha256=None)


def score(questions, keys, answers, labels):  # type: ignore[no-untyped-def]
    return score_arm(
        "arm",
        questions,
        {k.id: k for k in keys},
        {a.id: a for a in answers},
        labels,
        confidence=0.95,
    )


# --- hand-worked cases: one question, its key's valid sources, the answer, the labels --------

VALID = [("r/a.md", "h1")]
CASES = [
    pytest.param([("r/a.md#L1-L3", "h1")], [], "valid", id="span-ignored-for-matching-valid"),
    pytest.param([("r/b.md", "h1")], [], "fabricated", id="other-file-fabricated"),
    pytest.param([("r/a.md", "h2")], [], "stale", id="same-file-other-hash-stale"),
    # fabricated is checked first: a flag on a fabricated citation does not make it unsupported
    pytest.param([("r/b.md", "h1")], ["r/b.md"], "fabricated", id="fabricated-before-unsupported"),
    pytest.param([("r/a.md", "h2")], ["r/a.md"], "stale", id="stale-before-unsupported"),
    pytest.param([("r/a.md#L2", "h1")], ["r/a.md#L2"], "unsupported", id="entry-equal-to-uri"),
    # a spanless entry flags every span of its file ...
    pytest.param([("r/a.md#L2-L4", "h1")], ["r/a.md"], "unsupported", id="spanless-entry-file"),
    # ... but a spanned entry flags only that exact span
    pytest.param([("r/a.md#L5", "h1")], ["r/a.md#L2"], "valid", id="other-span-not-flagged"),
    pytest.param([("r/a.md", "h1")], ["r/a.md#L2"], "valid", id="spanned-entry-spanless-cite"),
    # "#x" is not a span (it does not start with L): the uri is matched whole
    pytest.param([("r/a.md#x", "h1")], [], "fabricated", id="hash-not-a-span"),
]


@pytest.mark.parametrize(("cites", "flags", "expected"), CASES)
def test_citation_class(cites: list[tuple[str, str]], flags: list[str], expected: str) -> None:
    result = score(
        [question("q")],
        [key("q", VALID)],
        [answer("q", cites)],
        [label("q", "ana", True, tuple(flags)), label("q", "bo", True)],
    )
    row = next(iter(result_rows(result.table)))
    assert [c["class"] for c in row["citations"]] == [expected]
    assert row["citation_valid"] is (expected == "valid")
    assert result.citations[expected] == 1
    assert sum(result.citations.values()) == 1


def test_opaque_uri_matches_whole_string() -> None:
    # https://x/p#L1 is opaque: its "#L1" is part of the uri, so https://x/p does not match it.
    result = score(
        [question("q")],
        [key("q", [("https://x/p#L1", "h1")])],
        [answer("q", [("https://x/p#L1", "h1"), ("https://x/p", "h1")])],
        [label("q", "ana", True), label("q", "bo", True)],
    )
    row = next(iter(result_rows(result.table)))
    assert [c["class"] for c in row["citations"]] == ["valid", "fabricated"]


def test_spanned_entry_never_flags_by_file() -> None:
    # "r/a.md#L1#L2" without its span is "r/a.md#L1"; the entry "r/a.md#L1" has a span, so
    # by the spec it flags only a citation equal to it, not this one (whose file it spells).
    result = score(
        [question("q")],
        [key("q", [("r/a.md#L1#L2", "h1")])],
        [answer("q", [("r/a.md#L1#L2", "h1")])],
        [label("q", "ana", True, ("r/a.md#L1",)), label("q", "bo", True)],
    )
    row = next(iter(result_rows(result.table)))
    assert [c["class"] for c in row["citations"]] == ["valid"]


@pytest.mark.parametrize(
    ("votes", "correct"),
    [
        pytest.param([True, False], False, id="tie-counts-incorrect"),
        pytest.param([True, True, False], True, id="majority-of-three"),
        pytest.param([False, True, False], False, id="minority-of-three"),
        pytest.param([True, True, False, False], False, id="tie-of-four"),
        pytest.param([True], True, id="one-rater"),
    ],
)
def test_majority(votes: list[bool], correct: bool) -> None:
    raters = ["ana", "bo", "cy", "di"]
    result = score(
        [question("q")],
        [key("q", VALID)],
        [answer("q", VALID)],
        [label("q", r, v) for r, v in zip(raters, votes, strict=False)],
    )
    assert result.table["correct"].to_list() == [correct]
    assert result.correctness.value == (1.0 if correct else 0.0)


def test_missing_and_uncited_answers() -> None:
    # q1 answered with a valid citation, q2 answered without any, q3 not answered:
    # 3 questions, 2 answered, 1 missing, 1 uncited; only q1 is citation-valid.
    result = score(
        [question("q1", "how-to"), question("q2", "blocker"), question("q3", "how-to")],
        [key(q, VALID) for q in ("q1", "q2", "q3")],
        [answer("q1", VALID), answer("q2", [])],
        [label(q, r, True) for q in ("q1", "q2") for r in ("ana", "bo")],
    )
    assert (result.n, result.answered, result.missing, result.uncited) == (3, 2, 1, 1)
    assert result.table["citation_valid"].to_list() == [True, False, False]
    assert result.table["correct"].to_list() == [True, True, False]
    assert result.by_kind == {
        "how-to": {"n": 2, "correct": 1, "citation_valid": 1},
        "blocker": {"n": 1, "correct": 1, "citation_valid": 0},
    }
    missing = list(result_rows(result.table))[2]
    assert missing["votes"] == {}
    assert missing["citations"] == []


def test_kappa_first_two_raters_over_shared_ids() -> None:
    # bo appears before cy, so kappa is ana vs bo over q1, q2 (the ids both rated):
    # ana T,T; bo T,F: agree 1 of 2; yes 2 and 1; n²p_e = 2·1 + 0·1 = 2; kappa (2·1-2)/(4-2) = 0.
    labels = [
        label("q1", "ana", True),
        label("q1", "bo", True),
        label("q2", "ana", True),
        label("q2", "bo", False),
        label("q3", "ana", False),
        label("q3", "cy", False),
    ]
    result = score(
        [question(q) for q in ("q1", "q2", "q3")],
        [key(q, VALID) for q in ("q1", "q2", "q3")],
        [answer(q, VALID) for q in ("q1", "q2", "q3")],
        labels,
    )
    assert result.raters == ("ana", "bo", "cy")
    assert (result.kappa.value, result.kappa.agreement, result.kappa.n) == (0.0, 0.5, 2)


def test_one_rater_kappa_undefined() -> None:
    result = score(
        [question("q")], [key("q", VALID)], [answer("q", VALID)], [label("q", "a", True)]
    )
    assert result.kappa.value is None
    assert result.kappa.reason == "undefined: only one rater labelled this arm"


# --- property: any suite, the frames give what the spec's words give -------------------------

URIS = [
    "r/a.md",
    "r/a.md#L1",
    "r/a.md#L1#L2",
    "r/a.md#L2-L3",
    "r/b.md",
    "r/b.md#L1",
    "r/a.md#x",
    "https://x#L1",
]
RATERS = ["ana", "bo", "cy"]


@st.composite
def suites(draw: st.DrawFn) -> tuple[list[Question], list[Key], list[Answer], list[Label]]:
    ids = draw(st.lists(st.sampled_from(["q1", "q2", "q 3", "é4", "q5"]), min_size=1, unique=True))
    questions = [question(q, draw(st.sampled_from(KINDS))) for q in ids]
    source = st.tuples(st.sampled_from(URIS), st.sampled_from(["h1", "h2"]))
    keys = [key(q, draw(st.lists(source, min_size=1, max_size=3))) for q in ids]
    answered = draw(st.lists(st.sampled_from(ids), unique=True))
    answers = [answer(q, draw(st.lists(source, max_size=4))) for q in answered]
    labels = [
        label(q, r, draw(st.booleans()), tuple(draw(st.lists(st.sampled_from(URIS), max_size=2))))
        for q in answered
        for r in draw(st.lists(st.sampled_from(RATERS), unique=True))
    ]
    return questions, keys, answers, draw(st.permutations(labels))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(suites())
def test_frames_agree_with_the_spec(
    suite: tuple[list[Question], list[Key], list[Answer], list[Label]],
) -> None:
    questions, keys, answers, labels = suite
    result = score(questions, keys, answers, labels)
    expected = spec_rows(questions, {k.id: k for k in keys}, {a.id: a for a in answers}, labels)
    assert list(result_rows(result.table)) == expected
    classes = [c["class"] for row in expected for c in row["citations"]]
    assert result.citations == {c: classes.count(c) for c in result.citations}
    assert list(result.citations) == ["fabricated", "stale", "unsupported", "valid"]
    assert result.uncited == sum(r["answered"] and not r["citations"] for r in expected)
    assert result.correctness.value == sum(r["correct"] for r in expected) / len(questions)
    kinds: dict[str, dict[str, int]] = {}
    for row in expected:
        k = kinds.setdefault(row["kind"], {"n": 0, "correct": 0, "citation_valid": 0})
        k["n"] += 1
        k["correct"] += row["correct"]
        k["citation_valid"] += row["citation_valid"]
    assert result.by_kind == kinds
    raters = list(dict.fromkeys(lb.rater for lb in labels))
    if len(raters) >= 2:
        a = {lb.id: lb.correct for lb in labels if lb.rater == raters[0]}
        b = {lb.id: lb.correct for lb in labels if lb.rater == raters[1]}
        both = [q for q in a if q in b]
        assert result.kappa == cohens_kappa([a[q] for q in both], [b[q] for q in both])


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet="ab#L1-:/ \n", max_size=12) | st.sampled_from(URIS), max_size=20))
def test_strip_span_expression_is_the_python_rule(uris: list[str]) -> None:
    frame = pl.DataFrame({"uri": uris}, schema={"uri": pl.String})
    stripped = frame.select(strip_span("uri"))["uri"].to_list()
    assert stripped == [strip_span_py(u) for u in uris] == [spec_strip(u) for u in uris]


@st.composite
def result_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    text = st.text(max_size=8)  # any character: quotes, backslashes, controls, non-ASCII
    records = []
    for qid in draw(st.lists(text, max_size=6, unique=True)):
        correct = draw(st.booleans())
        records.append(
            {
                "id": qid,
                "kind": draw(st.sampled_from(KINDS)),
                "answered": draw(st.booleans()),
                "votes": draw(st.dictionaries(text, st.booleans(), max_size=3)),
                "majority": correct,
                "correct": correct,
                "citations": [
                    {"uri": u, "class": c}
                    for u, c in draw(
                        st.lists(st.tuples(text, st.sampled_from(list(CLASSES))), max_size=3)
                    )
                ],
                "citation_valid": draw(st.booleans()),
            }
        )
    return records


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(result_records())
def test_encoded_results_are_msgspec_lines(records: list[dict[str, Any]]) -> None:
    frame = frame_from_rows(records)
    assert list(result_rows(frame)) == records
    assert encode_results(frame) == encode_lines(records)
