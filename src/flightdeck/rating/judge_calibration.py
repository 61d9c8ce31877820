"""Calibrate a judge against the people: may it stand in for them on arms they never rated?

Over every answer that both the people (at least ``min_raters`` current labels; their
majority, a tie counting as incorrect, as in scoring) and the judge (a current judgement by
the judge as it is now) rated, across all arms: Cohen's kappa of judge vs majority on
``correct``, with a seeded percentile bootstrap interval over answers, percent agreement,
the 2x2 table, kappa per question kind, and the answers they disagree on, for adjudication.

A judge is *calibrated* when kappa >= ``judge_min_kappa`` (0.6: "substantial" agreement in
Landis & Koch 1977, "The measurement of observer agreement for categorical data",
Biometrics 33:159-174) on at least :data:`MIN_ANSWERS` answers. The point estimate decides,
as the issue asks; the interval beside it says how far to trust it (with 30-60 answers it is
wide). The calibration holds for the judge's identity only (kind, model, prompt sha256,
temperature, rules): :func:`require_calibrated` refuses a judge that changed since.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flightdeck.errors import InputError
from flightdeck.params.sections import JudgeSpec
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.rating.calibration_format import (
    MIN_ANSWERS,
    Agreement,
    AgreementTable,
    ArmCounts,
    Calibration,
    Disagreement,
    FactAgreement,
    describe,
    require_calibrated,
    write_calibration,
)
from flightdeck.rating.judgements import Judgement, current_judgements, judgements_path
from flightdeck.rating.judges import judge_identity, resolve_judge
from flightdeck.scoring.stats import cohens_kappa
from flightdeck.suite.records import (
    Answer,
    Label,
    read_answers,
    read_keys,
    read_labels,
    read_questions,
)


@dataclass(frozen=True, slots=True)
class KappaInterval:
    """A bootstrap interval of kappa (None when no draw had one) and the draws without one."""

    lo: float | None
    hi: float | None
    undefined_draws: int


def bootstrap_kappa(
    judge: Sequence[bool],
    people: Sequence[bool],
    *,
    resamples: int,
    confidence: float,
    seed: int,
) -> KappaInterval:
    """Percentile bootstrap interval of Cohen's kappa over answers, and the undefined draws.

    One index matrix ``default_rng(seed).integers(0, n, (resamples, n))`` resamples answers
    (judge and people together); kappa is computed per row with the same formula as
    :func:`flightdeck.scoring.stats.cohens_kappa`. A row in which p_e = 1 (every drawn answer
    got one label from both) has no kappa and is left out; the count comes back so a reader
    can see it. The bounds are numpy's linear-interpolation percentiles of the rest.
    """
    import numpy as np

    a = np.asarray(judge, dtype=np.float64)
    b = np.asarray(people, dtype=np.float64)
    n = len(a)
    if n == 0:
        return KappaInterval(None, None, resamples)
    idx = np.random.default_rng(seed).integers(0, n, (resamples, n))
    ra, rb = a[idx], b[idx]
    po = np.mean(ra == rb, axis=1)
    pa, pb = ra.mean(axis=1), rb.mean(axis=1)
    pe = pa * pb + (1 - pa) * (1 - pb)
    defined = pe < 1
    kappas = (po[defined] - pe[defined]) / (1 - pe[defined])
    undefined = int(resamples - defined.sum())
    if kappas.size == 0:
        return KappaInterval(None, None, undefined)
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(kappas, [tail, 100 - tail])
    return KappaInterval(float(lo), float(hi), undefined)


@dataclass(frozen=True)
class Rated:
    """One answer both rated."""

    arm: str
    id: str
    kind: str
    people: bool  # the majority
    votes: dict[str, bool]
    judgement: Judgement
    labels: tuple[Label, ...]


def _people(
    answers: dict[str, Answer], labels: Sequence[Label], min_raters: int
) -> dict[str, list[Label]]:
    """Current labels (bound to the answer as it is) of answers with enough raters."""
    by_id: dict[str, list[Label]] = {}
    for label in labels:
        answer = answers.get(label.id)
        if answer is None or label.answer_sha256 not in (None, answer.sha256):
            continue
        by_id.setdefault(label.id, []).append(label)
    return {qid: ls for qid, ls in by_id.items() if len(ls) >= min_raters}


@dataclass(frozen=True)
class Collected:
    """The answers both the judge and the people rated, and each arm's counts."""

    rated: list[Rated]
    arms: dict[str, ArmCounts]


def collect(suite: SuiteFolder, spec: JudgeSpec, *, min_raters: int) -> Collected:
    """The answers both rated, across arms, and counts of what was left out and why."""
    identity = judge_identity(spec)
    questions = {q.id: q for q in read_questions(suite.questions)}
    rated: list[Rated] = []
    counts: dict[str, ArmCounts] = {}
    for arm in suite.arms():
        answers = {a.id: a for a in read_answers(suite.answers(arm), list(questions))}
        labels_path = suite.labels(arm)
        labels = read_labels(labels_path, list(questions)) if labels_path.is_file() else []
        people = _people(answers, labels, min_raters)
        judged = current_judgements(judgements_path(suite, spec.name, arm), answers, identity)
        both = [qid for qid in questions if qid in people and qid in judged]
        counts[arm] = ArmCounts(
            answers=len(answers), rated_by_people=len(people), judged=len(judged), both=len(both)
        )
        for qid in both:
            votes = {lb.rater: lb.correct for lb in people[qid]}
            yes = sum(votes.values())
            rated.append(
                Rated(
                    arm,
                    qid,
                    questions[qid].kind,
                    yes > len(votes) - yes,
                    votes,
                    judged[qid],
                    tuple(people[qid]),
                )
            )
    return Collected(rated, counts)


def _agreement(judge: Sequence[bool], people: Sequence[bool]) -> Agreement:
    k = cohens_kappa(list(judge), list(people))
    return Agreement(n=k.n, kappa=k.value, agreement=k.agreement, reason=k.reason)


def _fact_level(rated: Sequence[Rated], facts_of: dict[str, tuple[str, ...]]) -> FactAgreement:
    """Judge vs people per required fact, where people ticked facts (labels with ``facts``).

    One pair per (answer, fact): the judge's ``present`` against the majority of the raters
    who ticked facts on that answer (a tie counts as absent, as a tie counts as incorrect).
    Cohen's kappa over those pairs; labels without ticks are left out and counted.
    """
    pairs: list[tuple[bool, bool]] = []
    answers = without = 0
    for r in rated:
        ticked = [label for label in r.labels if label.facts is not None]
        without += len(r.labels) - len(ticked)
        if not ticked:
            continue
        answers += 1
        verdicts = {v.fact: v.present for v in r.judgement.facts}
        for i, fact in enumerate(facts_of[r.id]):
            if fact not in verdicts:
                continue  # the judge did not rule on it (a key changed since judging)
            yes = sum(bool(label.facts[i]) for label in ticked if label.facts is not None)
            pairs.append((verdicts[fact], 2 * yes > len(ticked)))
    if not pairs:
        return FactAgreement(
            available=False,
            reason="no label on these answers carries fact ticks (a label rated before "
            "flightdeck stored them says correct or not, not which facts it found; rate "
            "again to add them), so fact-level agreement cannot be measured",
            labels_without_ticks=without,
        )
    k = _agreement([p[0] for p in pairs], [p[1] for p in pairs])
    return FactAgreement(
        available=True,
        n=k.n,
        kappa=k.kappa,
        agreement=k.agreement,
        reason=k.reason,
        answers=answers,
        labels_without_ticks=without,
    )


def check_fact_ticks(suite: SuiteFolder, rated: Sequence[Rated]) -> dict[str, tuple[str, ...]]:
    """Each rated question's required facts; a label ticking another number is refused."""
    facts_of = {k.id: k.required_facts for k in read_keys(suite.keys)}
    for r in rated:
        for label in r.labels:
            if label.facts is not None and len(label.facts) != len(facts_of[r.id]):
                raise InputError(
                    suite.labels(r.arm),
                    label.line,
                    f"facts has {len(label.facts)} ticks, but question {r.id!r} has "
                    f"{len(facts_of[r.id])} required facts; give one per fact, in the key's order",
                )
    return facts_of


def calibrate(
    suite: SuiteFolder, *, params: Any, judge: str, now: str | None = None
) -> Calibration:
    """Measure the judge against the people and write ``judgements/<judge>/calibration.json``.

    Refuses a sealed suite that changed since sealing, like every command that reads one.
    """
    from flightdeck.files.clock import utc_now

    spec = resolve_judge(params, judge)
    suite = suite.opened()
    suite.require_intact()
    identity = judge_identity(spec)
    collected = collect(suite, spec, min_raters=params.min_raters)
    rated = collected.rated
    j = [r.judgement.correct for r in rated]
    p = [r.people for r in rated]
    overall = cohens_kappa(j, p)
    interval = bootstrap_kappa(
        j, p, resamples=params.resamples, confidence=params.confidence, seed=params.seed
    )
    pairs = list(zip(j, p, strict=True))
    table = AgreementTable(
        judge_correct_people_correct=sum(a and b for a, b in pairs),
        judge_correct_people_incorrect=sum(a and not b for a, b in pairs),
        judge_incorrect_people_correct=sum(b and not a for a, b in pairs),
        judge_incorrect_people_incorrect=sum(not a and not b for a, b in pairs),
    )
    by_kind = {}
    for kind in sorted({r.kind for r in rated}):
        sub = [r for r in rated if r.kind == kind]
        by_kind[kind] = _agreement([r.judgement.correct for r in sub], [r.people for r in sub])
    disagreements = [
        Disagreement(
            arm=r.arm,
            id=r.id,
            kind=r.kind,
            people=r.people,
            votes=r.votes,
            judge=r.judgement.correct,
            facts_missing=[f.fact for f in r.judgement.facts if not f.present],
        )
        for r in rated
        if r.judgement.correct != r.people
    ]
    calibrated = (
        overall.value is not None
        and overall.value >= params.judge_min_kappa
        and overall.n >= MIN_ANSWERS
    )
    result = Calibration(
        suite=suite.name,
        judge=identity,
        kappa=overall.value,
        kappa_lo=interval.lo,
        kappa_hi=interval.hi,
        kappa_reason=overall.reason,
        bootstrap_undefined=interval.undefined_draws,
        n=overall.n,
        agreement=overall.agreement,
        table=table,
        by_kind=by_kind,
        arms=collected.arms,
        disagreements=disagreements,
        facts=_fact_level(rated, check_fact_ticks(suite, rated)),
        calibrated=calibrated,
        min_kappa=params.judge_min_kappa,
        min_answers=MIN_ANSWERS,
        seed=params.seed,
        resamples=params.resamples,
        confidence=params.confidence,
        min_raters=params.min_raters,
        calibrated_at=now or utc_now(),
    )
    write_calibration(suite.calibration(judge), result)
    return result


def judged_labels(
    suite: SuiteFolder, spec: JudgeSpec, arm: str, answers: dict[str, Answer]
) -> list[Label]:
    """The judge's verdicts on every answer of an unrated arm, as labels of one "rater".

    The rater is named ``judge:<name>``; every answer must have a current judgement by the
    judge as it is now, else the arm is refused with the command that judges it.
    """
    path = judgements_path(suite, spec.name, arm)
    judged = current_judgements(path, answers, judge_identity(spec))
    missing = [qid for qid in answers if qid not in judged]
    if missing:
        raise InputError(
            path,
            None,
            f"judge {spec.name!r} has no current judgement of {len(missing)} answer(s) of arm "
            f"{arm!r} (first: {missing[0]!r}); run `flightdeck knowledge judge {suite.root} "
            f"--judge {spec.name} --arm {arm}`",
        )
    return [
        Label(j.id, f"judge:{spec.name}", j.correct, j.unsupported, j.answer_sha256, j.line)
        for j in judged.values()
    ]


def citation_basis(spec: JudgeSpec) -> str:
    """What a judged arm's citation validity rests on, in words for the report."""
    return (
        "citation validity rests on the mechanical checks alone (a citation is fabricated "
        "unless it names a valid source, stale unless its hash matches): the "
        f"{spec.kind} judge flags no citation as unsupported, so a valid source cited for a "
        "claim it does not support counts as valid; have a person rate the citations where "
        "that matters"
    )


@dataclass(frozen=True)
class JudgedBy:
    """A calibrated judge that `knowledge score` may take unrated arms' correctness from."""

    spec: JudgeSpec
    calibration: Calibration

    def labels(self, suite: SuiteFolder, arm: str, answers: dict[str, Answer]) -> list[Label]:
        return judged_labels(suite, self.spec, arm, answers)

    def words(self) -> str:
        return f"{describe(self.calibration)}; {citation_basis(self.spec)}"


def calibrated_judge(suite: SuiteFolder, params: Any) -> JudgedBy | None:
    """params ``judge`` (or ``--judge``) as a calibrated judge; None when none is named."""
    if params.judge is None:
        return None
    spec = resolve_judge(params, params.judge)
    record = require_calibrated(
        suite, spec, min_kappa=params.judge_min_kappa, min_raters=params.min_raters
    )
    return JudgedBy(spec, record)


def people_words(raters: Sequence[str]) -> str:
    return f"people: the majority of {', '.join(raters) or 'no rater'}"
