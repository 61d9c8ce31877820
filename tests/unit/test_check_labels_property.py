"""check_labels against the rules read one label at a time, over every label in file order.

check_labels picks the few labels a rule could refuse with passes over whole columns and
reads only those (`scoring/rules.py`, ``_picked``); this holds it to the plain reading: the
first label refused, the message, or the raters' count, are those of the loop below.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.errors import InputError
from flightdeck.scoring.rules import check_labels
from flightdeck.suite.citations import first_unflagging, is_flagged_unsupported
from flightdeck.suite.records import Answer, Label, Source

LABELS = Path("labels.jsonl")
URIS = [
    "r/a.md",
    "r/a.md#L1",
    "r/a.md#L1#L2",
    "r/a.md#L2-L3",
    "r/b.md",
    "r/b.md#L1",
    "r/a.md#x",
    "https://x#L1",
    "https://x",
]
HASHES = ["1" * 64, "2" * 64]


def reference(answers: dict[str, Answer], labels: list[Label], min_raters: int) -> str | None:
    """The rules as the spec words them, label by label (the message check_labels must give)."""
    spelled: dict[str, str] = {}
    for label in labels:
        spelled.setdefault(label.rater.strip().casefold(), label.rater)
    for label in labels:
        first = spelled[label.rater.strip().casefold()]
        where = f"{LABELS}:{label.line}: "
        if first != label.rater:
            return (
                f"{where}rater {label.rater!r} differs from {first!r} only in case or spaces; "
                "write one name for one person"
            )
        answer = answers.get(label.id)
        if answer is None:
            return (
                f"{where}label for id {label.id!r}, which this arm did not answer; remove the line"
            )
        if label.answer_sha256 is not None and label.answer_sha256 != answer.sha256:
            return (
                f"{where}answer {label.id!r} changed after {label.rater!r} rated it "
                "(answer_sha256 differs); rate the new answer again"
            )
        cited = [c.uri for c in answer.citations]
        for entry in label.unsupported:
            if not any(is_flagged_unsupported(u, [entry]) for u in cited):
                return (
                    f"{where}unsupported entry {entry!r} is not a citation of answer "
                    f"{label.id!r}; copy the cited uri exactly (or drop its #L span to flag the "
                    "whole file)"
                )
    count = Counter(label.id for label in labels)
    short = [qid for qid in answers if count[qid] < min_raters]
    if short:
        shown = ", ".join(short[:10]) + (f" and {len(short) - 10} more" if len(short) > 10 else "")
        return (
            f"{LABELS}: fewer than {min_raters} raters on {len(short)} answer(s): {shown}; have "
            "them rated (`flightdeck knowledge rate`) or lower min_raters"
        )
    return None


@st.composite
def arms(draw: st.DrawFn) -> tuple[dict[str, Answer], list[Label], int]:
    ids = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), min_size=1, unique=True))
    source = st.builds(Source, uri=st.sampled_from(URIS), sha256=st.sampled_from(HASHES))
    answers = {
        q: Answer(
            id=q,
            answer="a",
            citations=tuple(draw(st.lists(source, max_size=3))),
            sha256=draw(st.sampled_from(HASHES)),
        )
        for q in ids
    }
    rated = st.sampled_from([*ids, *ids, "q9"])  # now and then an id with no answer
    label = st.builds(
        Label,
        id=rated,
        rater=st.sampled_from(["ana", "bo", "Bo", "ana ", "cy"]),
        correct=st.booleans(),
        unsupported=st.lists(st.sampled_from(URIS), max_size=2).map(tuple),
        answer_sha256=st.none() | st.sampled_from(HASHES),
    )
    drawn = draw(st.lists(label, max_size=10))
    labels = [
        Label(lb.id, lb.rater, lb.correct, lb.unsupported, lb.answer_sha256, line=n)
        for n, lb in enumerate(drawn, start=1)
    ]
    return answers, labels, draw(st.integers(min_value=1, max_value=3))


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(arms())
def test_check_labels_refuses_as_the_label_by_label_rules(
    arm: tuple[dict[str, Answer], list[Label], int],
) -> None:
    answers, labels, min_raters = arm
    expected = reference(answers, labels, min_raters)
    if expected is None:
        check_labels(LABELS, answers, labels, min_raters=min_raters)
    else:
        with pytest.raises(InputError, match=re.escape(expected.split(": ", 1)[1])) as refused:
            check_labels(LABELS, answers, labels, min_raters=min_raters)
        assert str(refused.value) == expected


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(URIS) | st.text(alphabet="ab#L1-:/", max_size=8), max_size=3),
    st.lists(st.sampled_from(URIS) | st.text(alphabet="ab#L1-:/", max_size=8), max_size=3),
)
def test_first_unflagging_is_is_flagged_unsupported(entries: list[str], cited: list[str]) -> None:
    unflagging = [e for e in entries if not any(is_flagged_unsupported(u, [e]) for u in cited)]
    assert first_unflagging(entries, cited) == next(iter(unflagging), None)
