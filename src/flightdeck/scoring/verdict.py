"""The verdict of one comparison in one sentence: which way each metric went, and what is shown.

A reader of the first line must not have to open a table to learn that the candidate came out
ahead (or behind) and whether that is shown. So the sentence gives each metric's difference
with its sign, then the rule's verdict: the product page's words "<baseline> is shown to lose
by at least 15 points on <metric>" when it holds, "not shown to be 15 points better" when the
candidate is ahead but not by enough to show it, and "worse" when it is behind. The report,
its picture and the terminal all print this sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flightdeck.scoring.report_comparison import _pts

if TYPE_CHECKING:
    from flightdeck.scoring.rules import Comparison, MetricComparison


def verdict_line(c: Comparison) -> str:
    """One sentence: each metric's difference (candidate − baseline) and the verdict on it.

    Example: "baseline-projects is +31.2 points on correctness and +31.2 on citation validity
    against baseline-repo-search: not shown to be 15 points better on either metric."
    """
    from flightdeck.scoring.rules import METRIC_WORDS

    t = f"{c.threshold:g}"
    items = list(c.metrics.items())
    moves = [
        f"{_pts(mc.diff)} {'points ' if i == 0 else ''}on {METRIC_WORDS[m]}"
        for i, (m, mc) in enumerate(items)
    ]
    shown = [METRIC_WORDS[m] for m, mc in items if mc.shown]
    worse = [METRIC_WORDS[m] for m, mc in items if not mc.shown and mc.diff < 0]
    ahead = [METRIC_WORDS[m] for m, mc in items if not mc.shown and mc.diff >= 0]
    ruled = [METRIC_WORDS[m] for m, mc in items if _ruled_out(mc)]
    total = len(items)
    name = f"{c.candidate} is " if shown else ""
    clauses = []
    if shown:
        clauses.append(f"{c.baseline} is shown to lose by at least {t} points on {_and(shown)}")
    if ahead:
        clauses.append(
            f"{name}not shown to be {t} points better on {_join(ahead, total, 'either metric')}"
        )
    if worse:
        clauses.append(f"{name}worse on {_join(worse, total)}")
    if ruled:
        clauses.append(f"a lead of {t} points or more is ruled out on {_join(ruled, total)}")
    return f"{c.candidate} is {_and(moves)} against {c.baseline}: {'; '.join(clauses)}."


def _ruled_out(mc: MetricComparison) -> bool:
    return not mc.shown and mc.ruled_out


def _join(words: list[str], total: int, every: str = "both metrics") -> str:
    """The metrics a clause is about; all of two is "both metrics" (or "either metric")."""
    if total == 2 and len(words) == 2:
        return every
    return _and(words)


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
