"""The gate task: does a candidate keep within the margin of the pinned arm on every metric?

CI runs it on every change to the retrieval service (``knowledge gate``); it reads the arms
as score does and decides by the same calibrated rule, at the margin's threshold.
"""

from __future__ import annotations

from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.params import Params
from flightdeck.project import Suite, check_arm_name
from flightdeck.scoring.outcomes import GateResult
from flightdeck.tasks.scoring import cache_dir, check_ledger, compare, read_arms


def gate(
    suite_dir: Suite | Path,
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
    from flightdeck.scoring.decision import decide
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
    read = read_arms(suite_dir, [pinned, candidate], params)
    suite, scores, sources = read.suite, read.scores, read.sources
    check_ledger(suite, scores)
    comparison = compare(scores[pinned], scores[candidate], params)
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
            cache_dir=cache_dir(params),
            mirror=False,
            power=False,
            by_score=True,
        )
    # "not holds" rather than a comparison, so that a NaN bound fails the gate.
    failed = tuple(m for m in METRICS if not decisions[m].shown.holds)
    return GateResult(
        suite.name, pinned, candidate, params.gate_margin, comparison, failed, sources, decisions
    )
