"""paired_bootstrap (scoring/bootstrap.py) against scipy.stats.bootstrap; scoring worst case.

Run from the repository root:

    .venv/bin/python benchmarks/bench_bootstrap.py

Part 1 runs ours and scipy's paired percentile bootstrap side by side in one process on
n = 10,000 0/1 scores with 10,000 resamples, checks that the bootstrap distributions and the
intervals are equal, and prints wall and CPU times and their ratios. scipy runs with three
``batch`` sizes: its int64 index matrix per batch as big as our 8 MiB int32 chunk (the memory
match: both add about 20 MiB to the process), a quarter of that (scipy's fastest here) and 8
times that (scipy holds about 4 arrays of that size per batch: indices, their copy, both arms).

Part 2 runs each case in a fresh process to read its own peak RSS (resource.getrusage; the
parent imports nothing heavy, since a child starts from the RSS of the process it was forked
from): scipy and ours at n = 10,000, and the scoring worst case, n = 100,000 with 10,000
resamples, for one metric and for a whole 3-arm score (2 comparisons x 2 metrics = 4 pairs
sharing one index matrix through paired_bootstrap_many).

Wall times depend on a second core being free: ours draws in one thread while another counts.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

RESAMPLES = 10_000
SEED = 20240611
REPEATS = 3
CHUNK_BYTES = 8 * 2**20  # flightdeck.scoring.bootstrap._CHUNK_BYTES


def scipy_batches(n: int) -> dict[str, int]:
    """scipy batch sizes: int64 index rows as many bytes as our int32 chunk, 1/4 and 8x that."""
    rows = max(1, CHUNK_BYTES // (8 * n))
    return {"1/4 the bytes": max(1, rows // 4), "same bytes": rows, "8x the bytes": 8 * rows}


def arms(n: int, count: int, seed: int) -> list[Any]:
    """``count`` arms' 0/1 scores on n questions, correct rates from 0.7 down."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [(rng.random(n) < 0.7 - 0.1 * k).astype(float) for k in range(count)]


def run_scipy(c: Any, b: Any, batch: int) -> Any:
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
        batch=batch,
        rng=np.random.default_rng(SEED),
    )


def run_ours(c: Any, b: Any) -> Any:
    from flightdeck.scoring.bootstrap import paired_bootstrap

    return paired_bootstrap(c, b, resamples=RESAMPLES, confidence=0.95, rng=SEED)


def run_score(n: int) -> Any:
    from flightdeck.scoring.bootstrap import paired_bootstrap_many

    correct = arms(n, 3, seed=1)
    valid = arms(n, 3, seed=2)
    pairs = [(correct[0], correct[1]), (correct[0], correct[2])]
    pairs += [(valid[0], valid[1]), (valid[0], valid[2])]
    return paired_bootstrap_many(pairs, resamples=RESAMPLES, confidence=0.95, rng=SEED)


def timed(function: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def compare(n: int) -> dict[str, Any]:
    """Ours and scipy alternately in this process; distributions checked equal every time."""
    import numpy as np
    import scipy

    c, b = arms(n, 2, seed=n)
    batches = scipy_batches(n)
    runs: dict[str, Any] = {"ours": [], "versions": (np.__version__, scipy.__version__)}
    for _ in range(REPEATS):
        wall, cpu, ours = timed(lambda: run_ours(c, b))
        runs["ours"].append((wall, cpu))
        for label, batch in batches.items():
            wall, cpu, theirs = timed(lambda batch=batch: run_scipy(c, b, batch))
            runs.setdefault(f"scipy batch {batch} ({label})", []).append((wall, cpu))
            assert np.array_equal(ours.distribution, theirs.bootstrap_distribution)
            assert (ours.lo, ours.hi) == tuple(theirs.confidence_interval)
    return runs


def case(name: str) -> dict[str, Any]:
    """One isolated case: wall and CPU time, peak RSS and what the run added to it (MiB)."""
    import scipy.stats  # noqa: F401  (both kinds start from the same imports)

    import flightdeck.scoring.bootstrap  # noqa: F401

    kind, size = name.rsplit("-", 1)
    n = int(size)
    c, b = arms(n, 2, seed=n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if kind == "score":
        wall, cpu, _ = timed(lambda: run_score(n))
    else:
        batch = scipy_batches(n)["same bytes"]
        wall, cpu, _ = timed(lambda: run_scipy(c, b, batch) if kind == "scipy" else run_ours(c, b))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"wall": wall, "cpu": cpu, "peak_mib": peak, "added_mib": peak - before}


def in_child(*args: str) -> Any:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        mode, arg = sys.argv[2], sys.argv[3]
        print(json.dumps(compare(int(arg)) if mode == "compare" else case(arg)))
        return
    load = os.getloadavg()[0]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f}")
    runs = in_child("compare", "10000")
    print("numpy {}, scipy {}".format(*runs["versions"]))
    print(f"n = 10,000, {RESAMPLES:,} resamples, {REPEATS} runs each: distributions equal")
    ours = runs.pop("ours")
    runs.pop("versions")
    for label, times in [("ours", ours), *runs.items()]:
        walls, cpus = [t[0] for t in times], [t[1] for t in times]
        print(
            f"  {label:<32} wall best {min(walls):.3f} s median {statistics.median(walls):.3f} s,"
            f" CPU median {statistics.median(cpus):.3f} s"
        )
    best = statistics.median(t[0] for t in ours)
    for label, times in runs.items():
        ratio = statistics.median(t[0] for t in times) / best
        print(f"  ratio of wall medians, {label}: {ratio:.2f}x")
    print(f"each case in its own process, {RESAMPLES:,} resamples, best of {REPEATS}:")
    print(f"  {'case':<14} {'wall s':>7} {'CPU s':>7} {'peak RSS MiB':>13} {'added MiB':>10}")
    for name in ("scipy-10000", "ours-10000", "ours-100000", "score-100000"):
        results = [in_child("case", name) for _ in range(REPEATS)]
        best = min(results, key=lambda result: result["wall"])
        peak = max(result["peak_mib"] for result in results)
        added = max(result["added_mib"] for result in results)
        print(f"  {name:<14} {best['wall']:7.3f} {best['cpu']:7.3f} {peak:13.0f} {added:10.0f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
