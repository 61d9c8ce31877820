"""The statistics behind a score: Wilson intervals, Cohen's kappa, the paired bootstrap.

Pure functions with keyword-only options that return frozen dataclasses. numpy and scipy are
imported inside the functions that need them, so importing this module (and `flightdeck --help`)
stays fast. Bad arguments raise `ValueError` quoting the bad value.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Default size of one chunk of bootstrap indices. Two chunks are alive at once (one being drawn,
# one being counted); at 8 MiB both stay in a typical L3 cache, and n = 10,000 x 10,000
# resamples ran in 0.34 s against 0.61 s with 64 MiB chunks (benchmarks/README.md).
_CHUNK_BYTES = 8 * 2**20


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


@dataclass(frozen=True)
class BootstrapResult:
    """A paired difference of means ``diff`` with its percentile bootstrap interval.

    ``distribution`` holds the ``resamples`` bootstrap values of the difference, in draw order
    (read-only; left out of ``==`` and ``repr``).
    """

    diff: float
    lo: float
    hi: float
    confidence: float
    resamples: int
    distribution: npt.NDArray[np.float64] = field(compare=False, repr=False)


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
    n = _check_int("n", n, minimum=0)
    successes = _check_int("successes", successes, minimum=0)
    if successes > n:
        raise ValueError(f"successes must be at most n = {n}, got {successes!r}")
    confidence = _check_probability("confidence", confidence)
    if n == 0:
        return Proportion(0.0, 0.0, 1.0)
    from scipy.special import ndtri

    z = float(ndtri(1.0 - (1.0 - confidence) / 2.0))
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


def paired_bootstrap(
    candidate: npt.ArrayLike,
    baseline: npt.ArrayLike,
    *,
    resamples: int,
    confidence: float,
    rng: np.random.Generator | int,
    chunk: int | None = None,
) -> BootstrapResult:
    """The paired difference mean(candidate) - mean(baseline) with a percentile interval.

    ``candidate[i]`` and ``baseline[i]`` are two arms' scores (0/1, or any floats) on question i.
    Each resample draws n questions with replacement and applies the same draw to both arms, so
    the interval reflects how much the difference depends on which questions were asked. Read
    it as: [lo, hi] holds the true difference with about the given confidence (Efron and
    Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13, percentile interval).

    The draws and the arithmetic are those of ``scipy.stats.bootstrap((candidate, baseline),
    lambda c, b, axis: c.mean(axis) - b.mean(axis), paired=True, vectorized=True,
    method="percentile", rng=rng)``: one index matrix ``rng.integers(0, n, (resamples, n))``
    drawn in chunks of rows, and scipy's linear-interpolation quantiles at (1 ∓ confidence)/2.
    Given the same generator the distribution, lo and hi equal scipy's bit for bit, for any
    ``chunk`` (numpy's bounded-integer stream does not depend on how the draws are split, and
    0/1 sums are exact whatever the order of summation). The same seed gives ``==`` floats.
    Unlike scipy it accepts n = 1 (every resample is that one question). lo and hi are scipy's
    interpolation, so for a constant distribution they can differ from it in the last bit.

    Args:
        candidate: The candidate arm's score per question.
        baseline: The baseline arm's score per question, same length and order.
        resamples: Number of bootstrap resamples (at least 1).
        confidence: Two-sided confidence level, strictly between 0 and 1.
        rng: A numpy Generator (advanced exactly as scipy would) or a seed for
            ``numpy.random.default_rng``.
        chunk: Resamples drawn per chunk; the default keeps a chunk of indices near 8 MiB.

    Raises:
        ValueError: the arms are empty, differ in length, or hold non-finite values, or an
            option is out of range.
    """
    return paired_bootstrap_many(
        [(candidate, baseline)], resamples=resamples, confidence=confidence, rng=rng, chunk=chunk
    )[0]


def paired_bootstrap_many(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]],
    *,
    resamples: int,
    confidence: float,
    rng: np.random.Generator | int,
    chunk: int | None = None,
) -> tuple[BootstrapResult, ...]:
    """`paired_bootstrap` for several (candidate, baseline) pairs over the same questions at once.

    All pairs share one index matrix, so the cost of drawing it (most of the time for 0/1
    scores) is paid once. With an int seed, result i equals ``paired_bootstrap(*pairs[i],
    rng=seed, ...)`` exactly: each metric of a score bootstrapped from the same seed.

    Raises:
        ValueError: as `paired_bootstrap`, or when ``pairs`` is empty or the pairs differ in n.
    """
    import numpy as np

    arrays = _check_pairs(pairs)
    resamples = _check_int("resamples", resamples, minimum=1)
    confidence = _check_probability("confidence", confidence)
    rows = None if chunk is None else _check_int("chunk", chunk, minimum=1)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(_check_int("rng", rng, minimum=0))
    distributions = _paired_mean_differences(arrays, resamples, rng, rows)
    results = []
    for (c, b), distribution in zip(arrays, distributions, strict=True):
        distribution.flags.writeable = False
        lo, hi = _percentile_interval(distribution, confidence)
        diff = float(c.mean() - b.mean())
        results.append(BootstrapResult(diff, lo, hi, confidence, resamples, distribution))
    return tuple(results)


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
    n = _check_int("n", n, minimum=1)
    if not 0.0 <= _check_real("discordance", discordance) <= 1.0:
        raise ValueError(f"discordance must be between 0 and 1, got {discordance!r}")
    threshold = _check_real("threshold", threshold)
    confidence = _check_probability("confidence", confidence)
    power = _check_probability("power", power)
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


def family_false_shown_rate(tests: int, *, confidence: float = 0.95) -> float:
    """The chance of at least one false "shown" among ``tests`` comparisons with no true gap.

    Each comparison claims "shown" when the lower bound of its two-sided ``confidence`` interval
    clears the threshold, a one-sided test at level α/2 (2.5% at 95%). Over independent tests
    the chance that at least one claims falsely is 1 - (1 - α/2)^tests (Šidák 1967, "Rectangular
    confidence regions for the means of multivariate normal distributions", JASA 62:626-633).
    Tests that share questions are dependent; whatever the dependence the chance is at most
    tests · α/2 (the Bonferroni bound), which the independent figure approaches from below.

    Raises:
        ValueError: tests is not a non-negative integer or confidence is outside (0, 1).
    """
    tests = _check_int("tests", tests, minimum=0)
    confidence = _check_probability("confidence", confidence)
    return -math.expm1(tests * math.log1p(-(1.0 - confidence) / 2.0))


def _check_int(name: str, value: object, *, minimum: int) -> int:
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


def _check_real(name: str, value: object) -> float:
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def _check_probability(name: str, value: object) -> float:
    number = _check_real(name, value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return number


def _check_pairs(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]],
) -> list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    import numpy as np

    if len(pairs) == 0:
        raise ValueError("pairs is empty; give at least one (candidate, baseline) pair")
    arrays: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []
    for k, (candidate, baseline) in enumerate(pairs):
        checked = []
        for name, values in (("candidate", candidate), ("baseline", baseline)):
            try:
                array = np.asarray(values, dtype=np.float64)
            except (TypeError, ValueError) as error:
                raise ValueError(f"{name} must hold numbers: {error}") from None
            if array.ndim != 1:
                raise ValueError(f"{name} must be 1-D (one score per question), got {array.shape}")
            bad = np.flatnonzero(~np.isfinite(array))
            if bad.size:
                raise ValueError(f"{name}[{bad[0]}] must be finite, got {float(array[bad[0]])!r}")
            checked.append(array)
        c, b = checked
        if len(c) != len(b):
            raise ValueError(
                f"candidate and baseline must score the same questions: {len(c)} != {len(b)}"
            )
        if len(c) == 0:
            raise ValueError("candidate and baseline are empty; score at least one question")
        if arrays and len(c) != len(arrays[0][0]):
            raise ValueError(f"pair {k} has {len(c)} questions but pair 0 has {len(arrays[0][0])}")
        arrays.append((c, b))
    return arrays


def _percentile_interval(
    distribution: npt.NDArray[np.float64], confidence: float
) -> tuple[float, float]:
    """scipy.stats.quantile(method="linear") at (1 ∓ confidence)/2, with scipy's arithmetic."""
    import numpy as np

    size = distribution.shape[0]
    alpha = (1.0 - confidence) / 2.0
    points = []
    for p in (alpha, 1.0 - alpha):  # Hyndman and Fan (1996) definition 7, as scipy writes it
        jg = p * size + (1.0 - p)
        upper = jg // 1
        lower = upper - 1
        weight = 0.0 if lower < 0 else jg % 1
        points.append((min(max(int(lower), 0), size - 1), min(int(upper), size - 1), weight))
    ordered = np.partition(
        distribution, sorted({j for lower, upper, _ in points for j in (lower, upper)})
    )
    lo, hi = ((1 - w) * ordered[j] + w * ordered[k] for j, k, w in points)
    return float(lo), float(hi)


def _paired_mean_differences(
    arrays: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    resamples: int,
    rng: np.random.Generator,
    rows: int | None,
) -> list[npt.NDArray[np.float64]]:
    """Bootstrap distributions of mean(c) - mean(b), one row per pair, from shared draws.

    0/1 pairs go through a bit lookup table: each question's scores packed as bits of one small
    integer, gathered once per draw and counted per bit with popcount. The counts are exact, so
    k_c/n - k_b/n equals scipy's c[i].mean() - b[i].mean() bit for bit; other pairs gather the
    floats and take the same means as scipy. Drawing runs in this thread while a worker counts
    the previous chunk (numpy releases the GIL in both), so the time is about that of drawing.
    """
    import numpy as np

    n = len(arrays[0][0])
    index_type = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    if rows is None:
        rows = max(1, _CHUNK_BYTES // (np.dtype(index_type).itemsize * n))
    rows = min(rows, resamples)
    out = np.empty((len(arrays), resamples))
    binary = [k for k, (c, b) in enumerate(arrays) if _is_binary(c) and _is_binary(b)]
    floats = [k for k in range(len(arrays)) if k not in binary]
    counters = []
    for group in (binary[i : i + 32] for i in range(0, len(binary), 32)):
        vectors = [v for k in group for v in arrays[k]]
        counters.append((group, _bit_counter(vectors, rows)))

    def consume(start: int, index: npt.NDArray[np.integer[Any]]) -> None:
        stop = start + len(index)
        for group, count in counters:
            counts = count(index)
            for slot, k in enumerate(group):
                out[k, start:stop] = counts[2 * slot] / n - counts[2 * slot + 1] / n
        for k in floats:
            c, b = arrays[k]
            out[k, start:stop] = c[index].mean(axis=1) - b[index].mean(axis=1)

    starts = range(0, resamples, rows)
    if len(starts) == 1:
        consume(0, rng.integers(0, n, (resamples, n), dtype=index_type))
        return list(out)
    from concurrent.futures import Future, ThreadPoolExecutor

    from flightdeck.scoring.draws import draw_chunks

    heights = [min(rows, resamples - start) for start in starts]
    chunks = draw_chunks(rng, n, [h * n for h in heights], index_type)
    with ThreadPoolExecutor(max_workers=1) as worker:
        pending: Future[None] | None = None
        for start, height, index in zip(starts, heights, chunks, strict=True):
            if pending is not None:
                pending.result()  # at most one chunk counted while the next are drawn
            pending = worker.submit(consume, start, index.reshape(height, n))
        if pending is not None:
            pending.result()
    return list(out)


def _is_binary(values: npt.NDArray[np.float64]) -> bool:
    return bool(((values == 0.0) | (values == 1.0)).all())


def _bit_counter(
    vectors: list[npt.NDArray[np.float64]], rows: int
) -> Callable[[npt.NDArray[np.integer[Any]]], npt.NDArray[np.int64]]:
    """A function of an index chunk giving, per vector, how many of each row's indices hit a 1."""
    import numpy as np

    width = next(w for w in (8, 16, 32, 64) if w >= len(vectors))
    dtype = np.dtype(f"uint{width}")
    lanes = 64 // width  # lookup entries per 64-bit word
    n = len(vectors[0])
    lut = np.zeros(n, dtype)
    for bit, vector in enumerate(vectors):
        lut |= vector.astype(dtype) << dtype.type(bit)
    pattern = sum(1 << (lane * width) for lane in range(lanes))
    masks = [np.uint64(pattern << bit) for bit in range(len(vectors))]
    padded = -(-n // lanes) * lanes  # whole 64-bit words per row; the padding stays 0
    buffer = np.zeros((rows, padded), dtype) if padded != n else None

    def count(index: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
        r = len(index)
        if buffer is None:
            gathered = lut[index]
        else:
            gathered = buffer[:r]
            gathered[:, :n] = lut[index]
        counts = np.empty((len(vectors), r), np.int64)
        if not hasattr(np, "bitwise_count"):  # numpy < 2.0
            for bit in range(len(vectors)):
                ((gathered >> dtype.type(bit)) & dtype.type(1)).sum(axis=1, out=counts[bit])
            return counts
        words = gathered.view(np.uint64)
        scratch = np.empty_like(words)
        for bit, mask in enumerate(masks):
            np.bitwise_and(words, mask, out=scratch)
            np.bitwise_count(scratch).sum(axis=1, out=counts[bit])
        return counts

    return count
