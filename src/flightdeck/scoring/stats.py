"""The statistics behind a score: Wilson intervals, Cohen's kappa, the detectable difference.

Pure functions with keyword-only options that return frozen dataclasses (the paired bootstrap
is ``bootstrap.py``). scipy is imported inside the functions that need it, so importing this
module (and `flightdeck --help`) stays fast. Bad arguments raise `ValueError` quoting the bad
value, through the ``check_*`` helpers below that the bootstrap shares.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Proportion:
    """A proportion ``value`` = k/n with its confidence interval [``lo``, ``hi``]."""

    value: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa over ``n`` items rated by both raters, and their percent agreement.

    ``value`` is None when kappa is undefined, and ``reason`` then says why.
    """

    value: float | None
    agreement: float | None
    n: int
    reason: str | None = None


def normal_quantile(p: float) -> float:
    """The standard normal quantile at ``p`` (0 < p < 1), from the standard library.

    ``statistics.NormalDist.inv_cdf`` is Wichura's algorithm AS 241 (Applied Statistics 37:
    477-484, 1988), accurate to about 1e-16 relative; scipy's ``ndtri`` agrees with it within
    a few units in the last place (tests/unit/test_stats.py). A Wilson interval needs no scipy,
    whose import costs more than a 40-question score.
    """
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> Proportion:
    """The proportion successes/n with its Wilson score interval.

    Read it as: the true rate lies in [lo, hi] at the given confidence. Unlike the Wald interval
    it stays inside [0, 1] and keeps close to nominal coverage for small n and for rates near 0
    or 1 (Wilson 1927, "Probable inference, the law of succession, and statistical inference",
    JASA 22:209-212; Newcombe 1998, "Two-sided confidence intervals for the single proportion",
    Statistics in Medicine 17:857-872, method 3). With z = the (1 + confidence)/2 normal quantile
    and p = k/n::

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) · sqrt(p(1 - p)/n + z²/4n²)

    and the bounds are clipped to [0, 1] (exactly 0 at k = 0, exactly 1 at k = n). With n = 0
    nothing is known: value 0.0, interval [0.0, 1.0].

    Raises:
        ValueError: n or successes is not an integer with 0 <= successes <= n, or confidence
            is not strictly between 0 and 1.
    """
    n = check_int("n", n, minimum=0)
    successes = check_int("successes", successes, minimum=0)
    if successes > n:
        raise ValueError(f"successes must be at most n = {n}, got {successes!r}")
    confidence = check_probability("confidence", confidence)
    if n == 0:
        return Proportion(0.0, 0.0, 1.0)
    z = normal_quantile(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator
    # At k = 0 (k = n) the lower (upper) bound is exactly 0 (1); rounding could miss by an ulp.
    lo = 0.0 if successes == 0 else min(max(centre - half, 0.0), 1.0)
    hi = 1.0 if successes == n else min(max(centre + half, 0.0), 1.0)
    return Proportion(p, lo, hi)


def cohens_kappa(a: Sequence[bool], b: Sequence[bool]) -> Kappa:
    """Cohen's kappa between two raters' yes/no labels of the same items, ``a[i]`` vs ``b[i]``.

    kappa = (p_o - p_e) / (1 - p_e), where p_o is the share of items on which the raters agree
    (returned as ``agreement``) and p_e the agreement expected by chance from each rater's own
    rate of "yes" (Cohen 1960, "A coefficient of agreement for nominal scales", Educational and
    Psychological Measurement 20:37-46). Read it as: 1 is perfect agreement, 0 is no more than
    chance, below 0 is worse than chance. When both raters give every item the same single label
    p_e = 1 and kappa is undefined: ``value`` is None with a ``reason``, never NaN. With no items
    ``value`` and ``agreement`` are None.

    Raises:
        ValueError: the sequences differ in length or hold a value other than True/False (0/1).
    """
    if len(a) != len(b):
        raise ValueError(f"the raters labelled different numbers of items: {len(a)} and {len(b)}")
    for name, labels in (("a", a), ("b", b)):
        for i, label in enumerate(labels):
            if label not in (True, False):
                raise ValueError(f"{name}[{i}] must be True or False, got {label!r}")
    agree = sum(1 for x, y in zip(a, b, strict=True) if bool(x) == bool(y))
    yes_a = sum(1 for x in a if x)
    yes_b = sum(1 for y in b if y)
    return kappa_from_counts(n=len(a), agree=agree, yes_a=yes_a, yes_b=yes_b)


def kappa_from_counts(*, n: int, agree: int, yes_a: int, yes_b: int) -> Kappa:
    """`cohens_kappa` from its counts: n items, ``agree`` of them alike, yes per rater.

    What a table of labels gives without listing them (`scoring/tables.py` counts them in a
    join); the same integers give the same float as `cohens_kappa`.
    """
    if n == 0:
        return Kappa(None, None, 0, "no items rated by both")
    # In units of 1/n²: n² p_o = n·agree and n² p_e = yes_a·yes_b + no_a·no_b, so the test
    # p_e == 1 is exact and kappa is one correctly rounded division of integers.
    expected = yes_a * yes_b + (n - yes_a) * (n - yes_b)
    if expected == n * n:
        reason = "undefined: both raters gave the same single label to every item (p_e = 1)"
        return Kappa(None, agree / n, n, reason)
    return Kappa((n * agree - expected) / (n * n - expected), agree / n, n)


def min_detectable_difference(
    *,
    n: int,
    discordance: float,
    threshold: float,
    confidence: float = 0.95,
    power: float = 0.8,
) -> float | None:
    """The smallest true paired difference the "lower bound >= threshold" rule detects.

    Read it as: if candidate truly beats baseline by this much (a proportion), the lower bound
    of the two-sided ``confidence`` interval reaches ``threshold`` with probability ``power``;
    smaller true gaps are more likely to be reported "not shown". It uses the normal
    approximation to the paired difference of proportions (Newcombe 1998, "Improved confidence
    intervals for the difference between binomial proportions based on paired data", Statistics
    in Medicine 17:2635-2650, the simple asymptotic method): each question contributes +1, -1
    or 0, so with discordance rate p_d (the share of questions on which exactly one arm is
    right) and true difference Δ the variance of one question is p_d - Δ². A gap of Δ needs at least
    |Δ| discordance, so p_d is raised to |Δ| when smaller. The answer is the smallest root of

        Δ = threshold + (z_{1-α/2} + z_power) · sqrt((max(p_d, |Δ|) - Δ²) / n)

    found on a grid of step 0.001 over [-1, 1] and refined with ``scipy.optimize.brentq``. At
    n = 40 and threshold 0.15 it gives 0.36 (p_d <= 0.36) to 0.53 (p_d = 1); run on simulated
    suites at those gaps, the percentile bootstrap rule said "shown" 83% (p_d = 0.5) and 81%
    (p_d = 1) of the time (tests/unit/test_stats.py).

    Args:
        n: Number of questions.
        discordance: Observed share of discordant questions, (#C right B wrong + #B right C
            wrong) / n, in [0, 1].
        threshold: The rule's threshold as a proportion (0.15 for 15 points; -0.10 for a gate
            margin of 10 points).
        confidence: Two-sided confidence level of the interval.
        power: Required probability of "shown".

    Returns:
        The difference as a proportion, or None when no difference of at most 1 reaches
        ``threshold`` (threshold > 1).

    Raises:
        ValueError: an argument is out of range; the message quotes it.
    """
    n = check_int("n", n, minimum=1)
    if not 0.0 <= check_real("discordance", discordance) <= 1.0:
        raise ValueError(f"discordance must be between 0 and 1, got {discordance!r}")
    threshold = check_real("threshold", threshold)
    confidence = check_probability("confidence", confidence)
    power = check_probability("power", power)
    if threshold > 1.0:
        return None
    from scipy.optimize import brentq
    from scipy.special import ndtri

    z = float(ndtri(1.0 - (1.0 - confidence) / 2.0) + ndtri(power))

    def margin(delta: float) -> float:
        variance = max(max(discordance, abs(delta)) - delta * delta, 0.0) / n
        return delta - threshold - z * math.sqrt(variance)

    grid = [-1.0 + step / 1000.0 for step in range(2001)]
    for below, above in zip(grid, grid[1:], strict=False):
        if margin(below) >= 0.0:
            return below
        if margin(above) >= 0.0:
            return float(brentq(margin, below, above, xtol=1e-12))
    return None  # unreachable: margin(1) = 1 - threshold >= 0


def check_int(name: str, value: object, *, minimum: int) -> int:
    """``value`` as an int (bools refused), or a ValueError quoting it."""
    message = f"{name} must be an integer >= {minimum}, got {value!r}"
    if isinstance(value, bool):
        raise ValueError(message)
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(message) from None
    if number < minimum:
        raise ValueError(message)
    return number


def check_real(name: str, value: object) -> float:
    """``value`` as a finite float (bools refused), or a ValueError quoting it."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def check_probability(name: str, value: object) -> float:
    """``value`` as a float strictly between 0 and 1, or a ValueError quoting it."""
    number = check_real(name, value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return number
