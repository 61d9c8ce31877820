"""The calibrated rule against a slow oracle, its monotonicity, its robust cut and its table.

Independent references: tests/exact_oracle.py (the definitions, no shared code path),
scipy.stats.multinomial for the null probabilities, and issue 22's published figures for the
old rule (the nominal level above n = 100) as a regression witness of the bug it fixed.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import exact_oracle

from flightdeck.scoring import calibrated_levels as levels
from flightdeck.scoring.calibrated_levels import TABLE_MAX_N, calibrate, claims
from flightdeck.scoring.decision import Extra, ShownBy, cells, decide, rule_size
from flightdeck.scoring.exact import tail_below, threshold_index

SHIPPED = [("shown", 15.0), ("ruled_out", 15.0), ("shown_by_score", -5.0),
           ("shown_by_score", -10.0), ("shown_by_score", -15.0)]  # fmt: skip
ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("n", "side", "threshold"),
    [(7, "shown", 15.0), (16, "shown", 15.0), (25, "shown", 15.0), (12, "ruled_out", 15.0),
     (16, "ruled_out", 15.0), (16, "shown_by_score", -10.0), (9, "shown_by_score", -5.0)],
)  # fmt: skip
def test_the_calibration_equals_the_oracle_from_the_definitions(
    n: int, side: str, threshold: float
) -> None:
    cal = calibrate(n, threshold, alpha=0.025, side=side)
    n10, n01 = cells(n)
    held = claims(cal, n10, n01).held
    mine = {(int(b), int(c)) for b, c, h in zip(n10, n01, held, strict=True) if h}
    assert mine == exact_oracle.calibrate(n, threshold, 0.025, side)
    # The worst case on the oracle's grid is the production size, up to the refinement
    # between grid points (which can only raise it).
    g = exact_oracle.grid(-threshold if side == "ruled_out" else threshold)
    oracle = exact_oracle.null_rates(n, sorted(mine), threshold, side, g)
    assert cal.size is not None
    assert oracle.max() <= cal.size + 1e-12
    assert cal.size - oracle.max() < 2e-4


def test_the_bootstrap_tail_equals_the_oracle() -> None:
    for n, b, c in [(7, 3, 1), (16, 8, 3), (40, 16, 3), (23, 0, 5), (30, 30, 0)]:
        for k in (-3, 0, 2, threshold_index(n, 15.0)):
            assert float(tail_below(n, b, c, k)) == pytest.approx(
                exact_oracle.bootstrap_below(n, b, c, k), abs=1e-13
            )


# Issue 22's figures for the nominal level (q < 2.5%) above n = 100: 2.775% at n = 101,
# 2.765% at 150, 3.611% at 200. The calibrated levels keep each at or below 2.5%.
@pytest.mark.slow
@pytest.mark.parametrize(("n", "published"), [(101, 0.02775), (150, 0.02765), (200, 0.03611)])
def test_the_old_rule_broke_the_guarantee_above_100(n: int, published: float) -> None:
    n10, n01 = cells(n)
    q = tail_below(n, n10, n01, threshold_index(n, 15.0))
    old = rule_size(n, 15.0, (q < 0.025).astype(float)).size
    assert old == pytest.approx(published, abs=5e-6)
    cal = calibrate(n, 15.0, alpha=0.025, side="shown")
    assert cal.size is not None
    assert cal.size <= 0.025
    new = rule_size(n, 15.0, claims(cal, n10, n01).held.astype(float)).size
    assert new <= cal.size + 1e-12


def _dominance_violations(n: int, side: str, threshold: float) -> list[tuple[int, int]]:
    cal = calibrate(n, threshold, alpha=0.025, side=side)
    n10, n01 = cells(n)
    pairs = zip(n10.tolist(), n01.tolist(), strict=True)
    held = dict(zip(pairs, claims(cal, n10, n01).held.tolist(), strict=True))
    bad = []
    for (b, c), h in held.items():
        # A table with one more win, or one loss fewer, dominates (b, c).
        for better in ((b + 1, c), (b, c - 1), (b + 1, c - 1)):
            if better not in held:
                continue
            weaker = h and not held[better] if side != "ruled_out" else held[better] and not h
            if weaker:
                bad.append((b, c))
    return bad


@pytest.mark.parametrize(("side", "threshold"), SHIPPED)
def test_every_table_at_n_up_to_40_is_monotone(side: str, threshold: float) -> None:
    for n in range(1, 41):
        assert _dominance_violations(n, side, threshold) == [], n


def test_the_issue_22_examples_are_monotone_now() -> None:
    def said(n: int, b: int, c: int) -> tuple[bool, bool]:
        d = decide(n, b, c, 0, threshold=15.0, confidence=0.95, rule="calibrated",
                   seeded_lo=0.0, seeded_hi=0.0, resamples=10_000,
                   extras=frozenset({Extra.RULED_OUT}))  # fmt: skip
        assert d.ruled_out is not None
        return d.shown.holds, d.ruled_out.holds

    # 7 of 7 won is shown whenever 6 of 7 with one tie is.
    assert said(7, 7, 0)[0] >= said(7, 6, 0)[0]
    for n in range(5, 15):  # losing every question is ruled out whenever all but one is
        assert said(n, 0, n)[1] >= said(n, 0, n - 1)[1], n


@pytest.mark.slow  # a property test: 60 tables, each decided twice up to n = 500
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_tables_to_n_500_never_get_a_weaker_claim(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, TABLE_MAX_N))
    b = data.draw(st.integers(0, n))
    c = data.draw(st.integers(0, n - b))
    moves = [(b + 1, c)] if b + c < n else []
    moves += [(b, c - 1)] if c > 0 else []
    if not moves:
        return
    better = data.draw(st.sampled_from(moves))
    kw = {"threshold": 15.0, "confidence": 0.95, "rule": "calibrated", "seeded_lo": 0.0,
          "seeded_hi": 0.0, "resamples": 10_000, "extras": frozenset({Extra.RULED_OUT})}  # fmt: skip
    base, top = decide(n, b, c, 0, **kw), decide(n, *better, 0, **kw)  # type: ignore[arg-type]
    assert top.shown.holds >= base.shown.holds
    assert base.ruled_out is not None
    assert top.ruled_out is not None
    assert base.ruled_out.holds >= top.ruled_out.holds
    assert top.shown.bound >= base.shown.bound
    gate = kw | {"threshold": -10.0, "extras": frozenset(), "shown_by": ShownBy.SCORE}
    assert decide(n, *better, 0, **gate).shown.holds >= decide(n, b, c, 0, **gate).shown.holds  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize(("side", "threshold"), SHIPPED)
@pytest.mark.parametrize("n", [16, 40, 101, 257])
def test_a_1e15_change_of_any_statistic_changes_no_claim(
    n: int, side: str, threshold: float
) -> None:
    cal = calibrate(n, threshold, alpha=0.025, side=side)
    n10, n01 = cells(n)
    table = claims(cal, n10, n01)
    held, stat = table.held, table.statistic
    edge = (n01 - n10) if side == "ruled_out" else (n10 - n01)
    for nudged in (stat + 1e-15, stat - 1e-15, stat * (1 + 1e-15), stat * (1 - 1e-15)):
        assert np.array_equal(cal.rule.claims(nudged, edge), held)


def test_the_table_at_alpha_prime_is_not_claimed_and_would_break_the_guarantee() -> None:
    # The first table left out has a statistic equal to alpha' exactly; lowered by 1e-15 it
    # still does not claim, and claiming it would lift the worst case over 2.5%.
    for n in (16, 40):
        cal = calibrate(n, 15.0, alpha=0.025, side="shown")
        n10, n01 = cells(n)
        table = claims(cal, n10, n01)
        held, stat = table.held, table.statistic
        at = np.flatnonzero(stat == cal.level)
        assert at.size >= 1
        assert not cal.rule.claims(stat[at] - 1e-15, n10[at] - n01[at]).any()
        more = held.copy()
        more[at] = True
        assert rule_size(n, 15.0, more.astype(float)).size > 0.025


def test_the_shipped_table_covers_every_n_and_keeps_the_guarantee() -> None:
    table = json.loads((ROOT / "src/flightdeck/scoring/calibration_table.json").read_text())
    for side, threshold in SHIPPED:
        listed = [row[0] for row in table["levels"][f"{side} {threshold:g}"]]
        assert listed == list(range(1, TABLE_MAX_N + 1))
        rows = [calibrate(n, threshold, alpha=0.025, side=side) for n in listed]
        assert all(r.source == "table" for r in rows)
        assert all(r.size is not None and r.size <= 0.025 for r in rows)
        assert all(r.below <= r.level or r.level == 0.0 for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 16, 40, 101, 233])
def test_the_shipped_table_is_recomputed_from_scratch(n: int) -> None:
    for side, threshold in SHIPPED:
        shipped = calibrate(n, threshold, alpha=0.025, side=side)
        assert shipped.source == "table"
        fresh = levels.compute(n, threshold, alpha=0.025, side=side)
        assert fresh == shipped, (side, n)  # every field but where it came from


def test_the_table_ships_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]["flightdeck"]
    assert "scoring/calibration_table.json" in data
    assert (ROOT / "src/flightdeck/scoring/calibration_table.json").is_file()


def test_the_smallest_n_that_can_pass_each_margin() -> None:
    from flightdeck.scoring.calibrated_levels import needed_wins, smallest_claiming_n

    for margin in (5.0, 10.0, 15.0):
        first = smallest_claiming_n(-margin, alpha=0.025, side="shown_by_score")
        assert first is not None
        assert not calibrate(
            first - 1, -margin, alpha=0.025, side="shown_by_score"
        ).claims_somewhere
        assert calibrate(first, -margin, alpha=0.025, side="shown_by_score").claims_somewhere
    # At the demo's n = 16 a 10-point margin needs 9 wins against 3 losses: 8 and 3 fail.
    cal = calibrate(16, -10.0, alpha=0.025, side="shown_by_score")
    assert needed_wins(cal, 3) == 9
    n10, n01 = cells(16)
    held = claims(cal, n10, n01).held
    assert int(held.sum()) == 40  # issue 22: "the gate passes 40 of 153 tables at n = 16"
