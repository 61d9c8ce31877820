"""The spec's scoring rules for one arm, and the paired comparison of two arms.

Everything here is pure: validated records in, frozen results out. The rules, in the
spec's words: correctness is the raters' majority (a tie is incorrect); each citation is
fabricated, stale, unsupported or valid, in that order; an answer is citation-valid when
it cites at least one source and every citation is valid; a missing answer is incorrect
and invalid.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, is_not, ne
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.errors import InputError
from flightdeck.scoring.bootstrap import paired_bootstrap
from flightdeck.scoring.decision import Decision, decide
from flightdeck.scoring.stats import Kappa, Proportion, kappa_from_counts, wilson_interval
from flightdeck.suite.citations import CitationClass, first_unflagging
from flightdeck.suite.records import Answer, ArmMeta, Key, Label, Question

if TYPE_CHECKING:
    import polars as pl

    from flightdeck.scoring.tables import ArmFrames, SuiteTables

METRICS = ("correctness", "citation_validity")
METRIC_WORDS = {"correctness": "correctness", "citation_validity": "citation validity"}
TOLERANCE = 1e-9


@dataclass(frozen=True)
class QuestionResult:
    id: str
    kind: str
    answered: bool
    votes: dict[str, bool]
    correct: bool
    citations: tuple[tuple[str, CitationClass], ...]
    citation_valid: bool

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "answered": self.answered,
            "votes": self.votes,
            "majority": self.correct,
            "correct": self.correct,
            "citations": [{"uri": uri, "class": str(cls)} for uri, cls in self.citations],
            "citation_valid": self.citation_valid,
        }


@dataclass(frozen=True)
class ArmScore:
    arm: str
    n: int
    answered: int
    correctness: Proportion
    citation_validity: Proportion
    citations: dict[str, int]
    uncited: int
    missing: int
    kappa: Kappa
    raters: tuple[str, ...]
    table: pl.DataFrame = field(compare=False, repr=False)  # tables.result_schema, suite order
    meta: ArmMeta | None = None
    answers_sha256: str = ""
    labels_sha256: str = ""
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def results(self) -> tuple[QuestionResult, ...]:
        """The per-question results as objects (the frame ``table`` holds the same)."""
        from flightdeck.scoring.results import result_rows

        return tuple(
            QuestionResult(
                r["id"],
                r["kind"],
                r["answered"],
                r["votes"],
                r["correct"],
                tuple((c["uri"], CitationClass(c["class"])) for c in r["citations"]),
                r["citation_valid"],
            )
            for r in result_rows(self.table)
        )

    def vector(self, metric: str) -> list[bool]:
        """Per-question outcomes in suite order, for paired comparisons."""
        column = "correct" if metric == "correctness" else "citation_valid"
        values: list[bool] = self.table[column].to_list()
        return values


def check_labels(
    labels_path: Path,
    answers: Mapping[str, Answer],
    labels: Sequence[Label],
    *,
    min_raters: int,
    frames: ArmFrames | None = None,
) -> None:
    """Every label rates an existing, unchanged answer; every answer has enough raters.

    Two typos that would change results are refused on the label's line: an ``unsupported``
    entry that flags none of the answer's citations, and a rater name that differs from
    another only in case or surrounding spaces (one person under two names would count as two
    raters; we refuse rather than guess which spelling is meant). ``frames`` are the arm's
    (`scoring/tables.py`) when the caller scores it too: its columns are read once.
    """
    from flightdeck.scoring.tables import arm_frames

    if frames is None:
        frames = arm_frames(answers.values(), labels)
    # The first spelling of each name, in file order: a label whose rater is written
    # otherwise is refused. Only the few distinct raters are compared one by one.
    names = dict.fromkeys(frames.raters)  # distinct, in file order
    spelled: dict[str, str] = {}
    for rater in names:
        spelled.setdefault(rater.strip().casefold(), rater)
    respelled = {rater for rater in names if spelled[rater.strip().casefold()] != rater}
    raters_by_id = Counter(frames.label_ids)
    covered = answers.keys() <= raters_by_id.keys()
    # Every label rates an answer when the ids rated are the answers' ids.
    rated_all = covered and len(raters_by_id) == len(answers)
    odd_ids = set() if rated_all else raters_by_id.keys() - answers.keys()
    # One cheap pass picks the labels any rule could refuse; the rules below run on them
    # alone, in file order, so the first label refused and its message are as if every
    # label had been read (a label outside the pick passes every rule).
    for label in _picked(labels, answers, frames, respelled, odd_ids):
        first = spelled[label.rater.strip().casefold()]
        if first != label.rater:
            raise InputError(
                labels_path,
                label.line,
                f"rater {label.rater!r} differs from {first!r} only in case or spaces; "
                "write one name for one person",
            )
        answer = answers.get(label.id)
        if answer is None:
            raise InputError(
                labels_path,
                label.line,
                f"label for id {label.id!r}, which this arm did not answer; remove the line",
            )
        if label.answer_sha256 is not None and label.answer_sha256 != answer.sha256:
            raise InputError(
                labels_path,
                label.line,
                f"answer {label.id!r} changed after {label.rater!r} rated it (answer_sha256 "
                "differs); rate the new answer again",
            )
        entry = first_unflagging(label.unsupported, [c.uri for c in answer.citations])
        if entry is not None:
            raise InputError(
                labels_path,
                label.line,
                f"unsupported entry {entry!r} is not a citation of answer {label.id!r}; "
                "copy the cited uri exactly (or drop its #L span to flag the whole file)",
            )
    enough = covered and min(raters_by_id.values(), default=min_raters) >= min_raters
    if not enough and (short := [qid for qid in answers if raters_by_id[qid] < min_raters]):
        shown = ", ".join(map(_quote, short[:10]))
        shown += f" and {len(short) - 10} more" if len(short) > 10 else ""
        raise InputError(
            labels_path,
            None,
            f"fewer than {min_raters} raters on {len(short)} answer(s): {shown}; have them "
            "rated (`flightdeck knowledge rate`) or lower min_raters",
        )


def _picked(
    labels: Sequence[Label],
    answers: Mapping[str, Answer],
    frames: ArmFrames,
    respelled: set[str],
    odd_ids: set[str],
) -> list[Label]:
    """The labels a rule of check_labels could refuse, in file order: those with an
    ``unsupported`` entry that flags none of the answer's citations, a hash other than their
    answer's, a rater spelled otherwise or an id this arm did not answer.

    Each kind is found by a pass in C: the entries by a polars plan over every entry and
    citation at once (`scoring/tables.py`), the hashes by ``compress`` over the records'
    attributes, the names and ids by set differences; the few picked are put back in file
    order by their positions.
    """
    from flightdeck.scoring.tables import unflagging_labels

    where = range(len(labels))
    picked = set(unflagging_labels(frames))
    hashes = map(attrgetter("answer_sha256"), labels)
    bound = list(compress(where, map(is_not, hashes, repeat(None))))
    if bound:
        rated = [labels[i] for i in bound]
        theirs = map(answers.get, map(attrgetter("id"), rated), repeat(_NO_ANSWER))
        given = map(attrgetter("answer_sha256"), rated)
        picked.update(compress(bound, map(ne, given, map(attrgetter("sha256"), theirs))))
    if respelled or odd_ids:
        picked.update(i for i, x in enumerate(labels) if x.rater in respelled or x.id in odd_ids)
    return [labels[i] for i in sorted(picked)]


# What a label of an id with no answer is compared with: a hash no label gives (and such a
# label is picked anyway, for its id).
_NO_ANSWER = Answer(id="", answer="", citations=())


def _quote(qid: str) -> str:
    """An id as it can be read back: plain when simple, repr when it holds , spaces or escapes."""
    return qid if qid.isprintable() and not any(c in qid for c in ", '\"") else repr(qid)


def score_arm(
    arm: str,
    questions: Sequence[Question],
    keys: Mapping[str, Key],
    answers: Mapping[str, Answer],
    labels: Sequence[Label],
    *,
    confidence: float,
    meta: ArmMeta | None = None,
    suite: SuiteTables | None = None,
    frames: ArmFrames | None = None,
) -> ArmScore:
    """Apply the spec's rules to one arm's validated answers and labels.

    The rules run as polars joins and group-bys (`scoring/tables.py`); ``suite`` is the
    questions' and keys' frames when the caller scores several arms of one suite; ``frames``
    the arm's answers and labels as frames (`scoring/tables.py`) when already built.
    """
    from flightdeck.scoring import tables

    if suite is None:
        suite = tables.suite_tables(questions, keys)
    if frames is None:
        frames = tables.arm_frames(answers.values(), labels)
    citations = frames.citations
    results = tables.scored_frame(suite, frames)
    first_two = tables.first_two_raters(frames.labels)
    raters = first_two.raters
    if len(raters) < 2:
        kappa = Kappa(None, None, 0, "undefined: only one rater labelled this arm")
    else:
        kappa = kappa_from_counts(
            n=first_two.n, agree=first_two.agree, yes_a=first_two.yes_a, yes_b=first_two.yes_b
        )
    n = len(questions)
    n_correct = int(results["correct"].sum())
    n_valid = int(results["citation_valid"].sum())
    counts = tables.class_counts(results)
    uncited = len(answers) - citations["id"].n_unique()  # classify keeps a row per citation
    return ArmScore(
        arm=arm,
        n=n,
        answered=len(answers),
        correctness=wilson_interval(n_correct, n, confidence=confidence),
        citation_validity=wilson_interval(n_valid, n, confidence=confidence),
        citations=counts,
        uncited=uncited,
        missing=n - len(answers),
        kappa=kappa,
        raters=raters,
        table=results,
        meta=meta,
        by_kind=tables.by_kind(results),
    )


@dataclass(frozen=True, kw_only=True)
class MetricComparison:
    metric: str
    diff: float
    lo: float
    hi: float
    shown: bool
    ruled_out: bool
    candidate_only: int  # candidate right, baseline wrong
    baseline_only: int  # baseline right, candidate wrong
    min_detectable: float | None
    statement: str
    decision: Decision | None = None  # the rule in force, its bounds and sizes


@dataclass(frozen=True)
class Comparison:
    baseline: str
    candidate: str
    threshold: float  # points
    metrics: dict[str, MetricComparison]

    @property
    def key(self) -> str:
        return f"{self.candidate}_vs_{self.baseline}"


def compare_arms(
    baseline: ArmScore,
    candidate: ArmScore,
    *,
    seed: int,
    resamples: int,
    confidence: float,
    threshold: float,
    decision: str = "calibrated",
    cache_dir: Path | None = None,
) -> Comparison:
    """Paired difference candidate - baseline per metric, with the decision rule in words.

    Each metric's interval is what its own ``default_rng(seed)`` gives, so it does not
    depend on which other metrics were compared. The verdict is the rule ``decision``'s
    (`scoring.decision`); ``cache_dir`` keeps its calibrated levels.
    """
    import numpy as np

    metrics = {}
    vectors = [
        (
            np.asarray(candidate.vector(m), dtype=np.float64),
            np.asarray(baseline.vector(m), dtype=np.float64),
        )
        for m in METRICS
    ]
    # Each metric from its own default_rng(seed): its interval does not depend on the others.
    boots = [
        paired_bootstrap(c, b, resamples=resamples, confidence=confidence, rng=seed)
        for c, b in vectors
    ]
    for metric, (c, b), boot in zip(METRICS, vectors, boots, strict=True):
        c_only = int(np.sum((c == 1) & (b == 0)))
        b_only = int(np.sum((b == 1) & (c == 0)))
        n = len(c)
        verdict = decide(
            n,
            c_only,
            b_only,
            int(np.sum((c == 1) & (b == 1))),
            threshold=threshold,
            confidence=confidence,
            rule=decision,
            seeded_lo=float(boot.lo),
            seeded_hi=float(boot.hi),
            resamples=resamples,
            cache_dir=cache_dir,
        )
        shown = verdict.shown.holds
        ruled_out = verdict.ruled_out is not None and verdict.ruled_out.holds
        words = METRIC_WORDS[metric]
        if shown:
            statement = f"baseline is shown to lose by at least {threshold:g} points on {words}"
        else:
            statement = f"baseline is not shown to lose by {threshold:g} points on {words}"
            if ruled_out:
                statement += f"; a loss of {threshold:g} points or more is ruled out"
        metrics[metric] = MetricComparison(
            metric=metric,
            diff=float(boot.diff),
            lo=float(boot.lo),
            hi=float(boot.hi),
            shown=bool(shown),
            ruled_out=bool(ruled_out),
            candidate_only=c_only,
            baseline_only=b_only,
            min_detectable=verdict.min_detectable,
            statement=statement,
            decision=verdict,
        )
    return Comparison(baseline.arm, candidate.arm, threshold, metrics)
