"""The paired bootstrap: a difference of two arms' means with its percentile interval.

Resampling n questions with replacement only matters through how many times each distinct
outcome pattern (the pair of scores a question gets) is drawn, and those counts are one
multinomial draw. So a resample costs one multinomial over the few distinct patterns (at most
four for 0/1 scores), not n index draws: the same law as resampling questions
(`scipy.stats.bootstrap`'s paired resampling), in a few thousand numbers instead of 10^9.
numpy is imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flightdeck.scoring.stats import check_int, check_probability

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


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


def paired_bootstrap(
    candidate: npt.ArrayLike,
    baseline: npt.ArrayLike,
    *,
    resamples: int,
    confidence: float,
    rng: np.random.Generator | int,
) -> BootstrapResult:
    """The paired difference mean(candidate) - mean(baseline) with a percentile interval.

    ``candidate[i]`` and ``baseline[i]`` are two arms' scores (0/1, or any floats) on question i.
    Each resample draws n questions with replacement and applies the same draw to both arms, so
    the interval reflects how much the difference depends on which questions were asked. Read
    it as: [lo, hi] holds the true difference with about the given confidence (Efron and
    Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13, percentile interval).

    A resample is drawn as the number of times each distinct pair (candidate[i], baseline[i])
    is picked: ``rng.multinomial(n, share of each pair, size=resamples)``, which is the law of
    the counts under resampling questions, so the distribution is that of
    ``scipy.stats.bootstrap((candidate, baseline), ..., paired=True, method="percentile")``
    (not its draws). lo and hi are scipy's linear-interpolation quantiles at (1 ∓ confidence)/2.
    The cost grows with resamples times the number of distinct pairs (at most 4 for 0/1 scores),
    not with n. The same seed gives ``==`` floats. Unlike scipy it accepts n = 1.

    Args:
        candidate: The candidate arm's score per question.
        baseline: The baseline arm's score per question, same length and order.
        resamples: Number of bootstrap resamples (at least 1).
        confidence: Two-sided confidence level, strictly between 0 and 1.
        rng: A numpy Generator, or a seed for ``numpy.random.default_rng``.

    Raises:
        ValueError: the arms are empty, differ in length, or hold non-finite values, or an
            option is out of range.
    """
    import numpy as np

    c, b = _check_pair(candidate, baseline)
    resamples = check_int("resamples", resamples, minimum=1)
    confidence = check_probability("confidence", confidence)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(check_int("rng", rng, minimum=0))
    distribution = _resampled_differences(c, b, resamples, rng)
    distribution.flags.writeable = False
    lo, hi = _percentile_interval(distribution, confidence)
    return BootstrapResult(float(c.mean() - b.mean()), lo, hi, confidence, resamples, distribution)


def _check_pair(
    candidate: npt.ArrayLike, baseline: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    import numpy as np

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
    return c, b


def outcome_patterns(
    candidate: npt.NDArray[np.float64], baseline: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """The distinct (candidate, baseline) score pairs, sorted, and how many questions have each.

    What ``np.unique(np.column_stack(...), axis=0, return_counts=True)`` gives, from each
    arm's distinct scores and the pairs of their ranks as one integer: three 1-D sorts
    instead of sorting n rows (0.17 s at n = 100,000, against a few ms).
    """
    import numpy as np

    c_values, c_rank = np.unique(candidate, return_inverse=True)
    b_values, b_rank = np.unique(baseline, return_inverse=True)
    width = len(b_values)
    pairs, counts = np.unique(c_rank.astype(np.int64) * width + b_rank, return_counts=True)
    patterns = np.column_stack((c_values[pairs // width], b_values[pairs % width]))
    return patterns, counts.astype(np.int64)


def _resampled_differences(
    c: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
    resamples: int,
    rng: np.random.Generator,
) -> npt.NDArray[np.float64]:
    """mean(c*) - mean(b*) for each resample, from multinomial counts of the outcome patterns.

    A pattern's score is multiplied by how often it was drawn; for 0/1 scores these sums are
    exact integers, so the difference is k_c/n - k_b/n exactly as a mean over the resampled
    questions would give it.
    """

    n = len(c)
    patterns, counts = outcome_patterns(c, b)
    drawn = rng.multinomial(n, counts / n, size=resamples)  # (resamples, patterns)
    sums = drawn @ patterns  # column 0: sum of candidate scores, column 1: baseline's
    out: npt.NDArray[np.float64] = sums[:, 0] / n - sums[:, 1] / n
    return out


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
