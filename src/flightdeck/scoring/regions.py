"""Claim regions: the tables on which a claim is made, and their exact chance of a false claim.

A claim at n reads one statistic per table (n10, n01) and holds when it is small. It is
written here in oriented counts (b, c): b counts the questions that argue for the claim, c
those against. For "shown" (the difference is at least t) b = n10, c = n01; for "ruled out"
(it is below t) the mirror, b = n01, c = n10, and the null difference p_b - p_c = -t. The
statistic falls as b rises or c falls (a table with more wins or fewer losses is more
convincing), so a rule "statistic below a level" claims on an upper set: in each column c
every b from a boundary B(c) up, with B rising in c. Two facts follow (docs/statistics.md):

- the chance of a false claim is a sum over columns, P(region) = sum_c Bin(c; n, p_c) *
  P[Bin(n - c, p_b / (1 - p_c)) >= B(c)], O(n) for one nuisance value instead of O(n^2);
- its worst case over the whole null (true difference on the wrong side of t) is on the
  boundary p_b = p_c + delta, since any null law is dominated by one there and an upper set
  only gains probability under domination.

The worst case over the nuisance p_c is taken on a grid of step `GRID_STEP`, each local
maximum then refined by golden-section search (`worst_case`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flightdeck.scoring.exact import binom_pmf, binom_sf, tail_below, threshold_index

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]

# "shown_by_score" is the "shown" claim read off Tango's one-sided score p-value instead of the
# bootstrap tail: the gate's (docs/statistics.md, "The gate").
SIDES = ("shown", "ruled_out", "shown_by_score")
GRID_STEP = 0.0005
# Statistics below ZERO are one group, "numerically zero", ordered by the observed edge b - c:
# many tables have a tail of exactly 0 (every n10 < k_t table can never reach t).
ZERO = 1e-12
_REFINE = 64  # local maxima of the grid refined, the largest first


@dataclass(frozen=True)
class Problem:
    """One claim at one n: which statistic, oriented how, against which null difference."""

    n: int
    threshold: float  # points
    side: str

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {self.side!r}")

    @property
    def delta(self) -> float:
        """The null difference p_b - p_c at the edge of the claim, in oriented counts."""
        t = self.threshold / 100
        return -t if self.side == "ruled_out" else t

    @property
    def span(self) -> tuple[float, float]:
        """The nuisance p_c over the null edge: both rates and p_b = p_c + delta in [0, 1]."""
        return max(0.0, -self.delta), (1.0 - self.delta) / 2

    def orient(self, n10: npt.ArrayLike, n01: npt.ArrayLike) -> tuple[IntArray, IntArray]:
        """(b, c) of tables given as (n10, n01)."""
        import numpy as np

        b10 = np.atleast_1d(np.asarray(n10, np.int64))
        b01 = np.atleast_1d(np.asarray(n01, np.int64))
        return (b01, b10) if self.side == "ruled_out" else (b10, b01)

    def statistic(self, b: npt.ArrayLike, c: npt.ArrayLike) -> FloatArray:
        """The claim's statistic per oriented table; the claim holds when it is small.

        "shown": the exact bootstrap tail q = P*(D* < t); "ruled_out": P*(D* >= t) (the
        lower tail of the mirrored table, so a tiny value keeps its digits); "shown_by_score":
        Tango's one-sided p-value for "the difference is above t".
        """
        import numpy as np

        b_arr = np.atleast_1d(np.asarray(b, np.float64))
        c_arr = np.atleast_1d(np.asarray(c, np.float64))
        if self.side == "shown_by_score":
            from flightdeck.scoring.intervals import tango_pvalues

            return tango_pvalues(b_arr, c_arr, self.n, self.threshold / 100)
        kt = threshold_index(self.n, self.threshold)
        k = 1 - kt if self.side == "ruled_out" else kt
        return tail_below(self.n, b_arr, c_arr, k)


@dataclass(frozen=True)
class Rule:
    """Claim when the statistic is below ``cut``, or numerically zero with b - c above ``tie``.

    ``cut`` sits halfway between the largest statistic that claims and the smallest that does
    not, which the calibration keeps apart (`CLEARANCE`), so a statistic computed another
    way, a few ulps off, claims the same. ``cut`` 0 with a ``tie``: the claim splits the
    numerically-zero group by the observed edge.
    """

    cut: float
    tie: int

    def claims(self, stat: npt.ArrayLike, edge: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        import numpy as np

        s = np.asarray(stat, np.float64)
        plain = (s < self.cut) & (self.cut >= ZERO)  # a cut of 0: the zero group by edge only
        return np.asarray(plain | ((s < ZERO) & (np.asarray(edge) > self.tie)))


def below(level: float, n: int) -> Rule:
    """The plain rule "statistic < level" (the numerically-zero group claims whole if level
    is above ZERO, else not at all)."""
    return Rule(level, n + 1)


def boundary(problem: Problem, rule: Rule) -> IntArray:
    """B(c) for c = 0..n: the smallest b that claims in column c (n - c + 1 when none does).

    A bisection in every column at once; the rule is monotone in b within a column.
    """
    import numpy as np

    n = problem.n
    c = np.arange(n + 1, dtype=np.int64)
    lo = np.full(n + 1, -1, np.int64)  # does not claim (virtually)
    hi = n - c + 1  # claims (virtually)
    while True:
        active = np.flatnonzero(hi - lo > 1)
        if active.size == 0:
            return hi
        mid = (lo[active] + hi[active]) // 2
        cc = c[active]
        yes = rule.claims(problem.statistic(mid, cc), mid - cc)
        hi[active] = np.where(yes, mid, hi[active])
        lo[active] = np.where(yes, lo[active], mid)


def claim_probability(
    n: int, bounds: IntArray, p_b: npt.ArrayLike, p_c: npt.ArrayLike
) -> FloatArray:
    """P(the table falls in the region b >= bounds[c]) when each question argues for the claim
    with probability p_b and against it with p_c (one value per row of p_b, p_c)."""
    import numpy as np

    c = np.arange(n + 1, dtype=np.float64)
    pb = np.atleast_1d(np.asarray(p_b, np.float64))[:, None]
    pc = np.atleast_1d(np.asarray(p_c, np.float64))[:, None]
    rest = 1.0 - pc
    share = np.clip(np.divide(pb, rest, out=np.ones_like(pb), where=rest > 0), 0.0, 1.0)
    column = binom_pmf(c[None, :], n, pc)
    # P(Bin(n - c, share) >= B(c)) = P(Bin > B(c) - 1); an empty column (B = n - c + 1) is 0.
    reach = binom_sf(bounds[None, :] - 1, n - c[None, :], share)
    result: FloatArray = np.minimum((column * reach).sum(axis=1), 1.0)
    return result


def null_grid(problem: Problem) -> FloatArray:
    """The nuisance p_c over the null edge, every `GRID_STEP` and both ends."""
    import numpy as np

    start, stop = problem.span
    steps = max(int(np.floor((stop - start) / GRID_STEP + 1e-9)), 1)
    return np.unique(np.append(np.linspace(start, start + steps * GRID_STEP, steps + 1), stop))


def null_rates(problem: Problem, bounds: IntArray, p_c: npt.ArrayLike) -> FloatArray:
    """The chance of a false claim at each nuisance value p_c on the null edge."""
    import numpy as np

    pc = np.atleast_1d(np.asarray(p_c, np.float64))
    return claim_probability(problem.n, bounds, pc + problem.delta, pc)


@dataclass(frozen=True)
class WorstCase:
    """The largest chance of a false claim over the null edge, and the nuisance p_c where it is."""

    rate: float
    p_c: float


def worst_case(problem: Problem, bounds: IntArray) -> WorstCase:
    """The largest chance of a false claim over the null edge, and where on it.

    The grid's local maxima (ends included), largest first, are each refined by golden-section
    search between their neighbours, to 1e-9 in p_c.
    """
    import numpy as np

    if not np.any(bounds <= problem.n - np.arange(problem.n + 1)):
        return WorstCase(0.0, problem.span[0])  # the region is empty: no claim is ever made
    grid = null_grid(problem)
    rates = null_rates(problem, bounds, grid)
    padded = np.concatenate([[-1.0], rates, [-1.0]])
    peaks = np.flatnonzero((rates >= padded[:-2]) & (rates >= padded[2:]))
    peaks = peaks[np.argsort(-rates[peaks], kind="stable")][:_REFINE]
    best, at = float(rates.max()), float(grid[int(rates.argmax())])
    for i in peaks.tolist():
        left, right = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])
        value, where = _golden(problem, bounds, left, right)
        if value > best:
            best, at = value, where
    return WorstCase(best, at)


def _golden(problem: Problem, bounds: IntArray, left: float, right: float) -> tuple[float, float]:
    ratio = (math.sqrt(5.0) - 1.0) / 2.0

    def rate(p: float) -> float:
        return float(null_rates(problem, bounds, [p])[0])

    x1, x2 = right - ratio * (right - left), left + ratio * (right - left)
    f1, f2 = rate(x1), rate(x2)
    while right - left > 1e-9:
        if f1 >= f2:
            right, x2, f2 = x2, x1, f1
            x1 = right - ratio * (right - left)
            f1 = rate(x1)
        else:
            left, x1, f1 = x1, x2, f2
            x2 = left + ratio * (right - left)
            f2 = rate(x2)
    return (f1, x1) if f1 >= f2 else (f2, x2)


def cell_weights(n: int, b: IntArray, c: IntArray, p_b: FloatArray, p_c: FloatArray) -> FloatArray:
    """Multinomial probabilities of each table (columns) at each (p_b, p_c) (rows)."""
    import numpy as np
    from scipy.special import gammaln, xlogy

    rest = n - b - c
    p_rest = np.clip(1.0 - p_b - p_c, 0.0, 1.0)
    log_coef = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(rest + 1)
    log_w = (
        log_coef[None, :]
        + xlogy(b[None, :], p_b[:, None])
        + xlogy(c[None, :], p_c[:, None])
        + xlogy(rest[None, :], p_rest[:, None])
    )
    weights: FloatArray = np.exp(log_w)
    return weights


def is_upper_set(n: int, bounds: IntArray) -> bool:
    """True when the region b >= bounds[c] only grows as c falls: a table with fewer losses
    claims whenever one with more does (within a column it holds by construction)."""
    import numpy as np

    c = np.arange(n + 1)
    capped = np.minimum(bounds, n - c + 1)  # an empty column: nothing claims
    live = capped <= n - c
    # Where column c claims from B(c), column c - 1 (one loss fewer) must claim from <= B(c).
    return bool(np.all(~live[1:] | (capped[:-1] <= capped[1:])))
