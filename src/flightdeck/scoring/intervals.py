"""Published closed-form intervals for a paired difference of proportions, beside the bootstrap.

The table is (a, b, c, d): a = both arms right, b = only the candidate right (n10), c = only
the baseline right (n01), d = both wrong; the difference is (b - c)/n. Each method reproduces
the published values listed in docs/statistics.md, "References" (tests/unit/test_intervals.py).
Fagerland, Lydersen and Laake (2014, "Recommended tests and confidence intervals for paired
binomial proportions", Statistics in Medicine 33:2850-2875) recommend Tango's score interval,
Bonett-Price and Newcombe's method 10; Wald and Agresti-Min are here as references.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flightdeck.scoring.stats import normal_quantile, wilson_interval

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A difference (a proportion) with its interval [lo, hi] and the method's name."""

    method: str
    diff: float
    lo: float
    hi: float


@dataclass(frozen=True)
class ScoreBounds:
    """Where Tango's score statistic T(delta) crosses z (``lo``) and -z (``hi``), in [-1, 1]."""

    lo: float
    hi: float


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return normal_quantile(1.0 - (1.0 - confidence) / 2.0)


def _check(a: int, b: int, c: int, d: int) -> int:
    for name, value in (("a", a), ("b", b), ("c", c), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer count, got {value!r}")
    n = a + b + c + d
    if n == 0:
        raise ValueError("the table is empty; give at least one pair")
    return n


def newcombe_interval(a: int, b: int, c: int, d: int, *, confidence: float = 0.95) -> Interval:
    """Newcombe's square-and-add interval, method 10 (Newcombe 1998, Stat Med 17:2635-2650).

    The Wilson limits of each arm's proportion, p1 = (a + b)/n and p2 = (a + c)/n, combined
    with the continuity-corrected correlation phi* of the 2x2 table. The uncorrected phi does
    not reproduce the paper's worked example (b), so the correction is part of the method.
    """
    n = _check(a, b, c, d)
    w1 = wilson_interval(a + b, n, confidence=confidence)
    w2 = wilson_interval(a + c, n, confidence=confidence)
    p1, p2 = (a + b) / n, (a + c) / n
    theta = (b - c) / n
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(margins)
    else:
        phi = cross / math.sqrt(margins)
    d1, e2 = p1 - w1.lo, w2.hi - p2
    e1, d2 = w1.hi - p1, p2 - w2.lo
    lo = theta - math.sqrt(max(d1 * d1 - 2 * phi * d1 * e2 + e2 * e2, 0.0))
    hi = theta + math.sqrt(max(e1 * e1 - 2 * phi * e1 * d2 + d2 * d2, 0.0))
    return Interval("newcombe", theta, max(lo, -1.0), min(hi, 1.0))


def tango_statistic(b: int, c: int, n: int, delta: float) -> float:
    """Tango's score statistic T(delta) for H0: difference = delta (Tango 1998, Stat Med 17:891).

    T = (b - c - n delta) / sqrt(n (2 p21 + delta (1 - delta))), with p21 the maximum
    likelihood estimate of the baseline-only rate under the null. T falls as delta rises.
    """
    coef_a = 2.0 * n
    coef_b = -b - c + (2.0 * n - b + c) * delta
    coef_c = -c * delta * (1.0 - delta)
    p21 = (math.sqrt(max(coef_b * coef_b - 4.0 * coef_a * coef_c, 0.0)) - coef_b) / (2 * coef_a)
    numerator = b - c - n * delta
    variance = n * (2.0 * p21 + delta * (1.0 - delta))
    if numerator == 0.0:
        return 0.0
    if variance <= 0.0:
        return math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


def tango_pvalues(b: npt.ArrayLike, c: npt.ArrayLike, n: int, delta: float) -> FloatArray:
    """One-sided p-values of Tango's score test of H0 diff <= delta for many tables of n at once:
    `tango_statistic`'s formula in numpy, read as ``ndtr(-T)`` (a small value says the
    difference is above delta; tests/exact_oracle.py reads it one table at a time)."""
    import numpy as np
    from scipy.special import ndtr

    bb = np.asarray(b, np.float64)
    cc = np.asarray(c, np.float64)
    coef_a = 2.0 * n
    coef_b = -bb - cc + (2.0 * n - bb + cc) * delta
    coef_c = -cc * delta * (1.0 - delta)
    root = np.sqrt(np.maximum(coef_b * coef_b - 4.0 * coef_a * coef_c, 0.0))
    p21 = (root - coef_b) / (2 * coef_a)
    numerator = bb - cc - n * delta
    variance = n * (2.0 * p21 + delta * (1.0 - delta))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(
            numerator == 0.0,
            0.0,
            np.where(variance > 0.0, numerator / np.sqrt(variance), np.copysign(np.inf, numerator)),
        )
    result: FloatArray = np.asarray(ndtr(-t), np.float64)
    return result


def tango_interval(a: int, b: int, c: int, d: int, *, confidence: float = 0.95) -> Interval:
    """Tango's asymptotic score interval {delta : |T(delta)| < z}, solved with brentq."""
    n = _check(a, b, c, d)
    bounds = tango_bounds(b, c, n, _z(confidence))
    return Interval("tango", (b - c) / n, bounds.lo, bounds.hi)


def tango_bounds(b: int, c: int, n: int, z: float) -> ScoreBounds:
    """The roots of T(delta) = z and T(delta) = -z in [-1, 1] (the ends when never reached).

    T falls as delta rises, so each root is bracketed and found by bisection to the last
    bit (no scipy.optimize import on the scoring path).
    """
    theta = (b - c) / n
    edge = 1e-12

    def root(target: float, left: float, right: float) -> float:
        # T(left) > target >= T(right): halve until the bracket is one float wide.
        for _ in range(200):
            mid = (left + right) / 2
            if mid in (left, right):
                break
            if tango_statistic(b, c, n, mid) > target:
                left = mid
            else:
                right = mid
        return (left + right) / 2

    lo = -1.0 if tango_statistic(b, c, n, -1.0 + edge) <= z else root(z, -1.0 + edge, theta)
    hi = 1.0 if tango_statistic(b, c, n, 1.0 - edge) >= -z else root(-z, theta, 1.0 - edge)
    return ScoreBounds(lo, hi)
