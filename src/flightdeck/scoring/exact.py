"""The paired bootstrap of a 0/1 metric with infinitely many resamples, in closed form.

Each question's paired difference is +1 (only the candidate right), -1 (only the baseline
right) or 0, so a resample of n questions is a trinomial draw (N10*, N01*, N00*) ~
Multinomial(n; n10/n, n01/n, n00/n) and D* = K*/n with K* = N10* - N01*. The bootstrap
distribution depends on (n, n10, n01) only: no seed, no resample count, no line order.
Conditional on N10* = a, N01* ~ Bin(n - a, n01/(n - n10)), so

    P*(K* < k) = sum_a Bin(a; n, n10/n) * P[Bin(n - a, n01/(n - n10)) > a - k]

is O(n) per k (docs/statistics.md, "The exact bootstrap"). A seeded percentile interval
converges to the quantiles of this distribution; `seeded_at_least` gives the exact law of the
seeded bound over seeds (or line orders at a fixed seed): how likely another seed flips it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

from flightdeck.scoring.stats import normal_quantile

# Above this n the seeded law reads the atoms near the threshold only (`window_pmf`, O(n)
# instead of O(n^2)); it only says how likely another seed flips the plain reading.
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


def tail_below(n: int, n10: npt.ArrayLike, n01: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    """P*(K* < k) for each cell (n10, n01) and lattice point k (broadcast together).

    The sum over N10* = a keeps the terms within 12 standard deviations (plus 30) of the
    mean n10: a binomial beyond that weighs below e^-45 of the total (Bernstein's bound),
    so the cost is O(sqrt(n)) per cell, not O(n). Cells are taken a block at a time, so all
    the cells of n = 2,000 fit in a few tens of megabytes.
    """
    import numpy as np

    b10, b01, bk = np.broadcast_arrays(
        np.asarray(n10, np.float64), np.asarray(n01, np.float64), np.asarray(k, np.float64)
    )
    shape = b10.shape
    b10, b01, bk = b10.ravel(), b01.ravel(), bk.ravel()
    out = np.empty(b10.size, np.float64)
    spread = np.ceil(12.0 * np.sqrt(b10 * (n - b10) / n) + 30.0)
    block = max(1, 2_000_000 // (2 * min(int(spread.max(initial=0.0)), n) + 1))
    for start in range(0, b10.size, block):
        part = slice(start, start + block)
        b, c, kk = b10[part], b01[part], bk[part]
        width = min(int(spread[part].max()), n)
        offsets = np.arange(-width, width + 1, dtype=np.float64)
        a = b[:, None] + offsets[None, :]
        inside = (a >= 0) & (a <= n) & (np.abs(offsets)[None, :] <= spread[part, None])
        a = np.where(inside, a, 0.0)
        rest = n - b
        q = np.divide(c, rest, out=np.zeros_like(c), where=rest > 0)
        weight = np.where(inside, binom_pmf(a, n, (b / n)[:, None]), 0.0)
        # K* < k  <=>  N01* > a - k given N10* = a.
        above = binom_sf(a - kk[:, None], n - a, q[:, None])
        out[part] = np.minimum((weight * above).sum(axis=-1), 1.0)
    result: FloatArray = out.reshape(shape)
    return result


def tail_at_least(n: int, n10: npt.ArrayLike, n01: npt.ArrayLike, k: npt.ArrayLike) -> FloatArray:
    """P*(K* >= k): the lower tail of the mirrored table (K* of (n01, n10) is -K*), so a tiny
    upper tail keeps its digits instead of being 1 minus a number near 1."""
    import numpy as np

    return tail_below(n, n01, n10, 1 - np.asarray(k, np.float64))


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
    when the verdict holds). The tail only rises with k: the crossing is searched out from
    the normal approximation's guess, then halved (`_last_true`), in 3 tails at n = 100,000
    where halving the whole lattice takes 18.
    """

    def inside(k: int) -> bool:
        return float(tail_below(n, n10, n01, k)) < level

    shown = inside(kt)
    lo, hi = (kt, n + 1) if shown else (-n, kt)  # tail(lo) < level <= tail(hi) or hi is the cap
    if not shown and not inside(-n):
        return -n  # no level this small: every difference down to -1 stays possible
    mean, reach = _normal_reach(n, n10, n01, level)
    return _last_true(inside, lo, hi, math.floor(mean - reach))


def upper_bound(n: int, n10: float, n01: float, level: float, kt: int) -> int:
    """The smallest k with P*(K* > k) < level: the upper bound read at one-sided ``level``.

    P*(K* > k) is 1 - P*(K* < k + 1), the same computation as the verdict "P*(K* >= kt) <
    level", so the bound is below kt exactly when that verdict holds.
    """

    def outside(k: int) -> bool:  # the bound is above k
        return 1.0 - float(tail_below(n, n10, n01, k + 1)) >= level

    ruled_out = not outside(kt - 1)
    lo, hi = (-n - 1, kt - 1) if ruled_out else (kt - 1, n)  # above(hi) < level <= above(lo)
    if not ruled_out and outside(n - 1):
        return n  # every resample can reach n: the bound is the top of the lattice
    mean, reach = _normal_reach(n, n10, n01, level)
    return _last_true(outside, lo, hi, math.ceil(mean + reach)) + 1


def _normal_reach(n: int, n10: float, n01: float, level: float) -> tuple[float, float]:
    """(mean, z sd) of K*, z the normal quantile at 1 - level: a bound's first guess."""
    p10, p01, z = n10 / n, n01 / n, -normal_quantile(min(max(level, 1e-300), 0.5))
    return n10 - n01, z * math.sqrt(max(n * (p10 + p01 - (p10 - p01) ** 2), 0.0))


def _last_true(holds: Callable[[int], bool], lo: int, hi: int, guess: int) -> int:
    """The k in [lo, hi) with holds(k) and not holds(k + 1), given holds(lo) and not holds(hi)
    (neither is asked) and holds true then false: out from ``guess`` in steps 1, 2, 4, ...,
    then halving the bracket found. The same k as halving [lo, hi) from the start."""
    step = 1
    guess = min(max(guess, lo + 1), hi - 1)
    if lo + 1 < hi:
        if holds(guess):
            lo = guess
            while lo + step < hi and holds(lo + step):
                lo, step = lo + step, 2 * step
            hi = min(hi, lo + step)
        else:
            hi = guess
            while hi - step > lo and not holds(hi - step):
                hi, step = hi - step, 2 * step
            lo = max(lo, hi - step)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid
    return lo


def window_pmf(n: int, n10: int, n01: int, centre: int, half: int = 60) -> tuple[int, FloatArray]:
    """(start, pmf) of K* on start..start + 2 half, the end atoms holding the tails beyond.

    For the seeded law at large n: of 10,000 resamples the verdict reads the few near the
    threshold; a draw more than ``half`` lattice steps away from it never decides.
    """
    import numpy as np

    start = max(-n, centre - half)
    stop = min(n, centre + half)
    below = tail_below_run(n, n10, n01, start + 1, stop - start)  # P*(K* < k), k > start
    cdf = np.append(np.minimum.accumulate(below[::-1])[::-1], 1.0)
    pmf: FloatArray = np.diff(cdf, prepend=0.0)
    return start, np.clip(pmf, 0.0, 1.0)


def tail_below_run(n: int, n10: int, n01: int, first: int, count: int) -> FloatArray:
    """P*(K* < k) of one cell for the ``count`` lattice points k = first, first + 1, ...

    `tail_below`'s sum over N10* = a, on the same terms, taken once at k = first; each
    next point adds P*(K* = k) = sum_a Bin(a; n, n10/n) Bin(a - k; n - a, q), whose
    binomial probabilities come from a table of log-factorials (`log_factorials`) read
    along contiguous runs. A run of 120 points costs about one tail and a few array passes
    instead of 120 tails; every term is a sum of non-negative numbers, so the digits
    `tail_below` keeps are kept (tests/unit/test_exact_runs.py compares the two).
    """
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    if count < 1:
        return np.zeros(0, np.float64)
    spread = math.ceil(12.0 * math.sqrt(n10 * (n - n10) / n) + 30.0)
    offsets = np.arange(-min(spread, n), min(spread, n) + 1, dtype=np.int64)
    a = n10 + offsets
    a = a[(a >= 0) & (a <= n)]
    rest = n - n10
    q = n01 / rest if rest > 0 else 0.0
    weight = binom_pmf(a, n, n10 / n)
    top = binom_sf(a - first, n - a, q)  # P[Bin(n - a, q) > a - first]: K* < first
    tails = np.empty(count, np.float64)
    tails[0] = weight @ top
    if count > 1:
        steps = count - 1  # P*(K* = first + t), t = 0 .. count - 2
        if 0.0 < q < 1.0:
            lq, l1q = math.log(q), math.log1p(-q)
            a, weight = rows_with_mass(a, weight, n, first, steps, q, lq, l1q)
        if a.size == 0:  # every term of every point is exactly 0
            mass = np.zeros((0, steps), np.float64)
        elif 0.0 < q < 1.0:
            # log P[Bin(m, q) = j] = L(m) - L(j) - L(m - j) + j log q + (m - j) log(1 - q),
            # with j = a - first - t and m - j = n - 2a + first + t: two runs of the table,
            # padded with +inf where j or m - j is negative or above n (probability 0).
            pad = 2 * n + steps + abs(first) + 1
            logs = np.concatenate([np.full(pad, np.inf), log_factorials(n), np.full(pad, np.inf)])
            rising = sliding_window_view(logs, steps)
            falling = sliding_window_view(logs[::-1], steps)
            j0, mj0 = a - first, n - 2 * a + first
            rows = logs[pad + n - a] + (n - a) * l1q + j0 * (lq - l1q)
            log = (
                rows[:, None]
                - falling[len(logs) - 1 - (pad + j0)]
                - rising[pad + mj0]
                - np.arange(steps, dtype=np.float64)[None, :] * (lq - l1q)
            )
            mass = np.exp(log)
        else:  # a point mass: Bin(m, 0) = 0, Bin(m, 1) = m
            j = (a - first)[:, None] - np.arange(steps, dtype=np.int64)[None, :]
            mass = np.where(j == (0 if q <= 0.0 else (n - a)[:, None]), 1.0, 0.0)
        tails[1:] = tails[0] + np.cumsum(weight @ mass)
    result: FloatArray = np.minimum(tails, 1.0)
    return result


# A product of probabilities whose logarithm is below this is below the smallest positive
# double (e^-744.4), so it is exactly 0 in floating point.
_UNDERFLOW = -800.0


def rows_with_mass(
    a: npt.NDArray[np.int64],
    weight: FloatArray,
    n: int,
    first: int,
    steps: int,
    q: float,
    lq: float,
    l1q: float,
) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """The rows N10* = a of `tail_below_run` with a term that is not exactly 0.

    Row a holds Bin(a; n, n10/n) Bin(j; n - a, q) for j = a - first - t, t < ``steps``.
    log Bin(j; m, q) is concave in j with its peak at the mode floor((m + 1) q), so its
    largest value on the row is at the mode moved into the row's range; a row whose largest
    term is below e^-800 is all zeros and is left out. Far from the bulk of the law (the
    threshold at 15 points, the difference at 30 with n = 100,000) that is every row.
    """
    import numpy as np

    m = n - a
    lowest = np.maximum(a - first - steps + 1, 0)
    highest = np.minimum(a - first, m)
    mode = np.minimum(np.floor((m + 1) * q).astype(np.int64), m)
    j = np.clip(mode, lowest, np.maximum(highest, lowest))
    logs = log_factorials(n)
    inside = lowest <= highest
    jj, mj = np.where(inside, j, 0), np.where(inside, m - j, 0)
    peak = logs[m] - logs[jj] - logs[mj] + jj * lq + mj * l1q
    with np.errstate(divide="ignore"):
        live = inside & (np.log(weight) + peak > _UNDERFLOW)
    return a[live], weight[live]


@functools.lru_cache(maxsize=4)
def log_factorials(n: int) -> FloatArray:
    """log(x!) for x = 0..n (scipy.special.gammaln(x + 1)), read-only."""
    import numpy as np
    from scipy.special import gammaln

    table: FloatArray = gammaln(np.arange(n + 1, dtype=np.float64) + 1.0)
    table.flags.writeable = False
    return table


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
    c (docs/statistics.md, "The seeded reading"). Draws are iid, as over seeds or over line orders.
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
