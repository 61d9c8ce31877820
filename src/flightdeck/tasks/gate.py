"""The gate task: does a candidate keep within the margin of the pinned arm on every metric?

CI runs it on every change to the retrieval service (``knowledge gate``); it reads the arms
as score does and decides by the same calibrated rule, at the margin's threshold.
"""

from __future__ import annotations

from flightdeck.errors import InputError
from flightdeck.params import Params
from flightdeck.params.arm_names import check_arm_name
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.scoring.outcomes import GateResult
from flightdeck.tasks.scoring import check_ledger, compare, read_arms


def gate(
    suite: SuiteFolder,
    *,
    pinned: str | None = None,
    candidate: str | None = None,
    params: Params,
) -> GateResult:
    """Pass when, on each metric, candidate - pinned is shown to be >= -gate_margin.

    The claim is read by the rule in force (params ``decision``) at its own threshold: the
    calibrated rule reads Tango's score statistic at a level found by exact enumeration, so a
    candidate truly worse by the margin passes at most 2.5% of the time at this n (the plain
    percentile bound: up to 8.2% at n = 40).
    """
    from flightdeck.scoring.decision import ShownBy, decide
    from flightdeck.scoring.rules import METRICS

    pinned = pinned or params.pinned  # params.yaml ``pinned``/``candidate`` (#15)
    candidate = candidate or params.candidate
    if pinned is None:
        raise InputError(
            "--pinned", None, "name the pinned arm: --pinned ARM, or pinned: in params.yaml"
        )
    if candidate is None:
        raise InputError(
            "--candidate",
            None,
            "name the candidate arm: --candidate ARM, or candidate: in params.yaml",
        )
    check_arm_name(pinned, where="--pinned")
    check_arm_name(candidate, where="--candidate")
    if pinned == candidate:
        raise InputError("--candidate", None, "the candidate is the pinned arm; name another arm")
    read = read_arms(suite, [pinned, candidate], params)
    suite, scores = read.suite, read.scores
    check_ledger(suite, scores)
    cache = suite.project.decision_cache
    comparison = compare(scores[pinned], scores[candidate], params, decision_cache=cache)
    decisions = {}
    for m in METRICS:
        mc = comparison.metrics[m]
        both = zip(scores[candidate].vector(m), scores[pinned].vector(m), strict=True)
        decisions[m] = decide(
            scores[pinned].n,
            mc.candidate_only,
            mc.baseline_only,
            sum(x and y for x, y in both),
            threshold=-params.gate_margin,
            confidence=params.confidence,
            rule=params.decision,
            seeded_lo=mc.lo,
            seeded_hi=mc.hi,
            resamples=params.resamples,
            cache_dir=cache,
            shown_by=ShownBy.SCORE,
            extras=frozenset(),  # the gate claims "shown" at -margin, nothing more
        )
    # "not holds" rather than a comparison, so that a NaN bound fails the gate.
    failed = tuple(m for m in METRICS if not decisions[m].shown.holds)
    note = None
    if failed and params.decision == "calibrated":
        losses = sorted({comparison.metrics[m].baseline_only for m in failed})
        note = small_n_note(scores[pinned].n, params, losses=tuple(losses))
    return GateResult(
        suite=suite.name,
        pinned=pinned,
        candidate=candidate,
        margin=params.gate_margin,
        comparison=comparison,
        failed=failed,
        correctness_from=read.correctness_from,
        decisions=decisions,
        note=note,
    )


def small_n_note(n: int, params: Params, *, losses: tuple[int, ...] = ()) -> str:
    """What n can show at the margin: the fewest wins that pass with 0, 1, 2 losses (and with
    the failed metrics' own ``losses``), or that no table passes at this n and the smallest n
    at which one does (docs/statistics.md)."""
    from flightdeck.scoring.calibrated_levels import (
        EXACT_MAX_N,
        calibrate,
        needed_wins,
        smallest_claiming_n,
    )

    alpha = (1.0 - params.confidence) / 2.0
    margin = params.gate_margin
    store = ProjectPaths(params.root).decision_cache
    if n > EXACT_MAX_N:
        return (
            f"n = {n} is above {EXACT_MAX_N:,}, where this version's calibration stops: the "
            "calibrated gate passes nothing there (docs/statistics.md, Above 2,000 questions)"
        )
    cal = calibrate(n, -margin, alpha=alpha, side="shown_by_score", cache_dir=store)
    if not cal.claims_somewhere:
        first = smallest_claiming_n(-margin, alpha=alpha, side="shown_by_score", cache_dir=store)
        where = f"the smallest n at which one can is {first}" if first else "no n up to 2,000"
        return (
            f"at n = {n} no table can pass a {margin:g}-point margin with a false pass of at "
            f"most {100 * alpha:g}%, however the candidate does: {where}"
        )
    needs = []
    for lost in sorted({0, 1, 2, *(x for x in losses if x <= n)}):
        wins = needed_wins(cal, lost)
        if wins is not None:
            needs.append(f"{wins} with {lost} the other way")
    return (
        f"at n = {n} a {margin:g}-point margin passes only when the candidate alone is right "
        f"on at least {', '.join(needs) or 'more questions than n allows'} (and more for "
        "each further loss)"
    )
