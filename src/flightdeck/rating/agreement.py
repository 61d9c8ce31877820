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
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.project import Suite, as_suite, check_arm_name
from flightdeck.scoring.stats import Kappa, cohens_kappa
from flightdeck.suite.citations import is_flagged_unsupported
from flightdeck.suite.records import Answer, Label, read_answers, read_labels, read_questions


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


def suite_agreement(suite: Suite | Path, *, arms: Sequence[str] | None = None) -> SuiteAgreement:
    """Agreement for each arm of ``suite`` (or only ``arms``) that has answers or labels.

    Refuses a sealed suite that changed since sealing, like every command that reads one.
    """
    opened = as_suite(suite, keys=False)
    opened.require_intact()
    question_ids = [q.id for q in read_questions(opened.questions)]
    found = sorted({*opened.labelled_arms(), *opened.arms()})
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


def arm_agreement(
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
        prevalence=_share([label.correct for label in labels]),
        prevalence_by_rater={
            r: _share([label.correct for label in by_rater[r].values()]) for r in raters
        },
        pairs=tuple(pairs),
        disagreements=tuple(disagreements),
        stale=stale,
    )


def _share(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None
