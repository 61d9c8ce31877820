"""An arm's frames (scoring/tables.arm_frames): the columns as the records hold them, and the
entries that flag no citation as ``first_unflagging`` reads them, label by label; the
citations flagged (tables.flagged) and the labels that flag none (unflagging_labels), both
made from one polars match, against ``is_flagged_unsupported`` citation by citation."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flightdeck.scoring.tables import arm_frames, flagged, unflagging_labels
from flightdeck.suite.citations import first_unflagging, is_flagged_unsupported
from flightdeck.suite.records import Answer, Label, Source

H1, H2 = "1" * 64, "2" * 64
# Spans, a "#" that starts no span, a span after a "#", opaque uris with and without one.
URIS = [
    "r/a.md",
    "r/a.md#L1",
    "r/a.md#L1#L2",
    "r/a.md#L2-L3",
    "r/b.md",
    "r/a.md#x",
    "https://x#L1",
    "https://x",
]


# Up to 3 answers citing up to 3 uris each; labels of an answer by number (3 may be past the
# answers: no answer), each with up to 3 ``unsupported`` entries.
_URI = st.sampled_from(URIS) | st.text(alphabet="ab#L1-:/", max_size=8)
CITED = st.lists(st.lists(_URI, max_size=3), min_size=1, max_size=3)
RATED = st.lists(
    st.tuples(st.integers(min_value=0, max_value=3), st.lists(_URI, max_size=3)), max_size=8
)


def test_frames_hold_every_record_in_order() -> None:
    answers = [
        Answer(id="q1", answer="a", citations=(Source("r/a.md#L1", H1), Source("r/b.md", H2))),
        Answer(id="q2", answer="b", citations=()),
        Answer(id="q3", answer="c", citations=(Source("https://x", H2),)),
    ]
    labels = [
        Label("q1", "ana", True, ("r/a.md", "r/a.md#L1")),
        Label("q2", "ana", False),
        Label("q3", "bo", True, ("https://x",)),
        Label("q9", "bo", False),
    ]
    frames = arm_frames(answers, labels)
    assert frames.answered["id"].to_list() == ["q1", "q2", "q3"]
    assert frames.citations.rows() == [
        ("q1", "r/a.md#L1", H1),
        ("q1", "r/b.md", H2),
        ("q3", "https://x", H2),
    ]
    assert frames.labels.rows() == [
        ("q1", "ana", True),
        ("q2", "ana", False),
        ("q3", "bo", True),
        ("q9", "bo", False),
    ]
    assert frames.flags.rows() == [
        (0, "q1", "r/a.md"),
        (0, "q1", "r/a.md#L1"),
        (2, "q3", "https://x"),
    ]
    assert frames.label_ids == ["q1", "q2", "q3", "q9"]
    assert frames.raters == ["ana", "ana", "bo", "bo"]
    assert frames.flags.schema == pl.Schema(
        {"label": pl.UInt32, "id": pl.String, "entry": pl.String}
    )


def test_no_answers_and_no_labels() -> None:
    frames = arm_frames([], [])
    assert frames.citations.height == frames.flags.height == frames.labels.height == 0
    assert unflagging_labels(frames) == []


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(CITED, RATED)
def test_unflagging_labels_is_first_unflagging(
    cited: list[list[str]], rated: list[tuple[int, list[str]]]
) -> None:
    answers = {
        f"q{n}": Answer(id=f"q{n}", answer="a", citations=tuple(Source(u, H1) for u in uris))
        for n, uris in enumerate(cited)
    }
    labels = [Label(f"q{n}", "ana", True, tuple(entries)) for n, entries in rated]
    expected = [
        i
        for i, label in enumerate(labels)
        if label.unsupported
        and (
            label.id not in answers
            or first_unflagging(label.unsupported, [c.uri for c in answers[label.id].citations])
            is not None
        )
    ]
    assert unflagging_labels(arm_frames(answers.values(), labels)) == expected


@settings(deadline=None)
@given(CITED, RATED)
# A spanless entry flags every span of its file, an opaque uri only whole; a spanned entry
# flags no citation whose file it spells ("r/a.md#L1#L2" without its span is "r/a.md#L1").
@example([["r/a.md#L2-L3", "https://x#L1"], []], [(0, ["r/a.md", "https://x"]), (1, ["r/a.md"])])
@example([["r/a.md#L1#L2", "r/a.md#L1"]], [(0, ["r/a.md#L1"]), (0, ["r/a.md#L1#L2", "r/b.md"])])
def test_flagged_and_unflagging_labels_are_is_flagged_unsupported(
    cited: list[list[str]], rated: list[tuple[int, list[str]]]
) -> None:
    answers = [
        Answer(id=f"q{n}", answer="a", citations=tuple(Source(u, H1) for u in uris))
        for n, uris in enumerate(cited)
    ]
    labels = [Label(f"q{n}", "ana", True, tuple(entries)) for n, entries in rated]
    frames = arm_frames(answers, labels)
    entries_of = {
        a.id: [e for lb in labels if lb.id == a.id for e in lb.unsupported] for a in answers
    }
    marks = flagged(frames.citations, frames.flags, on=["id"])
    assert marks.drop("flagged").equals(frames.citations)  # every citation, in order
    assert marks["flagged"].to_list() == [
        is_flagged_unsupported(c.uri, entries_of[a.id]) for a in answers for c in a.citations
    ]
    cites_of = {a.id: [c.uri for c in a.citations] for a in answers}
    assert unflagging_labels(frames) == [
        i
        for i, label in enumerate(labels)
        if any(
            not any(is_flagged_unsupported(uri, [entry]) for uri in cites_of.get(label.id, []))
            for entry in label.unsupported
        )
    ]
