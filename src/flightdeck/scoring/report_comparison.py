"""The report's comparison section: the rule in force in words, and what it really does.

For each metric: the seeded 95% interval, the exact bootstrap's tail and bound, the bound the
verdict reads with its exact size, Newcombe's and Tango's intervals (and a line when their
verdict differs), and a note when another seed or line order would flip the plain percentile
reading. Then the minimum detectable difference and the multiplicity figures of the rule in
force, at this n: exact, or a true bound (docs/statistics.md).

:func:`verdict_line` is the same comparison in one sentence, which the report and its picture
lead with; :func:`counted` writes counts the one way both print them, and
:func:`flightdeck.scoring.points.points` writes every difference in points.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from flightdeck.scoring.calibrated_levels import EXACT_MAX_N
from flightdeck.scoring.decision import PERCENTILE_MAX_N, Decision
from flightdeck.scoring.points import points

if TYPE_CHECKING:
    from flightdeck.params import Params
    from flightdeck.scoring.rules import Comparison, MetricComparison

# The plain percentile reading is reported as seed-dependent inside these odds (audit 5.1).
FLIP_NOTE = 0.001


def counted(n: int, noun: str) -> str:
    """``1 question``, ``2 questions``: a count with its noun, for the report's sentences."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _pct(x: float, places: int = 2) -> str:
    return f"{100 * x:.{places}f}%"


def _plain(x: float) -> str:
    """A proportion as points, to the 0.05-point grid the exact search uses: 32.5, 57.25."""
    return f"{100 * x:.2f}".rstrip("0").rstrip(".")


def _said(holds: bool) -> str:
    return "shown" if holds else "not shown"


def rule_words(p: Params, n: int) -> str:
    """The rule in force in one paragraph, with its guarantee at this n."""
    t = f"{p.threshold:g}"
    alpha = _pct((1 - p.confidence) / 2, 1)
    if p.decision == "percentile":
        return (
            f"The rule (`decision: percentile`): the baseline is shown to lose by at least {t} "
            f"points on a metric when the lower bound of the seeded {100 * p.confidence:g}% "
            f"percentile interval reaches +{t} points; a loss of {t} points or more is ruled "
            f"out when its upper bound is below +{t}. This plain reading is not a {alpha} "
            "test: its real size at this n is below, and it can depend on the seed and on the "
            "order of the suite's lines."
        )
    tables = (n + 1) * (n + 2) // 2
    if n > EXACT_MAX_N:
        return (
            f"The rule (`decision: calibrated`) makes no claim at n = {n}: its level is found by "
            f"exact enumeration of the suite's possible tables, which this version does up to "
            f"n = {EXACT_MAX_N:,} (the cost grows like n²), and the nominal {alpha} level has "
            'no exact guarantee (at n = 101 its false "shown" rate is 2.78%, at n = 200 '
            "3.61%). So nothing is shown or ruled out here, whatever the data; score a random "
            f"subset of at most {EXACT_MAX_N:,} questions for a verdict with a guarantee "
            '(docs/statistics.md, "Above 2,000 questions").'
        )
    return (
        f"The rule (`decision: calibrated`): the baseline is shown to lose by at least {t} "
        f"points on a metric when the exact bootstrap over questions (every resample at "
        f"once: no seed, no dependence on line order) puts less than α′ of the difference "
        f'below +{t} points; α′ is the largest level whose false "shown" rate at n = {n} '
        f"is at most {alpha} whatever the discordance, found by exact enumeration of all "
        f"{tables:,} possible tables. A loss of {t} points or more is ruled out by "
        "the mirror claim, with the same guarantee. The seeded interval is printed as the "
        "product page asks; the verdict does not read it. How and why: docs/statistics.md."
    )


def _metric_lines(words: str, d: Decision, lo: float, hi: float, p: Params) -> list[str]:
    t = d.threshold
    s = d.shown
    out = [
        f"- **{words}**: {p.confidence * 100:g}% bootstrap [{points(lo, 'down')}, "
        f"{points(hi, 'up')}] (seed {p.seed}, {p.resamples:,} resamples)",
        f"  - exact (B→∞) bootstrap: P*(D* < {t:g}) = {_pct(s.p_exact)} → lower bound "
        f"{points(d.exact_lo, 'down')}; {_said(s.p_exact < d.alpha)} at {_pct(d.alpha, 1)}",
    ]
    if d.rule == "calibrated" and s.refused:
        out.append(f"  - calibrated decision: none at n = {d.n} (above {EXACT_MAX_N:,}); not shown")
    elif d.rule == "calibrated":
        size = f"size ≤ {_pct(s.size or 0.0)} at n = {d.n}, exact"
        line = (
            f"  - calibrated decision (level α′ = {_pct(s.level)}, {size}): lower bound "
            f"{points(s.bound, 'down')}"
        )
        if d.ruled_out is not None:
            line += f", upper bound {points(d.ruled_out.bound, 'up')}"
        out.append(line + f"; {_said(s.holds)}")
    newcombe = d.newcombe.lo >= t / 100
    tango = d.tango.lo >= t / 100
    verdicts = (
        _said(newcombe)
        if newcombe == tango
        else (f"Newcombe {_said(newcombe)}, Tango {_said(tango)}")
    )
    out.append(
        f"  - Newcombe (1998) method 10: [{points(d.newcombe.lo, 'down')}, "
        f"{points(d.newcombe.hi, 'up')}]; Tango score: [{points(d.tango.lo, 'down')}, "
        f"{points(d.tango.hi, 'up')}]; {verdicts}"
    )
    for name, says in (("Newcombe", newcombe), ("Tango", tango)):
        if says != s.holds:
            out.append(
                f"  - {name}'s {p.confidence * 100:g}% interval says {_said(says)} where the "
                f"rule in force says {_said(s.holds)}"
            )
    if FLIP_NOTE < d.seeded_shown < 1 - FLIP_NOTE:
        out.append(
            "  - note: under another seed or question order the plain "
            f"{p.confidence * 100:g}% percentile reading ({_said(d.seeded_reading)}) flips "
            f"with probability {_pct(d.flip, 1)}"
        )
    return out


def comparison_lines(c: Comparison, n: int, p: Params, *, baselines: int = 1) -> list[str]:
    """The report's section for one comparison; ``baselines``: how many the report compares
    the candidates with (the multiplicity line counts the claims of all of them)."""
    from flightdeck.scoring.rules import METRIC_WORDS, METRICS

    out = [f"## {c.candidate} vs {c.baseline}", "", rule_words(p, n), ""]
    out += [
        "| metric | difference (points) | interval | C right, B wrong | B right, C wrong |",
        "|---|---|---|---|---|",
    ]
    for m in METRICS:
        mc = c.metrics[m]
        out.append(
            f"| {METRIC_WORDS[m]} | {points(mc.diff)} | [{points(mc.lo, 'down')}, "
            f"{points(mc.hi, 'up')}] | {mc.candidate_only} | {mc.baseline_only} |"
        )
    out += ["", discordance_words(c, n), ""]
    for m in METRICS:
        mc = c.metrics[m]
        if mc.decision is not None:
            out += _metric_lines(METRIC_WORDS[m], mc.decision, mc.lo, mc.hi, p)
    out.append("")
    for m in METRICS:
        out.append(f"- **{c.metrics[m].statement}.**")
    out.append(f"- (baseline: {c.baseline}; candidate: {c.candidate})")
    out += ["", "### What this set can show", ""]
    for m in METRICS:
        out.append(_detect_line(METRIC_WORDS[m], c.metrics[m].decision, n))
    first = c.metrics[METRICS[0]].decision
    if first is not None:
        out += _size_lines(first, p, metrics=len(METRICS), baselines=baselines)
    out.append("")
    return out


def discordance_words(c: Comparison, n: int) -> str:
    """What "C right, B wrong" counts, and how the difference follows from the two counts."""
    from flightdeck.scoring.rules import METRIC_WORDS

    sums = " and ".join(
        f"{METRIC_WORDS[m]} ({mc.candidate_only} − {mc.baseline_only}) / {n} = "
        f"{points(mc.diff)} points"
        for m, mc in c.metrics.items()
    )
    return (
        f"C is the candidate ({c.candidate}), B the baseline ({c.baseline}). "
        '"C right, B wrong" is the number of questions the candidate got right and the '
        "baseline got wrong (for citation validity: cited validly, and not); "
        '"B right, C wrong" is the reverse. Questions both got right or both got wrong do '
        f"not move the difference: it is the first count minus the second over all "
        f"{counted(n, 'question')}, so {sums}. The per-question table (By question) shows "
        "which questions these are."
    )


def _detect_line(words: str, d: Decision | None, n: int) -> str:
    if d is None:
        return f"- {words}: no decision was computed."
    discordance = (d.candidate_only + d.baseline_only) / n
    head = (
        f"- {words}: with n = {n} and the observed discordance ({100 * discordance:.0f}% of "
        "questions differ), "
    )
    if d.min_detectable is None:
        return head + 'no true difference gives the rule in force an 80% chance of "shown".'
    if d.min_detectable_exact:
        return head + (
            f'the rule in force says "shown" with 80% probability once the true difference '
            f"is {_plain(d.min_detectable)} points (exact enumeration of the rule at the "
            "observed discordance; a true gap of Δ needs at least Δ discordance, so the larger "
            "is used)."
        )
    return head + (
        f"a true difference of about {100 * d.min_detectable:.0f} points is needed for an "
        '80% chance of "shown" (normal approximation to the paired difference: n is above '
        "the exact-enumeration limit)."
    )


def _size_lines(d: Decision, p: Params, *, metrics: int, baselines: int) -> list[str]:
    s = d.shown.size
    t = f"{p.threshold:g}"
    claims = metrics * baselines
    which = f"{_words(metrics)} metric{'s' * (metrics != 1)}" + (
        f" against {_words(baselines)} baselines" if baselines > 1 else ""
    )
    if d.shown.refused:
        return [
            f"- Multiplicity: at n = {d.n} the calibrated rule makes no claim, so none of the "
            f"{claims} possible claims of this report ({which}) can be false."
        ]
    if s is None:
        return [
            f"- Multiplicity: at n = {d.n} (above {PERCENTILE_MAX_N}) the size of the plain "
            "percentile rule is not computed, and it is not the nominal "
            f"{_pct(d.alpha, 1)} (4.31% at n = 40, 2.78% at n = 101): this report gives no "
            f'bound on a false "shown" among its {claims} claims ({which}). '
            "`decision: calibrated` has one."
        ]
    if s == 0.0:
        return [
            f'- Multiplicity: at n = {d.n} no table lets the rule in force say "shown" with a '
            f'false-"shown" rate of at most {_pct(d.alpha, 1)}, so this report makes no such '
            "claim and none can be false."
        ]
    rule = "calibrated rule" if d.rule == "calibrated" else "plain percentile rule"
    above = "" if s <= d.alpha else f", above the nominal {_pct(d.alpha, 1)}"
    out = [
        f'- Multiplicity: one "shown" claim by the {rule} is false with probability up to '
        f"{_pct(s)} at n = {d.n}, whatever the true difference of {t} points or less (exact "
        f"worst case over the discordance{above}). This report makes {claims} such claims "
        f"({which}): up to {_pct(min(1.0, claims * s))} that any is false (union bound, "
        f"whatever their dependence; {_pct(_independent(s, claims))} if they were "
        'independent, which they need not be). Read a single "shown" with that in mind.'
    ]
    ruled = d.ruled_out
    if ruled is not None and ruled.size is not None:
        out.append(
            f'- "A loss of {t} points or more is ruled out" is wrong with probability up to '
            f"{_pct(ruled.size)} at n = {d.n}, whatever the true difference of {t} points or "
            "more (exact)."
        )
    return out


def _words(n: int) -> str:
    return {1: "one", 2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _independent(size: float, claims: int) -> float:
    """1 - (1 - s)^k, computed without cancellation; a size of 1 (threshold 0) gives 1."""
    if size >= 1.0:
        return 1.0
    return -math.expm1(claims * math.log1p(-size))


# --- the verdict in one sentence --------------------------------------------------------
# The verdict of one comparison in one sentence: which way each metric went, and what is shown.
#
# A reader of the first line must not have to open a table to learn that the candidate came out
# ahead (or behind) and whether that is shown. So the sentence gives each metric's difference
# with its sign, then the rule's verdict: the product page's words "<baseline> is shown to lose
# by at least 15 points on <metric>" when it holds, "not shown to be 15 points better" when the
# candidate is ahead but not by enough to show it, and "worse" when it is behind. The report,
# its picture and the terminal all print this sentence.


def verdict_line(c: Comparison) -> str:
    """One sentence: each metric's difference (candidate − baseline) and the verdict on it.

    Example: "baseline-projects is +31.2 points on correctness and +31.2 on citation validity
    against baseline-repo-search: not shown to be 15 points better on either metric."
    """
    from flightdeck.scoring.rules import METRIC_WORDS

    t = f"{c.threshold:g}"
    items = list(c.metrics.items())
    moves = [
        f"{points(mc.diff)} {'points ' if i == 0 else ''}on {METRIC_WORDS[m]}"
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
