"""A difference in points, printed one way by score, gate, the report, its picture and show.

``knowledge show`` reads its numbers back from the metrics file, where they are rounded to six
decimals; the others hold the float they computed. Both must print the same text, so the
rounding is done on a decimal, not on the float's binary value: 0.1235 is stored as
0.12349999999999999 and ``f"{12.35:.1f}"`` depends on that accident.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from typing import Literal

Direction = Literal["nearest", "down", "up"]

# The float is first read as the decimal it stands for, to twelve places: far below what is
# printed, far above a float's error on a proportion (about 1e-16).
_SNAP = Decimal("1e-12")
_TENTH = Decimal("0.1")
_ROUNDING = {"nearest": ROUND_HALF_EVEN, "down": ROUND_FLOOR, "up": ROUND_CEILING}


def points(x: float, direction: Direction = "nearest") -> str:
    """A proportion ``x`` as signed points to one decimal (``+2.5``), rounded from its exact value.

    "nearest" (a difference) rounds to the nearest tenth, a tie to the even tenth
    (0.3125 prints +31.2, 0.0625 +6.2), as the committed reports have always printed them; a
    small loss keeps its sign (``-0.0``). Interval ends round outwards ("down" for a lower
    bound, "up" for an upper one, so -0.0625 prints -6.3 and 0.5625 +56.3): a bound just short
    of the threshold never prints as the threshold itself beside "not shown"; a zero end
    prints ``+0.0``.

    A proportion k/n with n <= 1000 prints the same from its float and from the metrics
    file's six decimals (tests/unit/test_points.py checks every one): six decimals move k/n
    by at most 5e-7, less than its distance 1/(2000 n) to a tenth-point boundary, and a k/n
    on a boundary has at most four decimals, which six hold exactly.
    """
    exact = Decimal(x).quantize(_SNAP, ROUND_HALF_EVEN) * 100
    rounded = exact.quantize(_TENTH, _ROUNDING[direction])
    if direction != "nearest" and rounded.is_zero():
        rounded = abs(rounded)
    return f"{rounded:+.1f}"
