"""The agreement tables (polars self-joins and group-bys) against the plain-Python loops.

`reference_agreement` is the first version's `arm_agreement`, a loop per rater pair and per
answer, kept here as the oracle: on any labels the frames must give the same kappas, the
same disagreements in the same order and the same prevalences.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.rating.agreement import (
    ArmAgreement,
    Disagreement,
    PairAgreement,
    arm_agreement,
)
from flightdeck.scoring.stats import Kappa, cohens_kappa
from flightdeck.suite.citations import is_flagged_unsupported
from flightdeck.suite.records import Answer, Label, Source

URIS = ["r/a.md", "r/a.md#L1", "r/a.md#L1#L2", "r/b.md", "r/b.md#L2-L3", "https://x#L1"]


def _share_of_true(values: Sequence[bool]) -> float | None:
    """The test's own share of True values (None for no values), the loop the frame must match."""
    return sum(values) / len(values) if values else None


def reference_agreement(
    arm: str,
    labels: Sequence[Label],
    answers: dict[str, Answer] | None,
    *,
    order: Sequence[str] = (),
) -> ArmAgreement:
    """Agreement among one arm's labels; ``answers`` (by id) gives the citations to compare.

    Without answers, agreement on "unsupported" is left out (n = 0).
    """
    raters = tuple(dict.fromkeys(label.rater for label in labels))
    by_rater: dict[str, dict[str, Label]] = {r: {} for r in raters}
    for label in labels:
        by_rater[label.rater][label.id] = label
    rank = {qid: i for i, qid in enumerate(order)}
    ids = sorted({label.id for label in labels}, key=lambda i: (rank.get(i, len(rank)), i))

    def flagged(label: Label, uri: str) -> bool:
        return is_flagged_unsupported(uri, label.unsupported)

    def citations(qid: str) -> list[str]:
        if answers is None or qid not in answers:
            return []
        return list(dict.fromkeys(c.uri for c in answers[qid].citations))

    pairs = []
    for i, a in enumerate(raters):
        for b in raters[i + 1 :]:
            both = [qid for qid in ids if qid in by_rater[a] and qid in by_rater[b]]
            correct = cohens_kappa(
                [by_rater[a][q].correct for q in both], [by_rater[b][q].correct for q in both]
            )
            cites = [(q, uri) for q in both for uri in citations(q)]
            unsupported = cohens_kappa(
                [flagged(by_rater[a][q], uri) for q, uri in cites],
                [flagged(by_rater[b][q], uri) for q, uri in cites],
            )
            if answers is None:
                unsupported = Kappa(None, None, 0, f"no answers/{arm}.jsonl lists the citations")
            pairs.append(PairAgreement((a, b), correct, unsupported))

    disagreements = []
    for qid in ids:
        given = {r: by_rater[r][qid] for r in raters if qid in by_rater[r]}
        if len(given) < 2:
            continue
        votes = {r: label.correct for r, label in given.items()}
        if len(set(votes.values())) > 1:
            disagreements.append(Disagreement(qid, None, votes))
        for uri in citations(qid):
            marks = {r: flagged(label, uri) for r, label in given.items()}
            if len(set(marks.values())) > 1:
                disagreements.append(Disagreement(qid, uri, marks))

    stale = tuple(
        f"{label.id} ({label.rater})"
        for label in labels
        if answers is not None
        and label.id in answers
        and label.answer_sha256 is not None
        and label.answer_sha256 != answers[label.id].sha256
    )
    return ArmAgreement(
        arm=arm,
        raters=raters,
        labels=len(labels),
        prevalence=_share_of_true([label.correct for label in labels]),
        prevalence_by_rater={
            r: _share_of_true([label.correct for label in by_rater[r].values()]) for r in raters
        },
        pairs=tuple(pairs),
        disagreements=tuple(disagreements),
        stale=stale,
    )


@st.composite
def arms(draw: st.DrawFn) -> tuple[list[Label], dict[str, Answer] | None, list[str]]:
    ids = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), min_size=1, unique=True))
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(ids), st.sampled_from(["ana", "bo", "cy", "di"])),
            unique=True,
            max_size=12,
        )
    )
    labels = [
        Label(
            id=qid,
            rater=rater,
            correct=draw(st.booleans()),
            unsupported=tuple(draw(st.lists(st.sampled_from(URIS), max_size=2))),
            answer_sha256=None,
        )
        for qid, rater in pairs
    ]
    answers = None
    if draw(st.booleans()):
        answers = {
            qid: Answer(
                id=qid,
                answer="a",
                citations=tuple(
                    Source(uri=u, sha256="h")
                    for u in draw(st.lists(st.sampled_from(URIS), max_size=4))
                ),
                sha256="0" * 64,
            )
            for qid in ids
            if draw(st.booleans())  # some rated ids were not answered
        }
    order = draw(st.permutations(ids))
    return labels, answers, list(order)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(arms())
def test_frames_agree_with_the_loops(
    arm: tuple[list[Label], dict[str, Answer] | None, list[str]],
) -> None:
    labels, answers, order = arm
    got = arm_agreement("x", labels, answers, order=order)
    want = reference_agreement("x", labels, answers, order=order)
    assert got == want
    assert got.to_json() == want.to_json()
