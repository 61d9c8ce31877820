"""Cost of the exact decision: one calibration per n, and whole-process score at n = 40, 1,000.

Targets (issue 11): score at n = 40 <= 1 s whole process, at n = 1,000 <= 3 s; one cold
calibration (issue 22: computed on demand above the shipped table, up to
levels.EXACT_MAX_N = 2,000), and the percentile rule's exact size, which sets
decision.PERCENTILE_MAX_N. Report `uptime` beside them:
the machine is shared.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_decision.py            # all
    PYTHONPATH=src .venv/bin/python benchmarks/bench_decision.py --quick    # no calibration sweep
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_score import flightdeck, make_suite  # noqa: E402


def calibration_seconds(n: int) -> float:
    """Both sides of one cold calibration at n, as a score needs them, past any limit."""
    from flightdeck.scoring import calibrated_levels as levels

    start = time.perf_counter()
    levels.compute(n, 15.0, alpha=0.025, side="shown")
    levels.compute(n, 15.0, alpha=0.025, side="ruled_out")
    levels.compute(n, -10.0, alpha=0.025, side="shown_by_score")
    return time.perf_counter() - start


def percentile_seconds(n: int) -> float:
    from flightdeck.scoring.decision import rule_size, seeded_claims

    seeded_claims.cache_clear()
    start = time.perf_counter()
    rule_size(n, 15.0, seeded_claims(n, 15.0, resamples=10_000, alpha=0.025, side="shown"))
    return time.perf_counter() - start


def score_seconds(root: Path, n: int, runs: int) -> tuple[list[float], list[float]]:
    """(cold-cache run, warm-cache runs) of `flightdeck knowledge score` on n questions."""
    suite = make_suite(root / f"n{n}", n)
    cmd = [*flightdeck(), "knowledge", "score", str(suite), "--arm", "search"]
    cmd += ["--arm", "retrieval", "--baseline", "search", "--candidate", "retrieval"]
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=root / f"n{n}", check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times[:1], times[1:]


def main() -> None:
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    calibration_seconds(20)  # imports and first calls out of the way
    if "--quick" not in sys.argv:
        for n in (40, 100, 500, 1000, 2000):
            seconds = calibration_seconds(n)
            print(f"calibration n = {n}: {seconds:.2f} s (shown, ruled out, gate; cold)")
        for n in (40, 50, 60, 70):
            print(f"percentile rule's exact size n = {n}: {percentile_seconds(n):.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        for n, target in ((40, 1.0), (1000, 3.0)):
            cold, warm = score_seconds(Path(tmp), n, 5)
            print(
                f"score n = {n} x 2 arms, whole process: cold cache {cold[0]:.3f} s, warm "
                f"median {statistics.median(warm):.3f} s (min {min(warm):.3f}; target <= "
                f"{target:g} s)"
            )
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
