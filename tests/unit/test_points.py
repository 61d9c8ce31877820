"""Points: one rounding for score, the report and show, from a float or from the metrics file."""

from __future__ import annotations

import json
from math import gcd

import pytest

from flightdeck.scoring.metrics import PLACES
from flightdeck.scoring.points import Direction, points

DIRECTIONS: tuple[Direction, ...] = ("nearest", "down", "up")


def _from_metrics(x: float) -> float:
    """``x`` as ``knowledge show`` reads it: rounded as the metrics file writes it, then parsed."""
    return float(json.loads(json.dumps(round(x, PLACES))))


def _exact(k: int, n: int, direction: Direction) -> str:
    """k/n in points, rounded from the exact fraction in integers: the oracle for ``points``."""
    tenths, rest = divmod(1000 * k, n)  # floor(1000 k / n) tenths of a point, remainder
    if direction == "up":
        tenths += rest > 0
    elif direction == "nearest" and (2 * rest > n or (2 * rest == n and tenths % 2)):
        tenths += 1
    sign = "-" if tenths < 0 or (direction == "nearest" and k < 0 and tenths == 0) else "+"
    return f"{sign}{abs(tenths) // 10}.{abs(tenths) % 10}"


@pytest.mark.parametrize(
    ("x", "direction", "printed"),
    [
        # the demo (16 questions): -1/16 = -6.25 and 9/16 = 56.25 points, interval ends
        pytest.param(-1 / 16, "down", "-6.3", id="demo-lower-end-rounds-out"),
        pytest.param(9 / 16, "up", "+56.3", id="demo-upper-end-rounds-out"),
        pytest.param(11 / 16, "up", "+68.8", id="demo-upper-end-68.75"),
        pytest.param(2 / 16, "down", "+12.5", id="an-end-on-the-grid-stays"),
        # 5/16 = 31.25 points: a tie goes to the even tenth, as the reports print it
        pytest.param(5 / 16, "nearest", "+31.2", id="tie-to-even-down"),
        pytest.param(7 / 16, "nearest", "+43.8", id="tie-to-even-up"),
        pytest.param(-5 / 16, "nearest", "-31.2", id="negative-tie-to-even"),
        # 247/2000 = 12.35 points, stored as 0.12349999999999999: the float would say 12.3
        pytest.param(247 / 2000, "nearest", "+12.4", id="tie-not-decided-by-the-float"),
        # 0.123 is stored just under itself; floor must not drop it to 12.2
        pytest.param(0.123, "down", "+12.3", id="grid-point-stored-low"),
        pytest.param(0.123, "up", "+12.3", id="grid-point-stored-high"),
        pytest.param(0.1234, "up", "+12.4", id="upper-end-off-grid"),
        pytest.param(-0.0004, "nearest", "-0.0", id="a-small-loss-keeps-its-sign"),
        pytest.param(-0.0004, "up", "+0.0", id="a-zero-end-is-plus"),
        pytest.param(0.0, "down", "+0.0", id="zero"),
    ],
)
def test_points_rounds_the_exact_value(x: float, direction: Direction, printed: str) -> None:
    assert points(x, direction) == printed
    assert points(_from_metrics(x), direction) == printed


@pytest.mark.slow  # 608,385 fractions, three roundings, two readings each
def test_every_fraction_up_to_1000_prints_the_same_from_the_metrics_file() -> None:
    wrong = [
        (k, n, direction)
        for n in range(1, 1001)
        for k in range(-n, n + 1)
        if gcd(k, n) == 1
        for direction in DIRECTIONS
        if not (
            points(k / n, direction)
            == points(_from_metrics(k / n), direction)
            == _exact(k, n, direction)
        )
    ]
    assert wrong == []
