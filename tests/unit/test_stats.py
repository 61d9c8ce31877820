"""scoring.stats and scoring.bootstrap against published tables, hand-worked cases and oracles.

Oracles: statsmodels (Wilson intervals, kappa), scikit-learn (kappa), scipy.stats.bootstrap
(the paired bootstrap, in distribution) and the exact bootstrap law. Timings live in benchmarks/, never here.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from flightdeck.scoring.bootstrap import BootstrapResult, paired_bootstrap
from flightdeck.scoring.stats import (
    Kappa,
    Proportion,
    cohens_kappa,
    min_detectable_difference,
    wilson_interval,
)


def test_importing_stats_leaves_numpy_and_scipy_unloaded() -> None:
    code = (
        "import sys, flightdeck.scoring.stats, flightdeck.scoring.bootstrap; "
        "print(sorted({'numpy', 'scipy'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- Wilson score interval -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score).
        pytest.param(81, 263, 0.2553, 0.3662, id="newcombe-81/263"),
        pytest.param(15, 148, 0.0624, 0.1605, id="newcombe-15/148"),
        pytest.param(0, 20, 0.0, 0.1611, id="newcombe-0/20"),
        pytest.param(1, 29, 0.0061, 0.1718, id="newcombe-1/29"),
    ],
)
def test_wilson_matches_newcombe_table_1(k: int, n: int, lo: float, hi: float) -> None:
    result = wilson_interval(k, n)
    assert result.value == k / n
    assert (round(result.lo, 4), round(result.hi, 4)) == (lo, hi)


def test_wilson_agrees_with_statsmodels_over_a_grid() -> None:
    cases = [(k, n) for n in [*range(1, 41), 99, 263, 1000, 100_000] for k in {0, 1, n // 3, n}]
    for (k, n), confidence in itertools.product(cases, [0.8, 0.9, 0.95, 0.99]):
        result = wilson_interval(k, n, confidence=confidence)
        lo, hi = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
        assert result.lo == pytest.approx(lo, abs=1e-12), (k, n, confidence)
        assert result.hi == pytest.approx(hi, abs=1e-12), (k, n, confidence)


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [
        # z = 1.959964: 0/1 -> hi = z²/(1 + z²) = 3.8415/4.8415 = 0.7935; 1/1 mirrors it.
        pytest.param(0, 1, Proportion(0.0, 0.0, 0.7934506856227626), id="n=1-k=0"),
        pytest.param(1, 1, Proportion(1.0, 0.20654931437723745, 1.0), id="n=1-k=n"),
        pytest.param(0, 0, Proportion(0.0, 0.0, 1.0), id="n=0-nothing-known"),
    ],
)
def test_wilson_small_n(k: int, n: int, expected: Proportion) -> None:
    result = wilson_interval(k, n)
    assert result.value == expected.value
    assert result.lo == pytest.approx(expected.lo, abs=1e-15)
    assert result.hi == pytest.approx(expected.hi, abs=1e-15)


@pytest.mark.parametrize("n", [1, 2, 7, 40, 1000])
def test_wilson_edges_k0_and_kn_stay_in_unit_interval(n: int) -> None:
    none, every = wilson_interval(0, n), wilson_interval(n, n)
    assert none.lo == 0.0
    assert 0.0 < none.hi < 1.0
    assert every.hi == 1.0
    assert 0.0 < every.lo < 1.0
    assert every.lo == pytest.approx(1.0 - none.hi, abs=1e-15)  # the interval is symmetric in k


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        pytest.param((5, 4), {}, "successes must be at most n = 4, got 5", id="k>n"),
        pytest.param((-1, 4), {}, r"successes must be an integer >= 0, got -1", id="k<0"),
        pytest.param((1, -2), {}, r"n must be an integer >= 0, got -2", id="n<0"),
        pytest.param((1.5, 4), {}, r"successes must be an integer >= 0, got 1.5", id="k-float"),
        pytest.param((True, 4), {}, r"successes must be an integer >= 0, got True", id="k-bool"),
        pytest.param((1, 4), {"confidence": 1.0}, r"strictly between 0 and 1, got 1.0", id="c=1"),
        pytest.param((1, 4), {"confidence": 0}, r"strictly between 0 and 1, got 0", id="c=0"),
        pytest.param((1, 4), {"confidence": 95}, r"strictly between 0 and 1, got 95", id="c=95"),
        pytest.param((1, 4), {"confidence": "0.9"}, r"must be a number, got '0.9'", id="c-str"),
        pytest.param((1, 4), {"confidence": math.nan}, r"must be finite, got nan", id="c-nan"),
    ],
)
def test_wilson_rejects_bad_input(
    args: tuple[object, ...], kwargs: dict[str, object], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        wilson_interval(*args, **kwargs)  # type: ignore[arg-type]


# --- Cohen's kappa -------------------------------------------------------------------------


def _labels_from_table(yy: int, yn: int, ny: int, nn: int) -> tuple[list[bool], list[bool]]:
    """Rater a's and rater b's labels from a 2x2 table (a yes & b yes, a yes & b no, ...)."""
    pairs = (
        [(True, True)] * yy + [(True, False)] * yn + [(False, True)] * ny + [(False, False)] * nn
    )
    return [x for x, _ in pairs], [y for _, y in pairs]


def test_kappa_hand_worked_table() -> None:
    # Table: both yes 20, a yes b no 5, a no b yes 10, both no 15; n = 50.
    # p_o = (20 + 15)/50 = 0.7. a says yes 25/50 = 0.5, b says yes 30/50 = 0.6.
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.3 + 0.2 = 0.5.  kappa = (0.7 - 0.5)/(1 - 0.5) = 0.4.
    a, b = _labels_from_table(20, 5, 10, 15)
    assert cohens_kappa(a, b) == Kappa(0.4, 0.7, 50, None)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(
            [True] * 3,
            [True] * 3,
            Kappa(
                None,
                1.0,
                3,
                "undefined: both raters gave the same single label to every item (p_e = 1)",
            ),
            id="p_e=1-all-yes",
        ),
        pytest.param(
            [False],
            [False],
            Kappa(
                None,
                1.0,
                1,
                "undefined: both raters gave the same single label to every item (p_e = 1)",
            ),
            id="p_e=1-n=1",
        ),
        # a always yes, b always no: p_o = 0, p_e = 1·0 + 0·1 = 0, kappa = (0 - 0)/(1 - 0) = 0.
        pytest.param([True] * 4, [False] * 4, Kappa(0.0, 0.0, 4, None), id="constant-opposite"),
        # a = yes,no,yes,no and b the reverse: p_o = 0, p_e = .5·.5 + .5·.5 = .5,
        # kappa = (0 - .5)/(1 - .5) = -1.
        pytest.param(
            [True, False, True, False],
            [False, True, False, True],
            Kappa(-1.0, 0.0, 4, None),
            id="total-disagreement",
        ),
        # p_o = 1 with both labels used: p_e = .5·.5 + .5·.5 = .5, kappa = (1 - .5)/.5 = 1.
        pytest.param([True, False], [True, False], Kappa(1.0, 1.0, 2, None), id="perfect"),
        pytest.param([], [], Kappa(None, None, 0, "no items rated by both"), id="no-items"),
        pytest.param([1, 0, 1], [1, 1, 1], Kappa(0.0, 2 / 3, 3, None), id="ints-0-1"),
    ],
)
def test_kappa_edges(a: list[bool], b: list[bool], expected: Kappa) -> None:
    assert cohens_kappa(a, b) == expected


def test_kappa_agrees_with_sklearn_and_statsmodels_on_random_cases() -> None:
    rng = np.random.default_rng(20240611)
    for _ in range(200):
        n = int(rng.integers(2, 60))
        a = rng.random(n) < rng.random()
        b = np.where(rng.random(n) < rng.random(), a, rng.random(n) < 0.5)
        if len(set(a.tolist()) | set(b.tolist())) < 2:
            continue  # p_e = 1: sklearn returns nan with a warning; covered by test_kappa_edges
        result = cohens_kappa(a.tolist(), b.tolist())
        table = np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]])
        assert result.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        assert result.value == pytest.approx(
            sm_cohens_kappa(table, return_results=False), abs=1e-12
        )
        assert result.agreement == np.mean(a == b)


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        pytest.param([True], [True, False], "different numbers of items: 1 and 2", id="lengths"),
        pytest.param(
            [True, None], [True, False], r"a\[1\] must be True or False, got None", id="none"
        ),
        pytest.param([True], ["yes"], r"b\[0\] must be True or False, got 'yes'", id="str"),
        pytest.param([2], [True], r"a\[0\] must be True or False, got 2", id="int-2"),
    ],
)
def test_kappa_rejects_bad_input(a: list[object], b: list[object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        cohens_kappa(a, b)  # type: ignore[arg-type]


# --- paired bootstrap ----------------------------------------------------------------------


def _scipy_bootstrap(
    c: np.ndarray, b: np.ndarray, *, resamples: int, confidence: float, rng: np.random.Generator
) -> scipy.stats._resampling.BootstrapResult:
    return scipy.stats.bootstrap(
        (c, b),
        statistic=lambda x, y, axis: x.mean(axis) - y.mean(axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=resamples,
        confidence_level=confidence,
        rng=rng,
    )


def _arms(n: int, seed: int, *, binary: bool = True) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if binary:
        return (rng.random(n) < 0.6).astype(float), (rng.random(n) < 0.45).astype(float)
    return rng.random(n), rng.normal(size=n)


def _exact_law(c: np.ndarray, b: np.ndarray) -> dict[int, float]:
    """P*(n·D* = k) of the paired bootstrap of 0/1 scores, from the definition.

    Resampling n questions draws (N10, N01, N_rest) ~ Multinomial(n; n10/n, n01/n, rest/n),
    and n·D* = N10 - N01; summed over every (N10, N01) with scipy's multinomial pmf.
    """
    n = len(c)
    n10, n01 = int(np.sum((c == 1) & (b == 0))), int(np.sum((c == 0) & (b == 1)))
    p = [n10 / n, n01 / n, (n - n10 - n01) / n]
    law: dict[int, float] = {}
    for x in range(n + 1):
        for y in range(n + 1 - x):
            mass = float(scipy.stats.multinomial.pmf([x, y, n - x - y], n, p))
            law[x - y] = law.get(x - y, 0.0) + mass
    return law


@pytest.mark.parametrize(
    ("n10", "n01", "n11", "n00", "seed"),
    [
        pytest.param(2, 1, 1, 1, 1, id="n=5"),
        pytest.param(5, 2, 3, 2, 2, id="n=12"),
        pytest.param(14, 6, 12, 8, 3, id="n=40"),
        pytest.param(0, 3, 0, 7, 4, id="one-sided"),
    ],
)
def test_bootstrap_follows_the_exact_law(n10: int, n01: int, n11: int, n00: int, seed: int) -> None:
    # 200,000 resamples against the exact law: a chi-square goodness of fit over the atoms
    # with an expected count of at least 5 (the rarer ones pooled), at a fixed seed.
    c = np.array([1.0] * n10 + [0.0] * n01 + [1.0] * n11 + [0.0] * n00)
    b = np.array([0.0] * n10 + [1.0] * n01 + [1.0] * n11 + [0.0] * n00)
    n = len(c)
    resamples = 200_000
    drawn = paired_bootstrap(c, b, resamples=resamples, confidence=0.95, rng=seed).distribution
    k = np.rint(drawn * n).astype(int)
    assert np.allclose(k / n, drawn, atol=1e-12, rtol=0)  # every value is (N10 - N01) / n
    law = _exact_law(c, b)
    atoms = sorted(a for a, p in law.items() if p * resamples >= 5)
    observed = [int(np.sum(k == a)) for a in atoms]
    expected = [law[a] * resamples for a in atoms]
    # the rare atoms, pooled into the commonest one so that both sides sum to the resamples
    top = int(np.argmax(expected))
    observed[top] += resamples - sum(observed)
    expected[top] += resamples - sum(expected)
    pvalue = scipy.stats.chisquare(observed, expected).pvalue
    assert pvalue > 1e-3, pvalue


@pytest.mark.parametrize("binary", [True, False], ids=["0/1", "floats"])
def test_bootstrap_has_the_law_of_scipy_resampling(binary: bool) -> None:
    # In distribution, not draw for draw: a two-sample Kolmogorov-Smirnov test between ours
    # and scipy.stats.bootstrap's paired resampling (20,000 resamples each, fixed seeds), and
    # the percentile bounds within a few Monte Carlo standard errors.
    c, b = _arms(60, 7, binary=binary)
    ours = paired_bootstrap(c, b, resamples=20_000, confidence=0.9, rng=5)
    theirs = _scipy_bootstrap(c, b, resamples=20_000, confidence=0.9, rng=np.random.default_rng(6))
    ks = scipy.stats.ks_2samp(ours.distribution, theirs.bootstrap_distribution)
    assert ks.pvalue > 1e-3, ks
    spread = float(np.std(theirs.bootstrap_distribution))
    assert abs(ours.lo - theirs.confidence_interval.low) < 0.1 * spread
    assert abs(ours.hi - theirs.confidence_interval.high) < 0.1 * spread
    assert ours.diff == pytest.approx(c.mean() - b.mean(), abs=1e-15)


def test_bootstrap_draws_one_multinomial_over_the_outcome_patterns() -> None:
    # The whole draw is rng.multinomial(n, pattern shares, size=resamples): a generator
    # that records its calls sees that one call, over the (at most) four 0/1 patterns.
    calls: list[tuple[object, ...]] = []

    class Recording(np.random.Generator):
        def multinomial(self, n: object, pvals: object, size: object = None) -> np.ndarray:  # type: ignore[override]
            calls.append((n, tuple(np.asarray(pvals)), size))
            out: np.ndarray = super().multinomial(n, pvals, size)  # type: ignore[arg-type]
            return out

    c = np.array([1, 1, 0, 0, 1, 0, 1, 1.0])
    b = np.array([1, 0, 0, 1, 1, 0, 0, 0.0])
    paired_bootstrap(c, b, resamples=300, confidence=0.95, rng=Recording(np.random.PCG64(1)))
    # patterns in sorted order: (0,0) x2, (0,1) x1, (1,0) x3, (1,1) x2
    assert calls == [(8, (2 / 8, 1 / 8, 3 / 8, 2 / 8), 300)]


def test_bootstrap_with_an_int_seed_equals_default_rng_of_it() -> None:
    c, b = _arms(50, 1)
    by_seed = paired_bootstrap(c, b, resamples=300, confidence=0.95, rng=9)
    by_generator = paired_bootstrap(
        c, b, resamples=300, confidence=0.95, rng=np.random.default_rng(9)
    )
    assert by_seed == by_generator
    assert np.array_equal(by_seed.distribution, by_generator.distribution)


def test_the_order_of_questions_does_not_change_the_draws() -> None:
    # The draw depends on the pattern counts only, so shuffling the questions changes nothing.
    c, b = _arms(500, 4)
    order = np.random.default_rng(0).permutation(500)
    first = paired_bootstrap(c, b, resamples=1000, confidence=0.95, rng=3)
    shuffled = paired_bootstrap(c[order], b[order], resamples=1000, confidence=0.95, rng=3)
    assert np.array_equal(first.distribution, shuffled.distribution)


def test_same_seed_gives_equal_floats_and_a_new_seed_does_not() -> None:
    c, b = _arms(200, 3)
    first = paired_bootstrap(c, b, resamples=2000, confidence=0.95, rng=42)
    again = paired_bootstrap(c, b, resamples=2000, confidence=0.95, rng=42)
    other = paired_bootstrap(c, b, resamples=2000, confidence=0.95, rng=43)
    assert (first.diff, first.lo, first.hi) == (again.diff, again.lo, again.hi)
    assert np.array_equal(first.distribution, again.distribution)
    assert not np.array_equal(first.distribution, other.distribution)


@pytest.mark.parametrize(
    ("c", "b", "diff"),
    [
        pytest.param([1], [0], 1.0, id="n=1-win"),
        pytest.param([0], [1], -1.0, id="n=1-loss"),
        pytest.param([1], [1], 0.0, id="n=1-tie"),
        pytest.param([1, 1, 1], [0, 0, 0], 1.0, id="every-question-won"),
    ],
)
@pytest.mark.parametrize("resamples", [1, 2, 10_000])
def test_degenerate_distributions_give_a_point_interval(
    c: list[int], b: list[int], diff: float, resamples: int
) -> None:
    result = paired_bootstrap(c, b, resamples=resamples, confidence=0.95, rng=0)
    assert (result.diff, result.lo, result.hi) == (diff, diff, diff)
    assert result.distribution.shape == (resamples,)


# scipy's standard error of a single resample divides by zero degrees of freedom.
@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_one_resample_is_its_own_interval() -> None:
    c, b = _arms(30, 5)
    result = paired_bootstrap(c, b, resamples=1, confidence=0.95, rng=3)
    # scipy's linear quantile of one value: j = floor(p·1 + 1 - p) - 1 = 0, so lo = hi = it.
    assert result.lo == result.hi == result.distribution[0]


def test_result_distribution_is_read_only_and_outside_eq_and_repr() -> None:
    result = paired_bootstrap([1, 0, 1], [0, 0, 1], resamples=5, confidence=0.95, rng=0)
    assert isinstance(result, BootstrapResult)
    assert "distribution" not in repr(result)
    with pytest.raises(ValueError, match="read-only"):
        result.distribution[0] = 0.0


@pytest.mark.parametrize(
    ("c", "b", "kwargs", "match"),
    [
        pytest.param(
            [1, 0], [1], {}, r"must score the same questions: 2 != 1", id="unequal-lengths"
        ),
        pytest.param([], [], {}, "are empty; score at least one question", id="empty"),
        pytest.param(
            [1, math.nan], [1, 0], {}, r"candidate\[1\] must be finite, got nan", id="nan"
        ),
        pytest.param([1, 0], [1, math.inf], {}, r"baseline\[1\] must be finite, got inf", id="inf"),
        pytest.param([[1, 0]], [[1, 0]], {}, r"candidate must be 1-D .*got \(1, 2\)", id="2-d"),
        pytest.param(["a"], [1], {}, "candidate must hold numbers", id="not-numbers"),
        pytest.param([1], [0], {"confidence": 1.0}, r"strictly between 0 and 1, got 1.0", id="c=1"),
        pytest.param([1], [0], {"confidence": 0.0}, r"strictly between 0 and 1, got 0.0", id="c=0"),
        pytest.param(
            [1], [0], {"confidence": -0.5}, r"strictly between 0 and 1, got -0.5", id="c<0"
        ),
        pytest.param(
            [1], [0], {"resamples": 0}, r"resamples must be an integer >= 1, got 0", id="R=0"
        ),
        pytest.param(
            [1],
            [0],
            {"resamples": 10.0},
            r"resamples must be an integer >= 1, got 10.0",
            id="R-float",
        ),
        pytest.param([1], [0], {"rng": -1}, r"rng must be an integer >= 0, got -1", id="seed<0"),
        pytest.param(
            [1], [0], {"rng": "7"}, r"rng must be an integer >= 0, got '7'", id="seed-str"
        ),
    ],
)
def test_bootstrap_rejects_bad_input(
    c: list[object], b: list[object], kwargs: dict[str, object], match: str
) -> None:
    options: dict[str, object] = {"resamples": 10, "confidence": 0.95, "rng": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        paired_bootstrap(c, b, **options)  # type: ignore[arg-type]


# --- what the rule can detect ----------------------------------------------------------------


def test_min_detectable_difference_matches_the_spec_range_at_n_40() -> None:
    # SPEC "What the set can show": at n = 40 and a 15-point threshold, a true gap of roughly
    # 33 to 52 points is needed for an 80% chance of "shown", depending on discordance.
    gaps = [
        min_detectable_difference(n=40, discordance=d, threshold=0.15)
        for d in (0.35, 0.4, 0.5, 0.6, 0.75, 0.9, 1.0)
    ]
    assert all(g is not None and 0.33 <= g <= 0.53 for g in gaps), gaps
    assert gaps == sorted(
        g for g in gaps if g is not None
    )  # more discordance, more noise, a larger gap needed


def test_min_detectable_difference_hand_worked() -> None:
    # z = z_.975 + z_.8 = 1.959964 + 0.841621 = 2.801585. With discordance 1 the root solves
    # Δ = 0.15 + 2.801585·sqrt((1 - Δ²)/40); at Δ = 0.52658: sqrt(0.722718/40) = 0.134417,
    # 0.15 + 2.801585·0.134417 = 0.52658.
    gap = min_detectable_difference(n=40, discordance=1.0, threshold=0.15)
    assert gap == pytest.approx(0.52658, abs=1e-5)
    # A discordance below the gap is raised to it: 0 and 0.3 both give the p_d = Δ root.
    low = min_detectable_difference(n=40, discordance=0.0, threshold=0.15)
    assert low is not None
    assert low == min_detectable_difference(n=40, discordance=0.3, threshold=0.15)
    assert low == pytest.approx(0.15 + 2.801585 * math.sqrt((low - low**2) / 40), abs=1e-6)


def _simulated_chance_of_shown(n: int, discordance: float, gap: float, seed: int) -> float:
    """Run the actual rule on simulated suites where candidate truly leads by ``gap``."""
    rng = np.random.default_rng(seed)
    discordance = max(discordance, gap)  # as the approximation assumes
    c_only = (discordance + gap) / 2  # P(C right, B wrong); P(B right, C wrong) = discordance - it
    shown, trials = 0, 1500
    for _ in range(trials):
        u = rng.random(
            n
        )  # [0, c_only): C only; [c_only, discordance): B only; then half both right
        candidate = (
            (u < c_only) | (u >= discordance) & (u < discordance + (1 - discordance) / 2)
        ).astype(float)
        baseline = np.where(u < discordance, 1.0 - candidate, candidate)
        result = paired_bootstrap(candidate, baseline, resamples=1000, confidence=0.95, rng=rng)
        shown += result.lo >= 0.15 - 1e-9
    return shown / trials


@pytest.mark.slow  # a simulated bootstrap rule
@pytest.mark.parametrize("discordance", [0.5, 1.0])
def test_min_detectable_difference_against_simulated_bootstrap_rule(discordance: float) -> None:
    gap = min_detectable_difference(n=40, discordance=discordance, threshold=0.15)
    assert gap is not None
    # The normal approximation should put the rule's chance of "shown" near 80%.
    assert _simulated_chance_of_shown(40, discordance, gap, seed=17) == pytest.approx(0.8, abs=0.05)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({"threshold": 1.5}, None, id="threshold-above-1-never-shown"),
        pytest.param({"threshold": 1.0}, 1.0, id="threshold-1-needs-everything"),
        pytest.param({"threshold": -1.0}, -1.0, id="threshold-minus-1-always-shown"),
    ],
)
def test_min_detectable_difference_extremes(
    kwargs: dict[str, float], expected: float | None
) -> None:
    assert min_detectable_difference(n=40, discordance=0.5, **kwargs) == expected


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"n": 0}, r"n must be an integer >= 1, got 0", id="n=0"),
        pytest.param(
            {"discordance": 1.2}, r"discordance must be between 0 and 1, got 1.2", id="pd>1"
        ),
        pytest.param(
            {"threshold": math.inf}, r"threshold must be finite, got inf", id="threshold-inf"
        ),
        pytest.param(
            {"power": 1.0}, r"power must be strictly between 0 and 1, got 1.0", id="power=1"
        ),
        pytest.param(
            {"confidence": 0}, r"confidence must be strictly between 0 and 1, got 0", id="c=0"
        ),
    ],
)
def test_min_detectable_difference_rejects_bad_input(kwargs: dict[str, object], match: str) -> None:
    options: dict[str, object] = {"n": 40, "discordance": 0.5, "threshold": 0.15, **kwargs}
    with pytest.raises(ValueError, match=match):
        min_detectable_difference(**options)  # type: ignore[arg-type]


def test_normal_quantile_agrees_with_scipy_ndtri() -> None:
    # the Wilson interval's z without scipy: the standard library's AS 241 against scipy's ndtri
    from scipy.special import ndtri

    from flightdeck.scoring.stats import normal_quantile

    for p in [1e-12, 1e-6, 0.005, 0.025, 0.05, 0.1, 0.3, 0.5, 0.8, 0.9, 0.95, 0.975, 0.995]:
        assert normal_quantile(p) == pytest.approx(float(ndtri(p)), rel=4e-15, abs=1e-15), p
