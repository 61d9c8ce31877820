"""A slow oracle for the calibrated rule, written from the definitions, sharing no code path
with flightdeck.scoring's enumeration (regions.py, calibration.py, exact.py).

- Tango's one-sided p-value, one table at a time, from `tango_statistic` and scipy's normal
  distribution (the enumeration reads the numpy `tango_pvalues` instead);
- the bootstrap law of K* = N10* - N01* by summing the trinomial over every (a, b), in
  Python floats from math.comb;
- each table's probability under the null from scipy.stats.multinomial;
- the calibration as the audit defined it: sort every table by its statistic (ties, the
  numerically-zero ones, by the observed edge), add them in that order while the worst
  case over a grid of the nuisance stays within alpha.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from flightdeck.scoring.intervals import tango_statistic

ZERO = 1e-12


def tango_pvalue(b: int, c: int, n: int, delta: float, *, side: str) -> float:
    """One-sided p-value of Tango's score test: side "above" tests H0 diff <= delta (a small
    value says the difference is above delta), side "below" tests H0 diff >= delta."""
    t = tango_statistic(b, c, n, delta)
    return float(scipy.stats.norm.sf(t) if side == "above" else scipy.stats.norm.cdf(t))


def tables(n: int) -> list[tuple[int, int]]:
    return [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]


def bootstrap_below(n: int, n10: int, n01: int, k: int) -> float:
    """P*(K* < k) from the trinomial law of one resample of n questions."""
    p10, p01 = n10 / n, n01 / n
    p00 = 1.0 - p10 - p01
    total = 0.0
    for a in range(n + 1):
        for b in range(n + 1 - a):
            if a - b < k:
                rest = n - a - b
                total += math.comb(n, a) * math.comb(n - a, b) * p10**a * p01**b * p00**rest
    return total


def statistic(n: int, n10: int, n01: int, threshold: float, side: str) -> float:
    kt = math.ceil(n * threshold / 100 - 1e-12)
    if side == "shown":
        return bootstrap_below(n, n10, n01, kt)
    if side == "ruled_out":
        return 1.0 - bootstrap_below(n, n10, n01, kt)
    return tango_pvalue(n10, n01, n, threshold / 100, side="above")


def weights(n: int, tabs: list[tuple[int, int]], threshold: float, grid: np.ndarray) -> np.ndarray:
    """P(each table) (columns) at each nuisance p01 (rows) on the null edge p10 = p01 + t."""
    t = threshold / 100
    x = np.array([[b, c, n - b - c] for b, c in tabs]).reshape(-1, 3)
    out = np.empty((len(grid), len(tabs)))
    for i, p01 in enumerate(grid):
        p = np.clip([p01 + t, p01, 1 - 2 * p01 - t], 0.0, 1.0)
        out[i] = scipy.stats.multinomial.pmf(x, n, p / p.sum())
    return out


def null_rates(n: int, claimed: list[tuple[int, int]], threshold: float, side: str,
               grid: np.ndarray) -> np.ndarray:  # fmt: skip
    """P(a claimed table) at each nuisance p01 on the null edge of the claim."""
    if not claimed:
        return np.zeros(len(grid))
    if side == "ruled_out":  # false when the truth is t or more: p10 = p01 + t, mirrored
        claimed = [(c, b) for b, c in claimed]
        return weights(n, claimed, -threshold, grid).sum(axis=1)
    return weights(n, claimed, threshold, grid).sum(axis=1)


def grid(threshold: float, step: float = 0.0005) -> np.ndarray:
    t = threshold / 100
    lo, hi = max(0.0, -t), (1 - t) / 2
    return np.append(np.arange(lo, hi, step), hi)


def calibrate(n: int, threshold: float, alpha: float, side: str) -> set[tuple[int, int]]:
    """The claiming tables of the calibrated rule, from the definitions."""
    rows = []
    for b, c in tables(n):
        s = statistic(n, b, c, threshold, side)
        edge = c - b if side == "ruled_out" else b - c
        rows.append((0.0 if s < ZERO else s, -edge, b, c))
    rows.sort()
    ordered = [(b, c) for _, _, b, c in rows]
    if side == "ruled_out":
        g = grid(-threshold)
        w = weights(n, [(c, b) for b, c in ordered], -threshold, g)
    else:
        g = grid(threshold)
        w = weights(n, ordered, threshold, g)
    over = np.flatnonzero(np.cumsum(w, axis=1).max(axis=0) > alpha)
    return set(ordered[: int(over[0]) if over.size else len(ordered)])
