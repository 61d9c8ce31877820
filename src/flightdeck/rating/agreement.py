"""How far the raters agree, per arm, and which labels they must settle between them.

For every pair of raters (in order of first appearance in the labels file) over the answers
both rated: Cohen's kappa and percent agreement on ``correct``, and the same on
"unsupported", taken per citation of the answer (a rater flags a citation by the spec's
rule: an entry equal to its uri, or a spanless entry equal to its file). The prevalence of
"correct" is printed beside kappa because kappa drops when nearly every answer gets the same
label even if the raters rarely disagree (Feinstein & Cicchetti 1990, "High agreement but
low kappa", J Clin Epidemiol 43:543-549); read a low kappa with a high or low prevalence
together with the percent agreement. Disagreements list each answer (and each citation) on
which the raters of that answer do not all give the same label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flightdeck.errors import InputError
from flightdeck.params.arm_names import check_arm_name
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.scoring.stats import Kappa, kappa_from_counts
from flightdeck.suite.records import Answer, Label, read_answers, read_labels, read_questions

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True, slots=True)
class PairAgreement:
    raters: tuple[str, str]
    correct: Kappa  # over the answers both rated
    unsupported: Kappa  # over the citations of the answers both rated


@dataclass(frozen=True, slots=True)
class Disagreement:
    id: str
    uri: str | None  # None: on "correct"; else on whether this citation is unsupported
    votes: dict[str, bool]  # rater -> correct, or rater -> flagged unsupported


@dataclass(frozen=True, slots=True)
class ArmAgreement:
    arm: str
    raters: tuple[str, ...]
    labels: int
    prevalence: float | None  # share of all labels that say correct
    prevalence_by_rater: dict[str, float | None]
    pairs: tuple[PairAgreement, ...]
    disagreements: tuple[Disagreement, ...]
    stale: tuple[str, ...]  # "<id> (<rater>)" of labels given to an older answer

    def to_json(self) -> dict[str, Any]:
        return {
            "raters": list(self.raters),
            "labels": self.labels,
            "prevalence": {"all": self.prevalence, "by_rater": dict(self.prevalence_by_rater)},
            "pairs": [
                {
                    "raters": list(p.raters),
                    "correct": _kappa_json(p.correct),
                    "unsupported": _kappa_json(p.unsupported),
                }
                for p in self.pairs
            ],
            "disagreements": [
                {"id": d.id, "uri": d.uri, "votes": dict(d.votes)} for d in self.disagreements
            ],
            "stale": list(self.stale),
        }


@dataclass(frozen=True, slots=True)
class SuiteAgreement:
    suite: str
    arms: tuple[ArmAgreement, ...]

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "arms": {a.arm: a.to_json() for a in self.arms}}


def _kappa_json(kappa: Kappa) -> dict[str, Any]:
    return {
        "kappa": kappa.value,
        "agreement": kappa.agreement,
        "n": kappa.n,
        "reason": kappa.reason,
    }


@dataclass(frozen=True, slots=True)
class ArmChoice:
    """Which arms a rater's work covers (#21): the decision's arms, plus any asked for.

    ``arms`` is None when params.yaml names no arms and none were asked for: then every arm.
    """

    arms: tuple[str, ...] | None
    not_yet: tuple[str, ...]  # params.yaml arms with nothing here yet
    left_out: tuple[str, ...]  # arms here that are neither params.yaml's nor asked for


def choose_arms(found: Sequence[str], *, scored: Sequence[str], asked: Sequence[str]) -> ArmChoice:
    """params.yaml's ``scored`` arms that are here, plus the ``asked`` ones (``--arm``).

    Rating load follows the decision: an arm params.yaml does not score (a scratch run) is
    rated only when asked for, and then mixed blind with the rest. ``found`` are the arms
    with files here; an asked arm must be one of them (the caller refuses it otherwise).
    """
    for arm in asked:
        check_arm_name(arm)
    if not scored and not asked:
        return ArmChoice(None, (), ())
    chosen = [a for a in scored if a in found] + [a for a in asked if a not in scored]
    chosen = list(dict.fromkeys(chosen))
    not_yet = tuple(a for a in scored if a not in found)
    if not chosen:
        raise InputError(
            "params.yaml",
            None,
            f"none of its arms ({', '.join(scored)}) has answers here yet; run or import "
            "them first, or name an arm with --arm",
        )
    left_out = tuple(a for a in found if a not in chosen) if scored else ()
    return ArmChoice(tuple(chosen), not_yet, left_out)


def suite_agreement(suite: SuiteFolder, *, arms: Sequence[str] | None = None) -> SuiteAgreement:
    """Agreement for each arm of ``suite`` (or only ``arms``) that has answers or labels.

    Refuses a sealed suite that changed since sealing, like every command that reads one.
    """
    opened = suite.opened(keys=False)
    opened.require_intact()
    question_ids = [q.id for q in read_questions(opened.questions)]
    found = agreement_arms(opened)
    for arm in arms or ():
        check_arm_name(arm)
        if arm not in found:
            raise InputError(
                opened.labels(arm),
                None,
                f"no labels or answers for arm {arm!r}; arms here: {', '.join(found) or 'none'}",
            )
    results = []
    for arm in arms or found:
        labels_path = opened.labels(arm)
        answers_path = opened.answers(arm)
        labels = read_labels(labels_path, question_ids) if labels_path.exists() else []
        answers = (
            {a.id: a for a in read_answers(answers_path, question_ids)}
            if answers_path.exists()
            else None
        )
        results.append(arm_agreement(arm, labels, answers, order=question_ids))
    return SuiteAgreement(opened.name, tuple(results))


def agreement_arms(suite: SuiteFolder) -> list[str]:
    """The arms agreement can read: those with labels or answers."""
    return sorted({*suite.labelled_arms(), *suite.arms()})


def arm_agreement(
    arm: str,
    labels: Sequence[Label],
    answers: dict[str, Answer] | None,
    *,
    order: Sequence[str] = (),
) -> ArmAgreement:
    """Agreement among one arm's labels; ``answers`` (by id) gives the citations to compare.

    Without answers, agreement on "unsupported" is left out (n = 0). The tables are polars
    frames: every rater pair's counts come from one self-join and group-by per question
    (``correct``) and per citation (flagged unsupported or not).
    """
    import polars as pl

    from flightdeck.scoring.tables import flagged

    raters = tuple(dict.fromkeys(label.rater for label in labels))
    rank = {qid: i for i, qid in enumerate(order)}
    ids = sorted({label.id for label in labels}, key=lambda i: (rank.get(i, len(rank)), i))
    id_rank = {qid: i for i, qid in enumerate(ids)}
    rater_rank = {r: i for i, r in enumerate(raters)}
    # One label per (rater, id), the last one given, as a rater's later label replaces hers.
    table = pl.DataFrame(
        {
            "label": range(len(labels)),
            "id": [lb.id for lb in labels],
            "rater": [rater_rank[lb.rater] for lb in labels],
            "correct": [lb.correct for lb in labels],
        },
        schema={"label": pl.Int64, "id": pl.String, "rater": pl.Int64, "correct": pl.Boolean},
    ).unique(["rater", "id"], keep="last", maintain_order=True)
    flags = pl.DataFrame(
        {
            "label": [i for i, lb in enumerate(labels) for _ in lb.unsupported],
            "entry": [entry for lb in labels for entry in lb.unsupported],
        },
        schema={"label": pl.Int64, "entry": pl.String},
    )
    cited = [
        (qid, pos, uri)
        for qid, answer in (answers or {}).items()
        for pos, uri in enumerate(dict.fromkeys(c.uri for c in answer.citations))
    ]
    cites = pl.DataFrame(
        {"id": [c[0] for c in cited], "pos": [c[1] for c in cited], "uri": [c[2] for c in cited]},
        schema={"id": pl.String, "pos": pl.Int64, "uri": pl.String},
    )
    marks = flagged(table.join(cites, on="id"), flags, on=["label"]).select(
        "id", "pos", "uri", "rater", pl.col("flagged").alias("correct")
    )
    by_pair = {
        "correct": _pair_counts(table, ["id"]),
        "unsupported": _pair_counts(marks, ["id", "pos"]),
    }

    pairs = []
    for i, a in enumerate(raters):
        for j in range(i + 1, len(raters)):
            correct, unsupported = (
                kappa_from_counts(**by_pair[what].get((i, j), _NONE)) for what in by_pair
            )
            if answers is None:
                unsupported = Kappa(None, None, 0, f"no answers/{arm}.jsonl lists the citations")
            pairs.append(PairAgreement((a, raters[j]), correct, unsupported))

    # Questions (then their citations, in the answer's order) whose raters differ.
    split = [
        ((id_rank[qid], -1), qid, None, votes) for qid, votes in _split_votes(table, ["id"]).items()
    ]
    split += [
        ((id_rank[item[0]], item[1]), item[0], item[2], votes)
        for item, votes in _split_votes(marks, ["id", "pos", "uri"]).items()
    ]
    split.sort(key=lambda d: d[0])
    disagreements = [
        Disagreement(qid, uri, {raters[r]: v for r, v in sorted(votes)})
        for _, qid, uri, votes in split
    ]

    stale = tuple(
        f"{label.id} ({label.rater})"
        for label in labels
        if answers is not None
        and label.id in answers
        and label.answer_sha256 is not None
        and label.answer_sha256 != answers[label.id].sha256
    )
    shares = table.group_by("rater").agg(pl.col("correct").sum().alias("yes"), pl.len())
    counted = {r: (yes, n) for r, yes, n in shares.iter_rows()}
    return ArmAgreement(
        arm=arm,
        raters=raters,
        labels=len(labels),
        prevalence=_share([label.correct for label in labels]),
        prevalence_by_rater={r: counted[i][0] / counted[i][1] for i, r in enumerate(raters)},
        pairs=tuple(pairs),
        disagreements=tuple(disagreements),
        stale=stale,
    )


_NONE = {"n": 0, "agree": 0, "yes_a": 0, "yes_b": 0}


def _pair_counts(frame: pl.DataFrame, on: list[str]) -> dict[tuple[int, int], dict[str, int]]:
    """(rater a, rater b) -> what kappa needs over the items both labelled, a before b."""
    import polars as pl

    both = frame.join(frame, on=on, suffix="_b").filter(pl.col("rater") < pl.col("rater_b"))
    counts = both.group_by("rater", "rater_b").agg(
        pl.len().alias("n"),
        (pl.col("correct") == pl.col("correct_b")).sum().alias("agree"),
        pl.col("correct").sum().alias("yes_a"),
        pl.col("correct_b").sum().alias("yes_b"),
    )
    return {
        (row["rater"], row["rater_b"]): {k: int(row[k]) for k in _NONE}
        for row in counts.iter_rows(named=True)
    }


def _split_votes(frame: pl.DataFrame, on: list[str]) -> dict[Any, list[tuple[int, bool]]]:
    """Items whose raters do not all give the same label -> [(rater, label), ...]."""
    import polars as pl

    split = (
        frame.group_by(on)
        .agg(pl.col("rater"), pl.col("correct"), pl.col("correct").n_unique().alias("labels"))
        .filter(pl.col("labels") > 1)
    )
    out: dict[Any, list[tuple[int, bool]]] = {}
    for row in split.iter_rows(named=True):
        item = row[on[0]] if len(on) == 1 else tuple(row[c] for c in on)
        out[item] = list(zip(row["rater"], row["correct"], strict=True))
    return out


def _share(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None
