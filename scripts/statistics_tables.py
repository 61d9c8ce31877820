"""Print the tables of docs/statistics.md from the package's table and the code that decides.

    .venv/bin/python scripts/statistics_tables.py            # the n <= 500 tables (seconds)
    .venv/bin/python scripts/statistics_tables.py --large    # and n = 1,000, 2,000 (a minute)

Every number is recomputed here, nothing is typed in: the calibrated levels and their exact
sizes (from the shipped table, which scripts/calibration_table.py --check recomputes from
scratch), the old rule's sizes above n = 100, and the 80%-power gaps at n = 16 and 40.
"""

from __future__ import annotations

import argparse

from flightdeck.scoring.calibrated_levels import calibrate, compute, smallest_claiming_n
from flightdeck.scoring.decision import Extra, cells, decide, rule_size
from flightdeck.scoring.exact import tail_below, threshold_index

CLAIMS = [("shown", 15.0, '"shown", 15'), ("ruled_out", 15.0, '"ruled out", 15'),
          ("shown_by_score", -5.0, "gate, margin 5"), ("shown_by_score", -10.0, "gate, margin 10"),
          ("shown_by_score", -15.0, "gate, margin 15")]  # fmt: skip
NS = (5, 7, 10, 16, 20, 30, 39, 40, 41, 50, 80, 100, 101, 150, 200, 300, 400, 500)


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def levels(ns: tuple[int, ...], *, fresh: bool = False) -> None:
    print("| claim | " + " | ".join(str(n) for n in ns) + " |")
    print("|---" * (len(ns) + 1) + "|")
    for side, t, words in CLAIMS:
        cals = [
            compute(n, t, alpha=0.025, side=side)
            if fresh
            else calibrate(n, t, alpha=0.025, side=side)
            for n in ns
        ]
        level = [("tie" if c.cut == 0.0 and c.size else pct(c.level)) if c.size else "none"
                 for c in cals]  # fmt: skip
        print(f"| {words}: α′, % | " + " | ".join(level) + " |")
        print(f"| {words}: worst case, % | " + " | ".join(pct(c.size) for c in cals) + " |")


def old_rule() -> None:
    print("| n | 101 | 150 | 200 |")
    print("|---|---|---|---|")
    row = []
    for n in (101, 150, 200):
        n10, n01 = cells(n)
        q = tail_below(n, n10, n01, threshold_index(n, 15.0))
        row.append(pct(rule_size(n, 15.0, (q < 0.025).astype(float)).size))
    print('| false "shown" of "q < 2.5%", % | ' + " | ".join(row) + " |")


def power() -> None:
    print("| n | discordant | 80%-power gap, points |")
    print("|---|---|---|")
    for n, discordant in ((16, 5), (16, 11), (40, 8), (40, 20), (40, 40), (100, 30), (500, 150)):
        d = decide(n, discordant, 0, 0, threshold=15.0, confidence=0.95, rule="calibrated",
                   seeded_lo=0.0, seeded_hi=0.0, resamples=10_000,
                   extras=frozenset({Extra.MIN_DETECTABLE}))  # fmt: skip
        gap = "-" if d.min_detectable is None else f"{100 * d.min_detectable:.2f}"
        print(f"| {n} | {discordant} | {gap} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true")
    args = parser.parse_args()
    levels(NS)
    print()
    for side, t, words in CLAIMS:
        print(
            f"- {words}: smallest n with a claim: {smallest_claiming_n(t, alpha=0.025, side=side)}"
        )
    print()
    old_rule()
    print()
    power()
    if args.large:
        print()
        levels((700, 1000, 2000), fresh=True)


if __name__ == "__main__":
    main()
