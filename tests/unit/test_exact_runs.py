"""The comparison's faster paths (#23 item 5) against the computations they replace.

- `tail_below_run` (a run of lattice points from one binomial tail and the point
  probabilities between) against `tail_below` at each point, which sums a binomial tail per
  point: the two agree to the digits `tail_below` itself keeps (its log-gamma sums lose
  about 1e-16 times log(n!) relative, 1e-11 at n = 100,000).
- `lower_bound` and `upper_bound` (searched out from the normal approximation's guess)
  against halving the whole lattice, as they did before: the same integer, always.
- `outcome_patterns` (1-D sorts of ranks) against ``np.unique(..., axis=0)``, which it
  replaced: the same patterns in the same order with the same counts.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.scoring.bootstrap import outcome_patterns
from flightdeck.scoring.exact import (
    lower_bound,
    tail_below,
    tail_below_run,
    upper_bound,
    window_pmf,
)


def _halved_lower(n: int, b: int, c: int, level: float, kt: int) -> int:
    """lower_bound as it was: bisection over the whole side of kt."""
    shown = float(tail_below(n, b, c, kt)) < level
    lo, hi = (kt, n + 1) if shown else (-n, kt)
    if not shown and float(tail_below(n, b, c, -n)) >= level:
        return -n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(tail_below(n, b, c, mid)) < level:
            lo = mid
        else:
            hi = mid
    return lo


def _halved_upper(n: int, b: int, c: int, level: float, kt: int) -> int:
    """upper_bound as it was."""

    def above(k: int) -> float:
        return 1.0 - float(tail_below(n, b, c, k + 1))

    ruled_out = above(kt - 1) < level
    lo, hi = (-n - 1, kt - 1) if ruled_out else (kt - 1, n)
    if not ruled_out and above(n - 1) >= level:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if above(mid) < level:
            hi = mid
        else:
            lo = mid
    return hi


@st.composite
def _cells(draw: st.DrawFn, top: int = 3000) -> tuple[int, int, int]:
    n = draw(st.one_of(st.integers(1, 12), st.integers(1, top)))
    b = draw(st.integers(0, n))
    c = draw(st.integers(0, n - b))
    return n, b, c


def _agree(run: np.ndarray, each: np.ndarray, n: int) -> None:
    # relative to the value, with a floor for the values near 1 that are 1 minus a small
    # number (both then carry the same absolute rounding)
    tolerance = 1e-15 * max(np.log(np.arange(1, n + 2)).sum(), 1.0) + 1e-14
    assert np.all(np.abs(run - each) <= tolerance * np.maximum(each, 1e-3)), (run, each)


@settings(max_examples=150, deadline=None)
@given(_cells(), st.data())
def test_a_run_of_tails_equals_a_tail_at_each_point(
    cell: tuple[int, int, int], data: st.DataObject
) -> None:
    n, b, c = cell
    first = data.draw(st.integers(-n - 2, n + 2))
    count = data.draw(st.integers(0, 130))
    run = tail_below_run(n, b, c, first, count)
    each = tail_below(n, b, c, np.arange(first, first + count))
    assert run.shape == (count,)
    _agree(run, each, n)


@pytest.mark.parametrize(
    ("n", "b", "c", "first"),
    [
        pytest.param(100_000, 42_048, 12_207, 29_000, id="n100000-near-the-bulk"),
        pytest.param(100_000, 42_048, 12_207, 14_941, id="n100000-far-below"),
        pytest.param(100_000, 42_048, 12_207, 25_000, id="n100000-partly-live"),
        pytest.param(100_000, 24_468, 24_619, 14_941, id="n100000-far-above"),
        pytest.param(5000, 1250, 470, 690, id="n5000"),
        pytest.param(300, 0, 300, -300, id="all-baseline-only"),
        pytest.param(300, 300, 0, 200, id="all-candidate-only"),
        pytest.param(300, 0, 0, -5, id="no-discordance"),
    ],
)
def test_a_run_of_tails_at_large_n_and_the_edges(n: int, b: int, c: int, first: int) -> None:
    run = tail_below_run(n, b, c, first, 120)
    _agree(run, tail_below(n, b, c, np.arange(first, first + 120)), n)


def test_the_window_is_the_old_window() -> None:
    # window_pmf as it was: the tails at every point of the window, one tail each
    n, b, c, centre = 1000, 284, 98, 150
    start, pmf = window_pmf(n, b, c, centre)
    below = tail_below(n, b, c, np.arange(start + 1, centre + 61))
    cdf = np.append(np.minimum.accumulate(below[::-1])[::-1], 1.0)
    old = np.clip(np.diff(cdf, prepend=0.0), 0.0, 1.0)
    assert start == centre - 60
    np.testing.assert_allclose(pmf, old, rtol=0, atol=1e-12)


def _exact_tail(n: int, b: int, c: int, k: int) -> Fraction:
    """P*(K* < k) in rational arithmetic: sum_a Bin(a; n, b/n) P[Bin(n - a, q) > a - k]."""
    p, q = Fraction(b, n), Fraction(c, n - b) if n > b else Fraction(0)
    total = Fraction(0)
    for a in range(n + 1):
        m, j = n - a, a - k
        if j < 0:
            above = Fraction(1)
        elif j >= m:
            above = Fraction(0)
        else:
            above = 1 - sum(comb(m, i) * q**i * (1 - q) ** (m - i) for i in range(j + 1))
        total += comb(n, a) * p**a * (1 - p) ** (n - a) * above
    return total


def test_the_run_and_the_tails_are_both_within_1e_12_of_the_rational_value() -> None:
    # n = 80, 23 candidate-only, 8 baseline-only: neither way of summing is the "exact" one;
    # both are within 1e-12 relative of the value in rational arithmetic.
    n, b, c = 80, 23, 8
    run = tail_below_run(n, b, c, 5, 16)
    for i, k in enumerate(range(5, 21)):
        exact = _exact_tail(n, b, c, k)
        assert float(run[i]) == pytest.approx(float(exact), rel=1e-12)
        assert float(tail_below(n, b, c, k)) == pytest.approx(float(exact), rel=1e-12)


_LEVELS = st.one_of(
    st.sampled_from([0.025, 0.05, 1e-12, 1e-3, 0.5, 0.9]),
    st.floats(1e-15, 0.999, allow_nan=False),
)


@settings(max_examples=150, deadline=None)
@given(_cells(top=2500), _LEVELS, st.data())
def test_the_bounds_are_where_halving_finds_them(
    cell: tuple[int, int, int], level: float, data: st.DataObject
) -> None:
    n, b, c = cell
    kt = data.draw(st.integers(-n, n))
    assert lower_bound(n, b, c, level, kt) == _halved_lower(n, b, c, level, kt)
    assert upper_bound(n, b, c, level, kt) == _halved_upper(n, b, c, level, kt)


def test_the_bounds_at_n_100000() -> None:
    # the suite of benchmarks/bench_score.py's largest size: correctness and citations
    for b, c in ((42_048, 12_207), (24_468, 24_619)):
        assert lower_bound(100_000, b, c, 0.025, 15_000) == _halved_lower(
            100_000, b, c, 0.025, 15_000
        )
        assert upper_bound(100_000, b, c, 0.025, 15_000) == _halved_upper(
            100_000, b, c, 0.025, 15_000
        )


_SCORES = st.one_of(
    st.sampled_from([0.0, 1.0]),
    st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.0, 1e300]),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_SCORES, _SCORES), min_size=1, max_size=60))
def test_outcome_patterns_are_numpys_unique_rows(pairs: list[tuple[float, float]]) -> None:
    c = np.array([p[0] for p in pairs], np.float64)
    b = np.array([p[1] for p in pairs], np.float64)
    patterns, counts = outcome_patterns(c, b)
    rows, expected = np.unique(np.column_stack((c, b)), axis=0, return_counts=True)
    assert np.array_equal(patterns, rows)
    assert counts.tolist() == expected.tolist()
    assert counts.dtype == np.int64


@pytest.mark.parametrize(
    ("n", "b", "c", "first"),
    [
        pytest.param(100_000, 42_048, 12_207, 14_941, id="far-below-the-bulk"),
        pytest.param(100_000, 42_048, 12_207, 29_300, id="at-the-edge-of-the-bulk"),
        pytest.param(100_000, 42_048, 12_207, 25_000, id="partly-live-below"),
        pytest.param(100_000, 42_048, 12_207, 34_000, id="partly-live-above"),
        pytest.param(3000, 2900, 50, 2700, id="near-the-top"),
    ],
)
def test_the_rows_left_out_hold_only_exact_zeros(n: int, b: int, c: int, first: int) -> None:
    # Every term Bin(a; n, b/n) Bin(a - first - t; n - a, q), computed one by one with
    # scipy.stats, is exactly 0.0 on the rows rows_with_mass leaves out.
    import math

    import scipy.stats

    from flightdeck.scoring.exact import binom_pmf, rows_with_mass

    steps = 119
    spread = math.ceil(12.0 * math.sqrt(b * (n - b) / n) + 30.0)
    a = np.arange(max(b - spread, 0), min(b + spread, n) + 1, dtype=np.int64)
    weight = binom_pmf(a, n, b / n)
    q = c / (n - b)
    kept, _ = rows_with_mass(a, weight, n, first, steps, q, math.log(q), math.log1p(-q))
    dropped = np.setdiff1d(a, kept)
    j = (dropped - first)[:, None] - np.arange(steps)[None, :]
    terms = weight[np.searchsorted(a, dropped)][:, None] * scipy.stats.binom.pmf(
        j, (n - dropped)[:, None], q
    )
    assert not np.any(terms), terms.max()
    assert kept.size + dropped.size == a.size
