"""What a machine reads: the metrics file DVC diffs, and the gate's ``--json``.

Every number is rounded to the same places, so ``dvc metrics diff`` shows movement, not
floating-point noise.
"""

from __future__ import annotations

from typing import Any

from flightdeck.scoring.decision import Decision
from flightdeck.scoring.outcomes import GateResult, ScoreResult

PLACES = 6


def _r(value: float) -> float:
    return round(float(value), PLACES)


def metrics_json(result: ScoreResult) -> dict[str, Any]:
    """The metrics document; the keys the spec lists are a public interface."""
    arms: dict[str, Any] = {}
    for arm, s in result.arms.items():
        arms[arm] = {
            "n": s.n,
            "answered": s.answered,
            "correctness": _proportion(s.correctness),
            "citation_validity": _proportion(s.citation_validity),
            "citations": dict(s.citations),
            "uncited": s.uncited,
            "missing": s.missing,
            "kappa": None if s.kappa.value is None else _r(s.kappa.value),
            "kappa_agreement": None if s.kappa.agreement is None else _r(s.kappa.agreement),
            "kappa_n": s.kappa.n,
        }
        if result.correctness_from:  # a judge was named (#14): say where correctness came from
            arms[arm]["correctness_from"] = result.correctness_from[arm]
    comparisons: dict[str, Any] = {}
    for c in result.comparisons:
        comparisons[c.key] = {
            m: {
                "diff": _r(mc.diff),
                "lo": _r(mc.lo),
                "hi": _r(mc.hi),
                "shown": mc.shown,
                "candidate_only": mc.candidate_only,
                "baseline_only": mc.baseline_only,
                **({} if mc.decision is None else decision_json(mc.decision)),
            }
            for m, mc in c.metrics.items()
        }
    p = result.params
    return {
        "suite": result.suite,
        "arms": arms,
        "comparisons": comparisons,
        "settings": {
            "seed": p.seed,
            "resamples": p.resamples,
            "confidence": p.confidence,
            "threshold": p.threshold,
            "min_raters": p.min_raters,
            "decision": p.decision,
        },
    }


def _maybe(value: float | None) -> float | None:
    return None if value is None else _r(value)


def decision_json(d: Decision) -> dict[str, Any]:
    """The decision's keys beside diff/lo/hi/shown (SPEC, Outputs); the gate's JSON too."""
    out: dict[str, Any] = {
        "decision_lo": _r(d.shown.bound),
        "decision_level": _r(d.shown.level),
        "p_exact": _r(d.shown.p_exact),
        "size": _maybe(d.shown.size),
        "size_exact": d.shown.exact,
        "exact_lo": _r(d.exact_lo),
        "seeded_flip": _r(d.flip),
        "newcombe": [_r(d.newcombe.lo), _r(d.newcombe.hi)],
        "tango": [_r(d.tango.lo), _r(d.tango.hi)],
    }
    if d.ruled_out is not None:
        out.update(
            decision_hi=_r(d.ruled_out.bound),
            ruled_out=d.ruled_out.holds,
            ruled_out_level=_r(d.ruled_out.level),
            ruled_out_size=_maybe(d.ruled_out.size),
        )
    if d.min_detectable is not None or d.min_detectable_exact:
        out["min_detectable"] = _maybe(d.min_detectable)
        out["min_detectable_exact"] = d.min_detectable_exact
    return out


def _proportion(p: Any) -> dict[str, float]:
    return {"value": _r(p.value), "lo": _r(p.lo), "hi": _r(p.hi)}


def gate_json(result: GateResult) -> dict[str, Any]:
    """``knowledge gate --json``: the verdict, the rule, each metric's interval and decision."""
    rules = {d.rule for d in result.decisions.values()}
    return {
        "passed": result.passed,
        "failed": list(result.failed),
        "margin": result.margin,
        "note": result.note,
        "decision": rules.pop() if len(rules) == 1 else sorted(rules),
        "correctness_from": result.correctness_from,
        "metrics": {
            m: {"diff": mc.diff, "lo": mc.lo, "hi": mc.hi, "passed": m not in result.failed}
            | decision_json(result.decisions[m])
            for m, mc in result.comparison.metrics.items()
        },
    }
