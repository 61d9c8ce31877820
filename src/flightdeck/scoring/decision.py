"""The verdict on one paired 0/1 metric: what is claimed, the bound it reads, how often it errs.

Two rules (params ``decision``). "calibrated", the default: "shown" holds when the exact
bootstrap tail q = P*(D* < t) is below alpha'(n, t), the largest level whose worst-case
false-"shown" rate at this n is at most alpha = (1 - confidence)/2 (`calibrated_levels`); "ruled
out" is the mirror claim P*(D* >= t) < alpha'' with the same guarantee. No seed and no line
order enters. Above `calibrated_levels.EXACT_MAX_N` questions no calibrated claim is made, and the
report says why. "percentile": the plain reading of the seeded interval (lower bound >= t,
upper bound < t), whose exact size is computed from the law of the seeded bound over seeds
and reported, since at n = 40 it is 4.3%, not 2.5% (docs/statistics.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.scoring.calibrated_levels import CalibratedLevel, calibrate, claim_bounds, claims
from flightdeck.scoring.exact import (
    WINDOW_ABOVE_N,
    exact_pmf,
    exact_pmfs,
    lower_bound,
    seeded_at_least,
    tail_at_least,
    tail_below,
    threshold_index,
    upper_bound,
    window_pmf,
)
from flightdeck.scoring.intervals import (
    Interval,
    newcombe_interval,
    tango_bounds,
    tango_interval,
)
from flightdeck.scoring.regions import ZERO, Problem, cell_weights, claim_probability, null_grid

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RULES = ("calibrated", "percentile")
TOLERANCE = 1e-9  # the percentile rule's "reaches": a bound within 1e-9 of t counts
# The percentile rule's size needs the seeded law of every cell, O(n^2) each: above this n
# that takes more than a second (benchmarks/bench_decision.py at load 8: 0.3 s at n = 40,
# 0.4-1.1 s at n = 50, 0.9-2.7 s at n = 60) and the size is not computed.
PERCENTILE_MAX_N = 45
POWER = 0.8


class ShownBy(StrEnum):
    """What the calibrated "shown" claim reads: the exact bootstrap tail, or Tango's score p."""

    BOOTSTRAP = "bootstrap"  # score's comparison (the spec's bootstrap over questions)
    SCORE = "score"  # the gate's non-inferiority claim, read off Tango's score statistic


class Extra(StrEnum):
    """What :func:`decide` works out beside the "shown" claim."""

    RULED_OUT = "ruled_out"  # the mirror claim: a difference of t or more is ruled out
    MIN_DETECTABLE = "min_detectable"  # the smallest true difference shown with 80% power


EVERY_EXTRA = frozenset(Extra)


@dataclass(frozen=True)
class Claim:
    """One claim about the difference at threshold t, as the rule in force reads it.

    ``side`` "shown" (the difference is at least t) or "ruled_out" (it is below t). ``bound``
    is the bound the claim reads (a proportion): the claim holds exactly when a "shown" bound
    is >= t or a "ruled_out" bound is < t. ``level`` is the one-sided level it is read at,
    ``p_exact`` the exact bootstrap tail beyond t, ``size`` the exact worst-case rate of a false
    claim at this n (None when n is too large to enumerate, ``exact`` then False).
    """

    side: str
    holds: bool
    bound: float
    level: float
    p_exact: float
    size: float | None
    exact: bool
    statistic: float | None = None  # what the claim compares with level (Tango's p for the gate)
    refused: bool = False  # n is above calibrated_levels.EXACT_MAX_N: no calibrated claim is made


@dataclass(frozen=True)
class Decision:
    """Everything the report says about one metric's comparison with the threshold."""

    rule: str
    n: int
    candidate_only: int
    baseline_only: int
    threshold: float  # points
    alpha: float  # nominal one-sided level, (1 - confidence)/2
    shown: Claim
    ruled_out: Claim | None
    exact_lo: float  # the exact (B -> infinity) bootstrap bound at alpha
    seeded_shown: float  # P(the seeded percentile reading says "shown"), over seeds/orders
    seeded_reading: bool  # what this seed and line order's percentile reading says
    newcombe: Interval
    tango: Interval
    min_detectable: float | None  # smallest true difference shown with 80% probability
    min_detectable_exact: bool  # True: exact enumeration at the observed discordance

    @property
    def flip(self) -> float:
        """The chance that another seed or line order flips the plain percentile reading."""
        return 1.0 - self.seeded_shown if self.seeded_reading else self.seeded_shown


def decide(
    n: int,
    candidate_only: int,
    baseline_only: int,
    both_right: int,
    *,
    threshold: float,
    confidence: float,
    rule: str,
    seeded_lo: float,
    seeded_hi: float,
    resamples: int,
    cache_dir: Path | None = None,
    shown_by: ShownBy = ShownBy.BOOTSTRAP,
    extras: frozenset[Extra] = EVERY_EXTRA,
) -> Decision:
    """The verdict on one metric at ``threshold`` points, with its guarantees.

    ``both_right`` (questions both arms got right) matters only to Newcombe's interval.
    ``seeded_lo``, ``seeded_hi`` are the seeded percentile interval (`bootstrap.paired_bootstrap`)
    at ``confidence``. ``shown_by`` says what the calibrated "shown" reads; ``extras`` what
    else is worked out (the "ruled out" claim, the minimum detectable difference): the gate
    asks for none. ``cache_dir`` keeps calibrated levels (per n, threshold, alpha).
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    shown_by, extras = ShownBy(shown_by), frozenset(map(Extra, extras))
    mirror, power = Extra.RULED_OUT in extras, Extra.MIN_DETECTABLE in extras
    alpha = (1.0 - confidence) / 2.0
    b, c = candidate_only, baseline_only
    kt = threshold_index(n, threshold)
    t = threshold / 100
    q = float(tail_below(n, b, c, kt))
    start, pmf = (-n, exact_pmf(n, b, c)) if n <= WINDOW_ABOVE_N else window_pmf(n, b, c, kt)
    cut = n * (t - TOLERANCE)
    seeded = float(seeded_at_least(pmf, n, cut, resamples=resamples, quantile=alpha, start=start))
    table = (both_right, b, c, n - both_right - b - c)
    if rule == "calibrated":
        side = "shown_by_score" if shown_by is ShownBy.SCORE else "shown"
        shown = _calibrated(n, b, c, kt, q, threshold, alpha, side, cache_dir)
        ruled = None
        if mirror:
            ruled = _calibrated(n, b, c, kt, q, threshold, alpha, "ruled_out", cache_dir)
    else:
        size, exact = _percentile_size(n, threshold, resamples, alpha, "shown")
        shown = Claim("shown", seeded_lo >= t - TOLERANCE, seeded_lo, alpha, q, size, exact)
        ruled = None
        if mirror:
            size_r, exact_r = _percentile_size(n, threshold, resamples, alpha, "ruled_out")
            p_above = float(tail_at_least(n, b, c, kt))
            ruled = Claim(
                "ruled_out", seeded_hi < t - TOLERANCE, seeded_hi, alpha, p_above, size_r, exact_r
            )
    mdd, mdd_exact = (None, False)
    if power:
        cal = None
        if rule == "calibrated":
            cal = calibrate(n, threshold, alpha=alpha, side="shown", cache_dir=cache_dir)
        mdd, mdd_exact = _min_detectable(n, b + c, threshold, confidence, rule, resamples, cal)
    return Decision(
        rule=rule,
        n=n,
        candidate_only=b,
        baseline_only=c,
        threshold=threshold,
        alpha=alpha,
        shown=shown,
        ruled_out=ruled,
        exact_lo=lower_bound(n, b, c, alpha, kt) / n,
        seeded_shown=seeded,
        seeded_reading=seeded_lo >= t - TOLERANCE,
        newcombe=newcombe_interval(*table, confidence=confidence),
        tango=tango_interval(*table, confidence=confidence),
        min_detectable=mdd,
        min_detectable_exact=mdd_exact,
    )


def _calibrated(
    n: int,
    b: int,
    c: int,
    kt: int,
    q: float,
    threshold: float,
    alpha: float,
    side: str,
    cache_dir: Path | None,
) -> Claim:
    """The calibrated claim ``side``; ``q`` is P*(K* < kt), which `decide` has worked out."""
    import numpy as np

    cal = calibrate(n, threshold, alpha=alpha, side=side, cache_dir=cache_dir)
    t = threshold / 100
    if cal.refused:
        p = q if side != "ruled_out" else float(tail_at_least(n, b, c, kt))
        # No bound at all: the whole range, so "shown" (bound >= t) and "ruled out" (bound < t)
        # are both false, as the refusal says.
        bound = 1.0 if side == "ruled_out" else -1.0
        return Claim(side, False, bound, 0.0, p, None, False, None, refused=True)
    table = claims(cal, [b], [c])
    holds, stat = bool(table.held[0]), float(table.statistic[0])
    # The bound is read at the cut (numerically zero when the cut splits the zero group by
    # the edge) and held to the verdict, so "shown" is exactly "bound >= t".
    level = cal.cut if cal.cut > 0.0 else ZERO
    if side == "shown_by_score":
        from scipy.special import ndtri

        bound = tango_bounds(b, c, n, float(ndtri(1.0 - min(level, 0.5)))).lo
    elif side == "shown":
        bound = lower_bound(n, b, c, level, kt) / n
    else:
        bound = upper_bound(n, b, c, level, kt) / n
    if side == "ruled_out":
        if holds != (bound < t):
            bound = float(np.nextafter(t, -2.0)) if holds else t
    elif holds != (bound >= t):
        bound = t if holds else float(np.nextafter(t, -2.0))
    return Claim(side, holds, bound, cal.level, q if side == "shown_by_score" else stat,
                 cal.size, True, stat)  # fmt: skip


@functools.lru_cache(maxsize=16)
def seeded_claims(
    n: int, threshold: float, *, resamples: int, alpha: float, side: str
) -> npt.NDArray[np.float64]:
    """P(the seeded percentile rule claims | cell) for every cell of `calibrated_levels.cells`."""
    n10, n01 = cells(n)
    pmfs = exact_pmfs(n, n10, n01)
    c_k = n * (threshold / 100 - TOLERANCE)
    if side == "shown":
        claims = seeded_at_least(pmfs, n, c_k, resamples=resamples, quantile=alpha)
    else:
        claims = 1.0 - seeded_at_least(pmfs, n, c_k, resamples=resamples, quantile=1.0 - alpha)
    claims.flags.writeable = False
    return claims


def _percentile_size(
    n: int, threshold: float, resamples: int, alpha: float, side: str
) -> tuple[float | None, bool]:
    if n > PERCENTILE_MAX_N:
        return None, False
    claims = seeded_claims(n, threshold, resamples=resamples, alpha=alpha, side=side)
    return rule_size(n, threshold, claims).size, True


def cells(n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every table at n as its discordant counts: n10 + n01 <= n, n10 major."""
    import numpy as np

    n10, n01 = np.triu_indices(n + 1)
    return n10.astype(np.int64), (n01 - n10).astype(np.int64)


@dataclass(frozen=True)
class RuleSize:
    """A rule's worst-case rate of a false "shown" (``size``) and the p01 where it is."""

    size: float
    worst_p01: float


def rule_size(n: int, threshold: float, claims: npt.NDArray[np.float64]) -> RuleSize:
    """The size of a rule given as P(claim | table) for every table of `cells`: its worst-case
    rate of a false "shown" at a true difference of exactly t, on the nuisance grid."""
    grid = null_grid(Problem(n, threshold, "shown"))
    n10, n01 = cells(n)
    rates = cell_weights(n, n10, n01, grid + threshold / 100, grid) @ claims
    worst = int(rates.argmax())
    return RuleSize(float(rates[worst]), float(grid[worst]))


def _min_detectable(
    n: int,
    discordant: int,
    threshold: float,
    confidence: float,
    rule: str,
    resamples: int,
    cal: CalibratedLevel | None,
) -> tuple[float | None, bool]:
    """The smallest true gap "shown" with 80% probability at the observed discordance.

    Exact: the power is the probability of the rule's claim region at (p10, p01) =
    ((p + gap)/2, (p - gap)/2), p = max(observed discordance, gap); the smallest gap on a
    grid of step 0.0005 with power >= 0.8 (docs/statistics.md, "What a suite can show"). The
    plain percentile rule above its enumeration limit: the normal approximation of
    `stats.min_detectable_difference`. A refused calibration shows nothing: None.
    """
    import numpy as np

    if rule == "percentile" and n > PERCENTILE_MAX_N:
        from flightdeck.scoring.stats import min_detectable_difference

        approx = min_detectable_difference(
            n=n, discordance=discordant / n, threshold=threshold / 100, confidence=confidence
        )
        return approx, False
    if cal is not None and cal.refused:
        return None, False
    observed = discordant / n
    if cal is not None:
        bounds = claim_bounds(cal)

        def power_at(gap: float) -> float:
            p = max(observed, gap)
            return float(claim_probability(n, bounds, [(p + gap) / 2], [(p - gap) / 2])[0])

    else:
        alpha = (1.0 - confidence) / 2.0
        claims = np.asarray(
            seeded_claims(n, threshold, resamples=resamples, alpha=alpha, side="shown")
        )
        n10, n01 = cells(n)

        def power_at(gap: float) -> float:
            p = max(observed, gap)
            w = cell_weights(n, n10, n01, np.array([(p + gap) / 2]), np.array([(p - gap) / 2]))
            return float(w[0] @ claims)

    grid = np.round(np.arange(max(threshold / 100, 0.0), 1.0 + 1e-12, 0.0005), 10)
    if power_at(float(grid[-1])) < POWER:
        return None, True
    lo, hi = -1, len(grid) - 1  # power(grid[hi]) >= 0.8; the power rises with the gap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_at(float(grid[mid])) >= POWER:
            hi = mid
        else:
            lo = mid
    return float(grid[hi]), True
