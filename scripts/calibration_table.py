"""Write the package's table of calibrated levels, src/flightdeck/scoring/calibration_table.json.

For every n from 1 to TABLE_MAX_N and each shipped claim ("shown" and "ruled out" at the
default threshold of 15 points; the gate's "shown" read off Tango's p-value at margins of
5, 10 and 15 points), the calibrated level alpha'(n) at alpha = 2.5% and the exact worst-case
rate of a false claim, computed from scratch by `calibrated_levels.compute` (docs/statistics.md
says how). Takes about 25 minutes on the shared 2-CPU machine.

    .venv/bin/python scripts/calibration_table.py            # regenerate the whole table
    .venv/bin/python scripts/calibration_table.py --check 40 101 377   # recompute, compare
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from flightdeck.files.jsonl import atomic_write
from flightdeck.scoring import calibrated_levels as levels

ALPHA = 0.025
SHIPPED = (("shown", 15.0), ("ruled_out", 15.0), ("shown_by_score", -5.0),
           ("shown_by_score", -10.0), ("shown_by_score", -15.0))  # fmt: skip
OUT = Path(levels.__file__).with_name(levels.TABLE_FILE)
COLUMNS = ["n", "level", "below", "cut", "tie", "size", "worst_p01"]


def row(cal: levels.Calibration) -> list[object]:
    """One row of the table, in the order of COLUMNS (calibrated_levels reads it back)."""
    return [getattr(cal, column) for column in COLUMNS]


def rows(side: str, threshold: float, max_n: int) -> list[list[object]]:
    out = []
    for n in range(1, max_n + 1):
        out.append(row(levels.compute(n, threshold, alpha=ALPHA, side=side)))
        if n % 50 == 0:
            print(f"{side} {threshold:g}: n = {n}", file=sys.stderr, flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=levels.TABLE_MAX_N)
    parser.add_argument("--check", type=int, nargs="*", help="recompute these n and compare")
    args = parser.parse_args()
    if args.check:
        bad = 0
        for side, threshold in SHIPPED:
            shipped = levels._shipped(side, threshold, ALPHA)
            for n in args.check:
                same = shipped.get(n) == levels.compute(n, threshold, alpha=ALPHA, side=side)
                bad += not same
                print(f"{side} {threshold:g} n = {n}: {'same' if same else 'DIFFERENT'}")
        return 1 if bad else 0
    start = time.perf_counter()
    by_claim = {
        f"{side} {threshold:g}": rows(side, threshold, args.max_n) for side, threshold in SHIPPED
    }
    table = {
        "version": levels.CACHE_VERSION,
        "alpha": ALPHA,
        "columns": COLUMNS,
        "levels": by_claim,
    }
    atomic_write(OUT, json.dumps(table, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
