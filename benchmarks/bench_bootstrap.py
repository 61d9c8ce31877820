"""paired_bootstrap (scoring/bootstrap.py) against scipy.stats.bootstrap, side by side.

Run from the repository root:

    .venv/bin/python benchmarks/bench_bootstrap.py

Ours draws each resample as multinomial counts of the distinct outcome patterns; scipy
resamples n question indices. Both run in this process on the same 0/1 scores with 10,000
resamples, at n = 10,000 and n = 100,000 (scipy with its default batch), the two
distributions are checked to have the same law (two-sample Kolmogorov-Smirnov, p > 0.001),
and the wall and CPU times and their ratio are printed with the load average.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

RESAMPLES = 10_000
SEED = 20240611
REPEATS = 3


def arms(n: int) -> tuple[Any, Any]:
    """Two arms' 0/1 scores on n questions, correct about 70% and 60% of the time."""
    import numpy as np

    rng = np.random.default_rng(n)
    return (rng.random(n) < 0.7).astype(float), (rng.random(n) < 0.6).astype(float)


def run_scipy(c: Any, b: Any) -> Any:
    import numpy as np
    import scipy.stats

    return scipy.stats.bootstrap(
        (c, b),
        statistic=lambda x, y, axis: x.mean(axis) - y.mean(axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=RESAMPLES,
        confidence_level=0.95,
        batch=max(1, 2**20 // len(c)),
        rng=np.random.default_rng(SEED),
    )


def run_ours(c: Any, b: Any) -> Any:
    from flightdeck.scoring.bootstrap import paired_bootstrap

    return paired_bootstrap(c, b, resamples=RESAMPLES, confidence=0.95, rng=SEED)


def timed(function: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    import numpy as np
    import scipy
    import scipy.stats

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    for n in (10_000, 100_000):
        c, b = arms(n)
        ours_runs, scipy_runs = [], []
        for _ in range(REPEATS):
            wall, cpu, ours = timed(lambda c=c, b=b: run_ours(c, b))
            ours_runs.append((wall, cpu))
            wall, cpu, theirs = timed(lambda c=c, b=b: run_scipy(c, b))
            scipy_runs.append((wall, cpu))
        ks = scipy.stats.ks_2samp(ours.distribution, theirs.bootstrap_distribution)
        assert ks.pvalue > 1e-3, ks
        ours_wall = statistics.median(t[0] for t in ours_runs)
        scipy_wall = statistics.median(t[0] for t in scipy_runs)
        print(f"n = {n:,}, {RESAMPLES:,} resamples, median of {REPEATS}:")
        ours_cpu = statistics.median(t[1] for t in ours_runs)
        scipy_cpu = statistics.median(t[1] for t in scipy_runs)
        print(f"  ours  {ours_wall:.4f} s wall, {ours_cpu:.4f} s CPU")
        print(f"  scipy {scipy_wall:.4f} s wall, {scipy_cpu:.4f} s CPU")
        ratio = scipy_wall / ours_wall
        print(f"  ratio scipy / ours: {ratio:.0f}x; same law (KS p = {ks.pvalue:.3f})")
        print(
            f"  intervals: ours [{ours.lo:.4f}, {ours.hi:.4f}], scipy "
            f"[{theirs.confidence_interval.low:.4f}, {theirs.confidence_interval.high:.4f}]"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
