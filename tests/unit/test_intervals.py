"""flightdeck.scoring.intervals against the published values of docs/statistics.md, "References".

Tables are (a, b, c, d): a both right, b only the candidate (n10), c only the baseline (n01),
d both wrong; the difference is (b - c)/n. Each published limit is checked to the decimals it
was published with (half a unit in the last place).
"""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.proportion import proportion_confint
from tests.exact_oracle import tango_pvalue

from flightdeck.scoring.intervals import newcombe_interval, tango_interval, tango_pvalues


def close(value: float, published: float) -> bool:
    places = len(repr(published).split(".")[1]) if "." in repr(published) else 0
    return abs(value - published) <= 0.5 * 10**-places + 1e-12


NEWCOMBE = [
    # Newcombe 1998b Table II, as quoted in R propint's tests.
    pytest.param((36, 12, 2, 0), (0.0569, 0.3404), id="newcombe-1998b-a"),
    # Newcombe 1998b example (b), quoted in ratesci's tests; propint quotes (18, 12, 2, 18).
    pytest.param((20, 12, 2, 16), (0.0562, 0.3292), id="newcombe-1998b-b"),
    pytest.param((18, 12, 2, 18), (0.0562, 0.3290), id="newcombe-1998b-b-propint"),
    pytest.param((53, 0, 0, 1), (-0.0729, 0.0729), id="newcombe-1998b-c"),
    pytest.param((0, 30, 0, 0), (0.8395, 1.0), id="newcombe-1998b-d"),
    # Fagerland et al. 2014 (Bentur 2009), via ratesci; the book's Cavo 2012, contingencytables.
    pytest.param((1, 1, 7, 12), (-0.507, -0.026), id="fagerland-2014-bentur"),
    pytest.param((59, 6, 16, 80), (-0.1186, -0.0046), id="fagerland-book-cavo"),
    pytest.param((1, 0, 0, 1), (-0.5734, 0.5734), id="contingencytables-1-0-0-1"),
]


@pytest.mark.parametrize(("table", "published"), NEWCOMBE)
def test_newcombe_method_10_reproduces_published_limits(
    table: tuple[int, int, int, int], published: tuple[float, float]
) -> None:
    result = newcombe_interval(*table)
    assert close(result.lo, published[0]), result
    assert close(result.hi, published[1]), result


def _newcombe_uncorrected_phi(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Method 10 with the plain phi, the variant the paper's example (b) rules out."""
    n = a + b + c + d
    l1, u1 = proportion_confint(a + b, n, method="wilson")
    l2, u2 = proportion_confint(a + c, n, method="wilson")
    p1, p2 = (a + b) / n, (a + c) / n
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(margins) if margins else 0.0
    theta = p1 - p2
    lo = theta - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    hi = theta + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return lo, hi


@pytest.mark.parametrize(
    ("table", "uncorrected", "published"),
    [
        pytest.param((20, 12, 2, 16), (0.0618, 0.3242), (0.0562, 0.3292), id="example-b"),
        pytest.param((53, 0, 0, 1), (-0.0640, 0.0640), (-0.0729, 0.0729), id="example-c"),
    ],
)
def test_the_uncorrected_phi_fails_the_published_examples(
    table: tuple[int, int, int, int],
    uncorrected: tuple[float, float],
    published: tuple[float, float],
) -> None:
    lo, hi = _newcombe_uncorrected_phi(*table)
    assert close(lo, uncorrected[0])
    assert close(hi, uncorrected[1])
    assert not close(lo, published[0])  # the reference values tell the two variants apart
    fixed = newcombe_interval(*table)
    assert close(fixed.lo, published[0])
    assert close(fixed.hi, published[1])


TANGO = [
    pytest.param((1, 1, 7, 12), 0.95, (-0.517, -0.026), id="fagerland-2014-bentur"),
    pytest.param((59, 6, 16, 80), 0.95, (-0.1240, -0.0054), id="contingencytables-cavo"),
    pytest.param((4, 9, 3, 16), 0.95, (-0.027, 0.390), id="tango-1998-table-vii"),
    pytest.param((43, 0, 1, 0), 0.90, (-0.096, 0.037), id="tango-1998-table-v-90"),
    pytest.param((53, 16, 8, 9), 0.95, (-0.020, 0.207), id="agresti-min-2005"),
    pytest.param((0, 3, 0, 0), 0.95, (-0.1230, 1.0), id="contingencytables-all-b"),
    pytest.param((0, 0, 3, 0), 0.95, (-1.0, 0.1230), id="contingencytables-all-c"),
]


@pytest.mark.parametrize(("table", "confidence", "published"), TANGO)
def test_tango_reproduces_published_limits(
    table: tuple[int, int, int, int], confidence: float, published: tuple[float, float]
) -> None:
    result = tango_interval(*table, confidence=confidence)
    assert close(result.lo, published[0]), result
    assert close(result.hi, published[1]), result


@pytest.mark.parametrize(
    ("table", "newcombe", "tango"),
    [  # n = 40 tables computed in the audit (6 decimals)
        ((13, 16, 3, 8), (0.119123, 0.493568), (0.122322, 0.503821)),
        ((9, 18, 4, 9), (0.131048, 0.525582), (0.129484, 0.536002)),
        ((20, 10, 0, 10), (0.102959, 0.380253), (0.140473, 0.401940)),
    ],
)
def test_audit_n40_tables(
    table: tuple[int, int, int, int], newcombe: tuple[float, float], tango: tuple[float, float]
) -> None:
    n_result, t_result = newcombe_interval(*table), tango_interval(*table)
    assert (n_result.lo, n_result.hi) == pytest.approx(newcombe, abs=5e-7)
    assert (t_result.lo, t_result.hi) == pytest.approx(tango, abs=5e-7)


def test_tango_pvalue_is_the_interval_read_one_sided() -> None:
    # The 95% lower limit is where the one-sided "above" p-value is exactly 2.5%.
    result = tango_interval(13, 16, 3, 8)
    assert tango_pvalue(16, 3, 40, result.lo, side="above") == pytest.approx(0.025, abs=1e-9)
    assert tango_pvalue(16, 3, 40, result.hi, side="below") == pytest.approx(0.025, abs=1e-9)


def test_tango_pvalues_are_the_one_table_oracle_for_every_table_of_n() -> None:
    n, delta = 23, 0.15
    b, c = zip(*[(b, c) for b in range(n + 1) for c in range(n + 1 - b)], strict=True)
    oracle = [tango_pvalue(bi, ci, n, delta, side="above") for bi, ci in zip(b, c, strict=True)]
    assert tango_pvalues(b, c, n, delta).tolist() == pytest.approx(oracle, rel=1e-12, abs=1e-300)


def test_zero_discordance_gives_a_non_degenerate_interval() -> None:
    # Identical arms: the bootstrap interval is [0, 0]; the score interval is not.
    result = tango_interval(4, 0, 0, 4)
    z2 = 1.959963984540054**2
    assert result.hi == pytest.approx(z2 / (8 + z2), abs=1e-9)  # T = -sqrt(n d / (1 - d))
    assert result.lo == pytest.approx(-result.hi, abs=1e-12)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="table is empty"):
        newcombe_interval(0, 0, 0, 0)
    with pytest.raises(ValueError, match="b must be a non-negative integer count, got -1"):
        tango_interval(1, -1, 0, 0)
