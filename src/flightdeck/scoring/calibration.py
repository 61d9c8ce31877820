"""The size of a decision rule at the suite's n, by exact enumeration, and the calibrated level.

A rule that reads only the discordant counts (n10, n01) is a 0/1 function of the cell, so
its chance of a false claim when the true gap is exactly the threshold t is a finite sum of
multinomial cell probabilities, Mult(n; p01 + t, p01, 1 - 2 p01 - t), over the cells where it
claims. The worst case over the nuisance p01 is taken on a grid of step 0.0005 (the audit used
0.0025). The calibrated level alpha' is the largest level whose rule "statistic < alpha'" has
a worst case of at most alpha: sort the cells by their statistic, accumulate their
probabilities, stop before the first cell that lifts the worst case over alpha
(stats-audit.md section 5.1 item 3). The claim at t is the worst case of the composite null
(audit section 2.2), so calibrating there bounds every true gap on the wrong side.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.scoring.exact import bootstrap_table, tail_below, threshold_index

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]

# Above this n one exact calibration (all (n+1)(n+2)/2 cells, both claims) costs more than a
# second on the project's shared 2-CPU machine (benchmarks/bench_decision.py at load 8: 0.75 s
# at n = 100, 1.2 s at n = 120), and the level falls back to the nominal one, whose size is
# the bootstrap's asymptotic one.
EXACT_MAX_N = 100
GRID_STEP = 0.0005
_BLOCK = 256  # cells weighed at once while calibrating
CACHE_VERSION = 2
# "shown_by_score" is the "shown" claim read by Tango's score p-value instead of the bootstrap
# tail: the gate's, where the bootstrap's overconfidence at low discordance would leave a
# calibrated level of 0.14% at n = 40 (stats-audit.md section 2.3: Tango's bound for the gate).
SIDES = ("shown", "ruled_out", "shown_by_score")
_MEMO: dict[tuple[int, float, float, str], Calibration] = {}  # this process's calibrations


@dataclass(frozen=True)
class Calibration:
    """The level a claim is read at, and the exact worst-case rate of a false claim.

    ``side`` "shown" claims the difference is at least t (false when it is truly t or less);
    "ruled_out" claims it is below t (false when it is truly t or more). The rule is
    "statistic < level", ties at the level broken by the observed difference (`claiming`).
    ``below`` is the largest statistic of a cell that claims. ``exact`` is False above
    `EXACT_MAX_N`: then ``level`` is the nominal alpha and ``size`` and ``worst_p01`` are None.
    """

    n: int
    threshold: float  # points
    alpha: float
    side: str
    level: float
    below: float
    size: float | None
    worst_p01: float | None
    exact: bool
    tie: int = 0  # cells whose statistic equals level claim when their edge exceeds this


def cells(n: int) -> tuple[IntArray, IntArray]:
    """Every table at n as its discordant counts: n10 + n01 <= n, n10 major."""
    import numpy as np

    n10, n01 = np.triu_indices(n + 1)
    n01 = n01 - n10  # row n10 holds n01 = 0 .. n - n10
    return n10.astype(np.int64), n01.astype(np.int64)


def statistic(
    n: int,
    n10: npt.ArrayLike,
    n01: npt.ArrayLike,
    threshold: float,
    side: str,
    *,
    tails: FloatArray | None = None,
) -> FloatArray:
    """The number a claim reads, per cell: the exact bootstrap tail beyond t.

    "shown": q = P*(D* < t); "ruled_out": P*(D* >= t) = 1 - q, both of the bootstrap of
    `exact.bootstrap_table` (the table itself unless its bootstrap is a single point);
    "shown_by_score": Tango's one-sided p-value for "the difference is above t".
    ``tails`` are precomputed values of q for these cells (`tail_below`, the same bits).
    """
    import numpy as np

    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    if side == "shown_by_score":
        from flightdeck.scoring.intervals import tango_pvalue

        pairs = zip(np.atleast_1d(n10).tolist(), np.atleast_1d(n01).tolist(), strict=True)
        t = threshold / 100
        return np.array([tango_pvalue(int(b), int(c), n, t, side="above") for b, c in pairs])
    if tails is None:
        b, c = bootstrap_table(n, n10, n01)
        tails = tail_below(n, b, c, threshold_index(n, threshold))
    stat = np.array(tails) if side == "shown" else 1.0 - tails
    return np.asarray(stat, np.float64)


@functools.lru_cache(maxsize=16)
def all_cells_statistic(n: int, threshold: float, side: str) -> FloatArray:
    """`statistic` for every cell of `cells` (read-only; computed once per process)."""
    n10, n01 = cells(n)
    tails = None if side == "shown_by_score" else _all_cells_tail(n, threshold)
    stat = statistic(n, n10, n01, threshold, side, tails=tails)
    stat.flags.writeable = False
    return stat


@functools.lru_cache(maxsize=8)
def _all_cells_tail(n: int, threshold: float) -> FloatArray:
    b, c = bootstrap_table(n, *cells(n))
    tails = tail_below(n, b, c, threshold_index(n, threshold))
    tails.flags.writeable = False
    return tails


def null_grid(threshold: float) -> FloatArray:
    """The nuisance p01 over which the worst case is taken: p10 = p01 + t, all rates >= 0."""
    import numpy as np

    t = threshold / 100
    start, stop = max(0.0, -t), (1.0 - t) / 2
    steps = max(int(np.floor((stop - start) / GRID_STEP + 1e-9)), 1)
    return np.unique(np.append(np.linspace(start, start + steps * GRID_STEP, steps + 1), stop))


def cell_weights(
    n: int, n10: IntArray, n01: IntArray, p10: FloatArray, p01: FloatArray
) -> FloatArray:
    """Multinomial probabilities of each cell (columns) at each (p10, p01) (rows)."""
    import numpy as np
    from scipy.special import gammaln, xlogy

    n00 = n - n10 - n01
    p00 = np.clip(1.0 - p10 - p01, 0.0, 1.0)
    log_coef = gammaln(n + 1) - gammaln(n10 + 1) - gammaln(n01 + 1) - gammaln(n00 + 1)
    log_w = (
        log_coef[None, :]
        + xlogy(n10[None, :], p10[:, None])
        + xlogy(n01[None, :], p01[:, None])
        + xlogy(n00[None, :], p00[:, None])
    )
    weights: FloatArray = np.exp(log_w)
    return weights


def null_weights(n: int, threshold: float) -> tuple[FloatArray, FloatArray]:
    """(grid of p01, cell probabilities at a true gap of exactly t for each grid point)."""
    n10, n01 = cells(n)
    grid = null_grid(threshold)
    return grid, cell_weights(n, n10, n01, grid + threshold / 100, grid)


def rule_size(n: int, threshold: float, claims: FloatArray) -> tuple[float, float]:
    """The worst-case rate of a false claim of a rule (P(claim | cell) per cell), and its p01."""
    grid, weights = null_weights(n, threshold)
    rates = weights @ claims
    worst = int(rates.argmax())
    return float(rates[worst]), float(grid[worst])


def calibrate(
    n: int, threshold: float, alpha: float, side: str, *, cache_dir: Path | None = None
) -> Calibration:
    """The calibrated level for a claim at n, read from ``cache_dir`` when computed before."""
    if n > EXACT_MAX_N:
        return Calibration(n, threshold, alpha, side, alpha, alpha, None, None, False)
    key = (n, threshold, alpha, side)
    result = _MEMO.get(key)
    if result is None or (cache_dir is not None and result.exact):
        from_disk = _read_cache(cache_dir, n, threshold, alpha, side)
        if from_disk is not None:
            result = from_disk
        else:
            result = result or _calibrate(n, threshold, alpha, side)
            if result.exact:
                _write_cache(cache_dir, result)
    _MEMO[key] = result
    return result


def _calibrate(n: int, threshold: float, alpha: float, side: str) -> Calibration:
    import numpy as np

    stat = all_cells_statistic(n, threshold, side)
    n10, n01 = cells(n)
    edge = _edge(n10 - n01, side)
    grid = null_grid(threshold)
    p10 = grid + threshold / 100
    # Ties (many cells have a tail of exactly 0, e.g. every n01 = 0 cell at a negative t) are
    # broken by the observed difference, the larger first for "shown": a tie group too heavy
    # to take whole would otherwise stop the calibration before any cell could claim.
    order = np.lexsort((-edge, stat))
    # Accumulate the cells' null probabilities in that order, a block of cells at a time, and
    # stop at the first cell that lifts the worst case over alpha: only the cells up to it
    # are ever weighed (a fifth of them at n = 40).
    running = np.zeros(len(grid))
    first = len(order) - 1  # unreachable fallback: claiming everything has size 1
    for start in range(0, len(order), _BLOCK):
        index = order[start : start + _BLOCK]
        cum = np.cumsum(cell_weights(n, n10[index], n01[index], p10, grid), axis=1)
        cum += running[:, None]
        over = np.flatnonzero(cum.max(axis=0) > alpha)
        if over.size:
            first = start + int(over[0])
            break
        running = cum[:, -1]
    cut = order[first]
    level, tie = float(stat[cut]), int(edge[cut])
    claims = claiming(stat, edge, level, tie)
    if claims.any():
        rates = cell_weights(n, n10[claims], n01[claims], p10, grid).sum(axis=1)
        at = int(rates.argmax())
        size, worst_p01, below = float(rates[at]), float(grid[at]), float(stat[claims].max())
    else:
        size, worst_p01, below = 0.0, float(grid[0]), 0.0
    return Calibration(n, threshold, alpha, side, level, below, size, worst_p01, True, tie)


def _edge(diff: npt.ArrayLike, side: str) -> IntArray:
    """The tie-break key, larger first: n10 - n01 for "shown", its negative for "ruled_out"."""
    import numpy as np

    d = np.asarray(diff, np.int64)
    return -d if side == "ruled_out" else d


def claiming(
    stat: FloatArray, edge: npt.ArrayLike, level: float, tie: int
) -> npt.NDArray[np.bool_]:
    """The calibrated rule: claim when stat < level, or stat == level and the edge beats tie."""
    import numpy as np

    e = np.asarray(edge, np.int64)
    return np.asarray((stat < level) | ((stat == level) & (e > tie)))


def claims_cell(cal: Calibration, stat: float, n10: int, n01: int) -> bool:
    """`claiming` for one cell."""
    edge = n01 - n10 if cal.side == "ruled_out" else n10 - n01
    return stat < cal.level or (stat == cal.level and edge > cal.tie)


def _cache_path(cache_dir: Path, n: int, threshold: float, alpha: float, side: str) -> Path:
    name = f"calibration-v{CACHE_VERSION}-n{n}-t{threshold:g}-a{alpha:.10g}-{side}.json"
    return cache_dir / "decision" / name


def _read_cache(
    cache_dir: Path | None, n: int, threshold: float, alpha: float, side: str
) -> Calibration | None:
    if cache_dir is None:
        return None
    path = _cache_path(cache_dir, n, threshold, alpha, side)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        result = Calibration(**record)
    except (OSError, ValueError, TypeError):
        return None  # absent or unreadable: a cache entry is recomputed, never trusted blindly
    key = (result.n, result.threshold, result.alpha, result.side)
    return result if key == (n, threshold, alpha, side) else None


def _write_cache(cache_dir: Path | None, result: Calibration) -> None:
    if cache_dir is None:
        return
    from flightdeck.jsonl import atomic_write

    path = _cache_path(cache_dir, result.n, result.threshold, result.alpha, result.side)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(asdict(result), sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only project still scores; it only recomputes next time
