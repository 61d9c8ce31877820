"""The calibrated level of a claim at the suite's n, by exact enumeration, and where it is kept.

The calibrated rule claims when the claim's statistic is below alpha'(n, t), the largest level
whose worst-case chance of a false claim at this n, over every nuisance value, is at most
alpha. Ordering the tables by their statistic, alpha' is where the running worst case first
passes alpha (docs/statistics.md, "Calibration"). Only the tables near the cut are weighed
one by one: two plain rules "statistic < x" bracket it (one within alpha, one over), and the
tables between them are sorted and added in order to the lower one's region (`regions`).

Levels for the shipped thresholds (t = 15 for "shown" and "ruled out", the gate's margins 5,
10 and 15) are a table in the package for n <= `TABLE_MAX_N` (scripts/calibration_table.py
writes it, tests/unit/test_calibration_exact.py recomputes some of it); any other n up to
`EXACT_MAX_N` or threshold is computed on demand and kept in the project cache. Above
`EXACT_MAX_N` no calibrated claim is made (`CalibratedLevel.refused`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.errors import InternalError
from flightdeck.scoring.regions import (
    SIDES,
    ZERO,
    Problem,
    Rule,
    below,
    boundary,
    cell_weights,
    is_upper_set,
    null_grid,
    null_rates,
    worst_case,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]

__all__ = [
    "SIDES",
    "CalibratedLevel",
    "calibrate",
    "claim_bounds",
    "claims",
    "compute",
    "needed_wins",
]

TABLE_MAX_N = 500
# Above this n the cold calibrations of a score cost more than 20 s on the shared 2-CPU
# machine and grow like n^2 (benchmarks/bench_decision.py: 2.3 s at n = 500, 7.6 s at 1,000,
# 20 s at 2,000, load 4); no calibrated claim is made there (docs/statistics.md).
EXACT_MAX_N = 2000
CACHE_VERSION = 3
TABLE_FILE = "calibration_table.json"
# The cut keeps this far (relative, plus an absolute floor) from every table's statistic, so
# a statistic computed by another code path a few ulps away claims the same.
CLEARANCE = 1e-9
CLEARANCE_FLOOR = 1e-14
_BLOCK = 256  # tables weighed at once while calibrating
_MEMO: dict[tuple[int, float, float, str], CalibratedLevel] = {}  # this process's calibrations


@dataclass(frozen=True)
class CalibratedLevel:
    """The level a claim is read at, and the exact worst-case rate of a false claim.

    ``side`` "shown" claims the difference is at least t (false when it is truly t or less);
    "ruled_out" that it is below t; "shown_by_score" is "shown" read off Tango's p-value.
    ``level`` is alpha': the smallest statistic of a table that does not claim (any level in
    (``below``, ``level``] gives the same rule); the rule compares with ``cut``, halfway.
    ``tie`` > -n: the cut splits the numerically-zero statistics by the observed edge.
    ``size`` is the worst case over the nuisance, at ``worst_p01`` (the baseline-only rate).
    ``refused``: n is above `EXACT_MAX_N`, nothing is claimed and ``size`` is None.
    """

    n: int
    threshold: float  # points
    alpha: float
    side: str
    level: float
    below: float
    cut: float
    tie: int
    size: float | None
    worst_p01: float | None
    exact: bool = True
    refused: bool = False
    source: str = field(default="computed", compare=False)  # "table", "cache" or "computed"

    @property
    def claims_somewhere(self) -> bool:
        """True when some table at this n makes the claim."""
        return bool(self.size)

    @property
    def rule(self) -> Rule:
        return Rule(self.cut, self.tie)


def calibrate(
    n: int, threshold: float, *, alpha: float, side: str, cache_dir: Path | None = None
) -> CalibratedLevel:
    """The calibrated level for a claim at n: the package's table, this process's memo, the
    project cache, or computed now (and cached)."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    if n > EXACT_MAX_N:
        return CalibratedLevel(n, threshold, alpha, side, 0.0, 0.0, 0.0, n + 1, None, None,
                               exact=False, refused=True)  # fmt: skip
    key = (n, float(threshold), float(alpha), side)
    found = _MEMO.get(key) or _shipped(side, float(threshold), float(alpha)).get(n)
    if found is None:
        found = _read_cache(cache_dir, *key)
    if found is None:
        found = compute(n, threshold, alpha=alpha, side=side)
        _write_cache(cache_dir, found)
    _MEMO[key] = found
    return found


def compute(n: int, threshold: float, *, alpha: float, side: str) -> CalibratedLevel:
    """Calibrate from scratch: the largest prefix of the tables, in order of their statistic,
    whose worst-case false-claim rate is at most alpha, with its cut kept clear of them."""
    import numpy as np

    problem = Problem(n, threshold, side)
    lo_level, lo_bounds, hi_bounds = _bracket(problem, alpha)
    cols = np.arange(n + 1, dtype=np.int64)
    span = np.maximum(lo_bounds - hi_bounds, 0)
    c = np.repeat(cols, span)
    b = np.concatenate([np.arange(h, h + s) for h, s in zip(hi_bounds, span, strict=True)] or
                       [np.zeros(0, np.int64)]).astype(np.int64)  # fmt: skip
    stat = problem.statistic(b, c)
    edge = b - c
    order = np.lexsort((-edge, np.where(stat < ZERO, 0.0, stat)))
    b, c, stat, edge = b[order], c[order], stat[order], edge[order]
    first = _first_over(problem, alpha, lo_bounds, b, c)
    outside = _next_outside(problem, hi_bounds)
    base_max = _largest_inside(problem, lo_bounds)
    while True:
        first, rule, level, low = _robust_cut(first, stat, edge, base_max, outside, n)
        bounds = lo_bounds.copy()
        np.subtract.at(bounds, c[:first], 1)
        if not is_upper_set(n, bounds) or not _contiguous(bounds, lo_bounds, b[:first], c[:first]):
            raise InternalError(
                f"the claim region at n = {n}, {side} {threshold:g} is not monotone"
            )
        worst = worst_case(problem, bounds)
        if worst.rate <= alpha:
            break
        if first == 0:  # even the lower bracket is over alpha between grid points
            raise InternalError(f"no calibrated level found at n = {n}, {side} {threshold:g}")
        first -= 1
    p01 = worst.p_c + problem.delta if side == "ruled_out" else worst.p_c
    return CalibratedLevel(n, float(threshold), float(alpha), side, level, low, rule.cut,
                           rule.tie, worst.rate, p01)  # fmt: skip


def claim_bounds(cal: CalibratedLevel) -> IntArray:
    """B(c) of the calibrated region, for the power of the rule (oriented counts)."""
    return _bounds(cal.n, cal.threshold, cal.side, cal.cut, cal.tie)


@dataclass(frozen=True, slots=True)
class TableClaims:
    """The calibrated rule on some tables: whether each makes the claim, and its statistic."""

    held: npt.NDArray[np.bool_]
    statistic: FloatArray


def claims(cal: CalibratedLevel, n10: npt.ArrayLike, n01: npt.ArrayLike) -> TableClaims:
    """The calibrated rule on tables given as (n10, n01), the one function the verdict and the
    tests read."""
    import numpy as np

    problem = Problem(cal.n, cal.threshold, cal.side)
    b, c = problem.orient(n10, n01)
    stat = problem.statistic(b, c)
    if cal.refused:
        return TableClaims(np.zeros(stat.shape, np.bool_), stat)
    return TableClaims(cal.rule.claims(stat, b - c), stat)


def smallest_claiming_n(
    threshold: float, *, alpha: float, side: str, cache_dir: Path | None = None
) -> int | None:
    """The smallest n at which some table makes the claim (None: none up to `EXACT_MAX_N`)."""
    for n in range(1, EXACT_MAX_N + 1):
        if calibrate(n, threshold, alpha=alpha, side=side, cache_dir=cache_dir).claims_somewhere:
            return n
    return None


def needed_wins(cal: CalibratedLevel, losses: int) -> int | None:
    """The fewest wins (questions only the candidate got right) that make the claim with this
    many losses (only the other arm right), or None when no table with them does."""
    bounds = claim_bounds(cal)
    if cal.side == "ruled_out" or losses > cal.n:
        raise ValueError("wins are counted for the shown claims only, losses <= n")
    need = int(bounds[losses])
    return need if need <= cal.n - losses else None


@functools.lru_cache(maxsize=32)
def _bounds(n: int, threshold: float, side: str, cut: float, tie: int) -> IntArray:
    result = boundary(Problem(n, threshold, side), Rule(cut, tie))
    result.flags.writeable = False
    return result


def _bracket(problem: Problem, alpha: float) -> tuple[float, IntArray, IntArray]:
    """(x_lo, its region, x_hi's region): the plain rule at x_lo within alpha, at x_hi over."""
    n = problem.n
    hi = alpha
    hi_bounds = boundary(problem, below(hi, n))
    while worst_case(problem, hi_bounds).rate <= alpha:
        if hi > 1.0:
            raise InternalError(f"every table claims within alpha at n = {n}")
        hi *= 2.0
        hi_bounds = boundary(problem, below(hi, n))
    lo = hi / 4.0
    lo_bounds = boundary(problem, below(lo, n))
    while worst_case(problem, lo_bounds).rate > alpha:
        lo /= 16.0
        if lo < ZERO:
            lo = 0.0
            lo_bounds = boundary(problem, below(lo, n))
            break
        lo_bounds = boundary(problem, below(lo, n))
    return lo, lo_bounds, hi_bounds


def _first_over(problem: Problem, alpha: float, base: IntArray, b: IntArray, c: IntArray) -> int:
    """How many of the sorted tables can join the base region before the grid's worst case
    passes alpha."""
    import numpy as np

    grid = null_grid(problem)
    running = null_rates(problem, base, grid)
    for start in range(0, len(b), _BLOCK):
        part = slice(start, start + _BLOCK)
        weights = cell_weights(problem.n, b[part], c[part], grid + problem.delta, grid)
        cum = np.cumsum(weights, axis=1) + running[:, None]
        over = np.flatnonzero(cum.max(axis=0) > alpha)
        if over.size:
            return start + int(over[0])
        running = cum[:, -1]
    return len(b)


def _largest_inside(problem: Problem, bounds: IntArray) -> float:
    """The largest statistic of a region: its lowest row, B(c) in each live column (-1: empty)."""
    import numpy as np

    cols = np.flatnonzero(bounds <= problem.n - np.arange(problem.n + 1))
    if cols.size == 0:
        return -1.0
    return float(problem.statistic(bounds[cols], cols).max())


def _next_outside(problem: Problem, hi_bounds: IntArray) -> float:
    """The smallest statistic above the tables weighed: the row just outside x_hi's region."""
    import numpy as np

    cols = np.flatnonzero(hi_bounds >= 1)
    if cols.size == 0:
        return 2.0
    return float(problem.statistic(hi_bounds[cols] - 1, cols).min())


def _robust_cut(
    first: int, stat: FloatArray, edge: IntArray, base_max: float, outside: float, n: int
) -> tuple[int, Rule, float, float]:
    """(prefix length, rule, alpha', largest claiming statistic): the cut moved back until it
    is clear of every statistic, or splits the numerically-zero group between two edges.

    ``stat`` is sorted (the zero group by edge); ``base_max`` is the largest statistic of
    the region below the tables weighed (-1 when it is empty).
    """
    import numpy as np

    top = np.maximum.accumulate(stat) if len(stat) else stat
    while True:
        nxt = float(stat[first]) if first < len(stat) else outside
        low = max(base_max, float(top[first - 1])) if first > 0 else base_max
        if nxt < ZERO:
            if first == 0:  # nothing of the zero group claims
                return 0, Rule(0.0, n + 1), 0.0, 0.0
            if edge[first - 1] == edge[first]:
                first -= 1
                continue
            return first, Rule(0.0, int(edge[first])), 0.0, low
        cut = max((max(low, 0.0) + nxt) / 2.0, ZERO)
        clear = CLEARANCE * nxt + CLEARANCE_FLOOR
        if nxt - cut >= clear and (low < 0.0 or cut - low >= clear):
            return first, Rule(cut, n + 1), nxt, max(low, 0.0)
        if first == 0:
            raise InternalError(f"no clear cut above the bracket at n = {n}")
        first -= 1


def _contiguous(bounds: IntArray, base: IntArray, b: IntArray, c: IntArray) -> bool:
    """The tables added to a column are exactly the run just below its base boundary."""
    import numpy as np

    if b.size == 0:
        return True
    lowest = base.copy()
    np.minimum.at(lowest, c, b)
    return bool(np.array_equal(lowest, bounds))


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("flightdeck.scoring").joinpath(TABLE_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@functools.lru_cache(maxsize=16)
def _shipped(side: str, threshold: float, alpha: float) -> dict[int, CalibratedLevel]:
    """The package's levels for (side, threshold, alpha), by n; empty when not shipped."""
    data = _table()
    if data.get("version") != CACHE_VERSION or float(data["alpha"]) != alpha:
        return {}
    rows = data["levels"].get(f"{side} {threshold:g}", [])
    return {
        int(n): CalibratedLevel(
            int(n), threshold, alpha, side, level, low, cut, int(tie), size, p01, source="table"
        )
        for n, level, low, cut, tie, size, p01 in rows
    }


def _cache_path(cache_dir: Path, n: int, threshold: float, alpha: float, side: str) -> Path:
    name = f"calibration-v{CACHE_VERSION}-n{n}-t{threshold:g}-a{alpha:.10g}-{side}.json"
    return cache_dir / name


def _read_cache(
    cache_dir: Path | None, n: int, threshold: float, alpha: float, side: str
) -> CalibratedLevel | None:
    if cache_dir is None:
        return None
    path = _cache_path(cache_dir, n, threshold, alpha, side)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        record.pop("source", None)
        result = CalibratedLevel(**{**record, "source": "cache"})
    except (OSError, ValueError, TypeError):
        return None  # absent or unreadable: a cache entry is recomputed, never trusted blindly
    key = (result.n, result.threshold, result.alpha, result.side)
    return result if key == (n, threshold, alpha, side) else None


def _write_cache(cache_dir: Path | None, result: CalibratedLevel) -> None:
    if cache_dir is None:
        return
    from flightdeck.files.jsonl import atomic_write

    path = _cache_path(cache_dir, result.n, result.threshold, result.alpha, result.side)
    record = asdict(result)
    record.pop("source")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(record, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only project still scores; it only recomputes next time
