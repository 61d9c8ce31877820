"""A judge's calibration file as a record: its Structs, read, written, and held to the judge.

``knowledge calibrate`` writes ``judgements/<judge>/calibration.json`` (pretty, keys sorted,
see :func:`flightdeck.files.jsonl.write_json`) from a :class:`Calibration`; ``score --judge``
reads it back into one. The Structs are the file's rule: the strict JSON reader
(:func:`flightdeck.files.jsonl.read_json`) words a file that is not JSON, and a file the
Structs refuse is one line naming what msgspec found wrong and how to write it again.

A calibration written before labels stored fact ticks (#21) has no ``answers`` or
``labels_without_ticks`` under ``facts``: they are :data:`msgspec.UNSET` when read, and
left out when written, so such a file still reads and writes back as it was.

:func:`require_calibrated` is what ``score --judge`` asks of the file: that it holds for
the judge as it is now, against as many people per answer as scoring counts, with kappa
>= ``judge_min_kappa`` on at least :data:`MIN_ANSWERS` answers.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_json, write_json
from flightdeck.params.sections import JudgeSpec
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.rating.judgements import JudgeIdentity
from flightdeck.rating.judges import judge_identity

MIN_ANSWERS = 30  # a calibration on fewer answers does not hold, whatever its kappa


class Agreement(msgspec.Struct, frozen=True, kw_only=True):
    """Cohen's kappa of the judge against the people's majority over ``n`` answers."""

    n: int
    kappa: float | None  # None when undefined; ``reason`` says why
    agreement: float | None
    reason: str | None


class FactAgreement(msgspec.Struct, frozen=True, kw_only=True):
    """Judge vs people per required fact, where people ticked facts; else why not.

    Available: kappa over ``n`` (answer, fact) pairs of ``answers`` answers. Not available:
    ``reason`` says why. ``labels_without_ticks`` counts the labels left out either way.
    """

    available: bool
    reason: str | None
    labels_without_ticks: int | msgspec.UnsetType = msgspec.UNSET  # UNSET: before #21
    n: int | msgspec.UnsetType = msgspec.UNSET  # the rest: when available
    kappa: float | None | msgspec.UnsetType = msgspec.UNSET
    agreement: float | None | msgspec.UnsetType = msgspec.UNSET
    answers: int | msgspec.UnsetType = msgspec.UNSET


class AgreementTable(msgspec.Struct, frozen=True, kw_only=True):
    """The 2x2 table of the judge's and the people's verdicts on correct."""

    judge_correct_people_correct: int
    judge_correct_people_incorrect: int
    judge_incorrect_people_correct: int
    judge_incorrect_people_incorrect: int


class ArmCounts(msgspec.Struct, frozen=True, kw_only=True):
    """One arm's answers: how many, rated by enough people, judged, and both."""

    answers: int
    rated_by_people: int
    judged: int
    both: int


class Disagreement(msgspec.Struct, frozen=True, kw_only=True):
    """An answer the judge and the people's majority disagree on, for adjudication."""

    arm: str
    id: str
    kind: str
    people: bool  # the majority (a tie counts as incorrect)
    votes: dict[str, bool]  # rater -> correct
    judge: bool
    facts_missing: list[str]  # the required facts the judge did not find


class Calibration(msgspec.Struct, frozen=True, kw_only=True):
    """``judgements/<judge>/calibration.json``: the judge measured against the people.

    ``kappa`` (None when undefined, ``kappa_reason`` then says why) over ``n`` answers
    both rated, with its bootstrap interval ``kappa_lo``..``kappa_hi`` (None when no
    resample had a kappa; ``bootstrap_undefined`` resamples had none), and what it was
    measured with: the bootstrap's ``seed``, ``resamples`` and ``confidence``, and
    ``min_raters`` people per answer. ``calibrated``: kappa >= ``min_kappa`` on at least
    ``min_answers`` answers.
    """

    suite: str
    judge: JudgeIdentity
    kappa: float | None
    kappa_lo: float | None
    kappa_hi: float | None
    kappa_reason: str | None
    bootstrap_undefined: int
    n: int
    agreement: float | None
    table: AgreementTable
    by_kind: dict[str, Agreement]
    arms: dict[str, ArmCounts]
    disagreements: list[Disagreement]
    facts: FactAgreement
    calibrated: bool
    min_kappa: float
    min_answers: int
    seed: int
    resamples: int
    confidence: float
    min_raters: int
    calibrated_at: str


def write_calibration(path: Path, calibration: Calibration) -> None:
    """Atomically write the calibration as every JSON document flightdeck writes."""
    write_json(path, msgspec.to_builtins(calibration))


def read_calibration(path: Path, *, fix: str) -> Calibration:
    """The calibration at ``path``, or an InputError naming the file and ``fix`` (a command)."""
    value = read_json(path)  # a file that is not JSON: the strict reader's words
    try:
        return msgspec.convert(value, Calibration)
    except msgspec.ValidationError as exc:
        raise InputError(
            path, None, f"not a calibration flightdeck wrote ({exc}); {fix} to write it again"
        ) from None


def require_calibrated(
    suite: SuiteFolder, spec: JudgeSpec, *, min_kappa: float, min_raters: int = 1
) -> Calibration:
    """The judge's calibration, or an InputError naming the calibration file and the fix.

    A calibration measured against fewer people per answer than scoring counts
    (``calibrate --min-raters 1``) does not show the judge may stand in for them.
    """
    path = suite.calibration(spec.name)
    fix = f"run `flightdeck knowledge calibrate {suite.root} --judge {spec.name}`"
    if not path.is_file():
        raise InputError(path, None, f"judge {spec.name!r} was never calibrated; {fix}")
    record = read_calibration(path, fix=fix)
    identity = judge_identity(spec)
    if record.judge != identity:
        fields = identity.__struct_fields__
        changed = [f for f in fields if getattr(record.judge, f) != getattr(identity, f)]
        raise InputError(
            path,
            None,
            f"judge {spec.name!r} changed since it was calibrated "
            f"({', '.join(changed) or 'identity'} differ), so the calibration does not hold for "
            "it: judge the rated arms again, then " + fix.removeprefix("run "),
        )
    raters = record.min_raters
    if raters < min_raters:
        raise InputError(
            path,
            None,
            f"judge {spec.name!r} was calibrated against {raters} rater(s) per answer, but "
            f"scoring counts {min_raters} (min_raters); calibrate it again with "
            f"--min-raters {min_raters} once that many people rated the answers",
        )
    kappa, n = record.kappa, record.n
    if not (kappa is not None and kappa >= min_kappa and n >= MIN_ANSWERS):
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        raise InputError(
            path,
            None,
            f"judge {spec.name!r} is not calibrated: kappa {shown} against the people on {n} "
            f"answers (needs >= {min_kappa:g} on >= {MIN_ANSWERS}); have people rate more "
            "answers, improve the judge, or keep people rating",
        )
    return record


def describe(calibration: Calibration) -> str:
    """ "judge facts, kappa 0.71 [0.55, 0.84] against people on 64 answers, calibrated <date>"."""
    lo, hi = calibration.kappa_lo, calibration.kappa_hi
    interval = "" if lo is None or hi is None else f" [{lo:.2f}, {hi:.2f}]"
    return (
        f"judge {calibration.judge.name}, kappa {calibration.kappa:.2f}{interval} against "
        f"people on {calibration.n} answers, calibrated {calibration.calibrated_at}"
    )
