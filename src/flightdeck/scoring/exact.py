"""The paired bootstrap of a 0/1 metric with infinitely many resamples, in closed form.

Each question's paired difference is +1 (only the candidate right), -1 (only the baseline
right) or 0, so a resample of n questions is a trinomial draw (N10*, N01*, N00*) ~
Multinomial(n; n10/n, n01/n, n00/n) and D* = K*/n with K* = N10* - N01*. The bootstrap
distribution depends on (n, n10, n01) only: no seed, no resample count, no line order.
Conditional on N10* = a, N01* ~ Bin(n - a, n01/(n - n10)), so

    P*(K* < k) = sum_a Bin(a; n, n10/n) * P[Bin(n - a, n01/(n - n10)) > a - k]

is O(n) per k (stats-audit.md section 3.1). A seeded percentile interval converges to the
quantiles of this distribution; `seeded_at_least` gives the exact law of the seeded bound over
seeds (or line orders at a fixed seed), which says how likely another seed flips a verdict.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

# Above this n a single cell's sums skip the terms below e^-72 of the total, and the seeded
# law reads the atoms near the threshold only (`window_pmf`, O(n) instead of O(n^2)). It
# stays above calibration.EXACT_MAX_N (a test checks), so every calibrated level compares
# bits computed the same way alone and among all cells.
WINDOW_ABOVE_N = 200

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]


def threshold_index(n: int, points: float) -> int:
    """The smallest k with k/n >= points/100, in exact rational arithmetic.

    "D* < t" on the 1/n lattice is "K* < k_t"; a float product such as 100 * 0.07 =
    7.000000000000001 would put the bound 7/100 on the wrong side of 7 points.
    """
    return math.ceil(n * Fraction(points) / 100)


def binom_pmf(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    """P(Bin(n, p) = k), 0 outside 0..n, from log-gamma (scipy.special only: importing
    scipy.stats would cost more than the whole n = 40 score)."""
    import numpy as np
    from scipy.special import gammaln, xlog1py, xlogy

    k, n, p = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64), p)
    inside = (k >= 0) & (k <= n)
    kk, nk = np.where(inside, k, 0.0), np.where(inside, n - k, n)  # outside: log <= 0
    log = gammaln(n + 1) - gammaln(kk + 1) - gammaln(nk + 1) + xlogy(kk, p) + xlog1py(nk, -p)
    return np.asarray(np.where(inside, np.exp(log), 0.0), np.float64)


def binom_sf(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    """P(Bin(n, p) > k) for integer k and n (scipy.special.bdtrc, guarded at the ends)."""
    import numpy as np
    from scipy.special import bdtrc

    k, n, p = np.broadcast_arrays(np.asarray(k).astype(np.int64), np.asarray(n).astype(np.int64), p)
    inside = (k >= 0) & (k < n)
    value = bdtrc(np.where(inside, k, 0), np.where(inside, n, 1), p)
    return np.asarray(np.where(inside, value, np.where(k < 0, 1.0, 0.0)), np.float64)


def binom_cdf(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    """P(Bin(n, p) <= k) for integer k and n (scipy.special.bdtr, guarded at the ends)."""
    import numpy as np
    from scipy.special import bdtr

    k, n, p = np.broadcast_arrays(np.asarray(k).astype(np.int64), np.asarray(n).astype(np.int64), p)
    inside = (k >= 0) & (k < n)
    value = bdtr(np.where(inside, k, 0), np.where(inside, n, 1), p)
    return np.asarray(np.where(inside, value, np.where(k < 0, 0.0, 1.0)), np.float64)


def bootstrap_table(
    n: int, n10: npt.ArrayLike, n01: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """The counts a claim's bootstrap reads: the table itself, unless it is a single point.

    When every question falls in one class (no discordance, or all of one sign) the bootstrap
    distribution is one point and any interval read from it has width zero. Such a table is
    read with half a question moved into each empty discordant class (the one-half of Agresti
    and Min 2005), so no claim rests on a zero-width interval; the calibration counts the
    rule as it is, so its size stays exact.
    """
    import numpy as np

    b = np.atleast_1d(np.asarray(n10, np.float64)).copy()
    c = np.atleast_1d(np.asarray(n01, np.float64)).copy()
    none = (b == 0) & (c == 0)
    b[none], c[none] = 0.5, 0.5
    b_all, c_all = (b == n), (c == n)
    b[b_all], c[b_all] = n - 0.5, 0.5
    b[c_all], c[c_all] = 0.5, n - 0.5
    return b, c


def is_point_mass(n: int, n10: int, n01: int) -> bool:
    """True when the table's bootstrap distribution is a single point (see `bootstrap_table`)."""
    return (n10 == 0 and n01 == 0) or n10 == n or n01 == n


def tail_below(n: int, n10: npt.ArrayLike, n01: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    """P*(K* < k) for each cell (n10, n01) and lattice point k (broadcast together).

    Each value is computed from its own (n10, n01, k) alone, elementwise and with a sum in a
    fixed order, so one cell gives the same bits alone or among all cells of a calibration.
    """
    import numpy as np

    b10, b01, bk = np.broadcast_arrays(
        np.asarray(n10, np.float64), np.asarray(n01, np.float64), np.asarray(k, np.float64)
    )
    a = np.arange(n + 1, dtype=np.float64)
    p10 = b10 / n
    rest = n - b10
    q = np.divide(b01, rest, out=np.zeros_like(b01), where=rest > 0)
    if np.unique(b10).size == 1:  # one cell (at many k): the weights once, the same bits
        if n > WINDOW_ABOVE_N:
            # N10* beyond 12 standard deviations weighs below e^-72 of the total: the sum
            # keeps the terms that count, a few thousand instead of n.
            centre = float(b10.flat[0])
            spread = 12.0 * math.sqrt(centre * (n - centre) / n) + 10.0
            a = a[max(0, int(centre - spread)) : min(n, int(centre + spread)) + 1]
        weight = binom_pmf(a, n, float(p10.flat[0]))
    else:
        weight = binom_pmf(a, n, p10[..., None])
    # K* < k  <=>  N01* > a - k given N10* = a.
    above = binom_sf(a - bk[..., None], n - a, q[..., None])
    # A pairwise sum along the last axis: its order depends only on the row's length.
    result: FloatArray = np.minimum((weight * above).sum(axis=-1), 1.0)
    return result


def exact_pmf(n: int, n10: int, n01: int) -> FloatArray:
    """The bootstrap distribution of K*, P*(K* = k) for k = -n..n (index k + n)."""
    pmf: FloatArray = exact_pmfs(n, [n10], [n01])[0]
    return pmf


def exact_pmfs(n: int, n10: npt.ArrayLike, n01: npt.ArrayLike) -> FloatArray:
    """`exact_pmf` for many cells at once: one row of 2n + 1 probabilities per cell."""
    import numpy as np

    b10 = np.asarray(n10, np.float64)[:, None, None]
    b01 = np.asarray(n01, np.float64)[:, None, None]
    rest = n - b10
    q = np.divide(b01, rest, out=np.zeros_like(b01), where=rest > 0)
    a = np.arange(n + 1, dtype=np.float64)
    grid = binom_pmf(a[None, :, None], n, b10 / n) * binom_pmf(
        a[None, None, :], n - a[None, :, None], q
    )
    cells = grid.shape[0]
    index = (np.arange(n + 1)[:, None] - np.arange(n + 1)[None, :] + n).ravel()
    offsets = (np.arange(cells) * (2 * n + 1))[:, None]
    flat = np.bincount(
        (offsets + index[None, :]).ravel(),
        grid.reshape(cells, -1).ravel(),
        minlength=cells * (2 * n + 1),
    )
    pmf = flat.reshape(cells, 2 * n + 1)
    total: FloatArray = pmf / pmf.sum(axis=-1, keepdims=True)
    return total


def lower_bound(n: int, n10: float, n01: float, level: float, kt: int) -> int:
    """The largest k with P*(K* < k) < level: the lower bound read at one-sided ``level``.

    Consistent by construction with the verdict "P*(K* < kt) < level" (bound >= kt exactly
    when the verdict holds), found by bisection because the tail only rises with k.
    """
    shown = float(tail_below(n, n10, n01, kt)) < level
    lo, hi = (kt, n + 1) if shown else (-n, kt)  # tail(lo) < level <= tail(hi) or hi is the cap
    if not shown and float(tail_below(n, n10, n01, -n)) >= level:
        return -n  # no level this small: every difference down to -1 stays possible
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(tail_below(n, n10, n01, mid)) < level:
            lo = mid
        else:
            hi = mid
    return lo


def upper_bound(n: int, n10: float, n01: float, level: float, kt: int) -> int:
    """The smallest k with P*(K* > k) < level: the upper bound read at one-sided ``level``.

    P*(K* > k) is 1 - P*(K* < k + 1), the same computation as the verdict "P*(K* >= kt) <
    level", so the bound is below kt exactly when that verdict holds.
    """

    def above(k: int) -> float:
        return 1.0 - float(tail_below(n, n10, n01, k + 1))

    ruled_out = above(kt - 1) < level
    lo, hi = (-n - 1, kt - 1) if ruled_out else (kt - 1, n)  # above(hi) < level <= above(lo)
    if not ruled_out and above(n - 1) >= level:
        return n  # every resample can reach n: the bound is the top of the lattice
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if above(mid) < level:
            hi = mid
        else:
            lo = mid
    return hi


def window_pmf(n: int, n10: int, n01: int, centre: int, half: int = 60) -> tuple[int, FloatArray]:
    """(start, pmf) of K* on start..start + 2 half, the end atoms holding the tails beyond.

    For the seeded law at large n: of 10,000 resamples the verdict reads the few near the
    threshold; a draw more than ``half`` lattice steps away from it never decides.
    """
    import numpy as np

    start = max(-n, centre - half)
    stop = min(n, centre + half)
    below = tail_below(n, n10, n01, np.arange(start + 1, stop + 1))  # P*(K* < k), k > start
    cdf = np.append(np.minimum.accumulate(below[::-1])[::-1], 1.0)
    pmf: FloatArray = np.diff(cdf, prepend=0.0)
    return start, np.clip(pmf, 0.0, 1.0)


def seeded_at_least(
    pmf: FloatArray,
    n: int,
    c: float,
    *,
    resamples: int,
    quantile: float,
    start: int | None = None,
) -> FloatArray:
    """P(the seeded linear quantile of ``resamples`` bootstrap draws is >= c/n), exactly.

    ``pmf`` is an (..., 2n + 1) array of exact bootstrap distributions (`exact_pmf`), or
    one from `window_pmf` whose first atom is the lattice point ``start``. The
    quantile is scipy's (Hyndman and Fan definition 7): (1 - w) X(j1) + w X(j2) of the order
    statistics, j2 = j1 + 1. With N = #{draws < c}, it is >= c when N < j1, never when N > j1,
    and when N = j1 exactly when the largest draw below and the smallest above interpolate past
    c (stats-audit.md section 3.2). Draws are iid, as over seeds or over line orders.
    """
    import numpy as np

    size = resamples
    jg = quantile * size + (1.0 - quantile)
    j2 = min(int(jg // 1), size - 1) + 1  # 1-indexed, as scipy clips
    j1 = max(int(jg // 1) - 1, 0) + 1
    w = 0.0 if int(jg // 1) - 1 < 0 else jg % 1
    offset = -n if start is None else start
    values = offset + np.arange(pmf.shape[-1], dtype=np.float64)
    below_mask = values < c
    cdf = np.cumsum(pmf, axis=-1)
    q = np.minimum(np.where(below_mask.any(), cdf[..., below_mask.sum() - 1], 0.0), 1.0)
    result = binom_cdf(j1 - 1, size, q)
    if j1 == j2 or w == 0.0:
        return np.asarray(result, np.float64)
    # N = j1: X(j1) = m is the largest of j1 draws below c, X(j2) = M the smallest of the rest.
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(below_mask, cdf / np.where(q > 0, q, 1.0)[..., None], 1.0)
        g = np.clip(g, 0.0, 1.0)
        p_max = np.where(
            below_mask,
            g**j1 - np.concatenate([np.zeros_like(g[..., :1]), g[..., :-1]], axis=-1) ** j1,
            0.0,
        )
        survive = 1.0 - np.concatenate([np.zeros_like(cdf[..., :1]), cdf[..., :-1]], axis=-1)
        s = np.where(~below_mask, survive / np.where(q < 1, 1.0 - q, 1.0)[..., None], 0.0)
        s = np.clip(s, 0.0, 1.0)
    # Smallest M with m + w (M - m) >= c, as an index of values.
    need = values + (c - values) / w
    first = np.clip(np.ceil(need - 1e-9) - offset, 0, pmf.shape[-1]).astype(np.int64)
    s_ext = np.concatenate([s, np.zeros_like(s[..., :1])], axis=-1)
    lift = np.take_along_axis(s_ext, np.broadcast_to(first, s.shape), axis=-1) ** (size - j1)
    middle = binom_pmf(j1, size, q) * np.sum(p_max * lift, axis=-1)
    return np.asarray(np.minimum(result + middle, 1.0), np.float64)
