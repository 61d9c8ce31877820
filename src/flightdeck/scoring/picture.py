"""The report's static picture: the verdict, each arm's Wilson intervals, the paired differences.

Written as plain SVG rather than with matplotlib: the chart is a few lines, dots and labels,
and matplotlib's import and layout cost over a second per `score`, more than the whole
scoring budget. Plain SVG is also byte-for-byte deterministic, so git shows real changes only.

It is laid out for the width of a pull-request comment (760 px, shown 1:1 there): a title and
the verdict sentence on top, then one row per arm and metric with its numbers printed beside
the interval, so the picture reads on its own when it is all a reviewer opens. Text is wrapped
by an estimate of its width (0.55 em a character, 10% more in bold: DejaVu Sans, the widest
common fallback, measures 0.53 on these sentences; Helvetica and Arial are narrower), never
by measuring, so the output does not depend on the fonts installed.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flightdeck.scoring.outcomes import ScoreResult
    from flightdeck.scoring.points import Direction


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as XML entities: xml.sax.saxutils.escape's output, without its
    import of urllib.request, http.client and ssl (about 20 ms of every score's start)."""
    return html.escape(text, quote=False)


COLORS = {"correctness": "#1f6feb", "citation_validity": "#d4700a"}
INK, MUTED, GRID = "#1f2328", "#59636e", "#e6e8eb"
SHOWN, NOT_SHOWN, THRESHOLD = "#1a7f37", "#59636e", "#cf222e"
WIDTH, PAD = 760, 16
LABEL_W, NUMBERS_W = 136, 190  # the metric labels' column, the numbers' column
EM, BOLD = 0.55, 1.1  # an average character's width in em, for wrapping; bold is wider
FONT = "Helvetica, Arial, 'DejaVu Sans', sans-serif"


@dataclass(frozen=True)
class Row:
    """One interval: a label, a point estimate and its ends in the panel's units."""

    label: str
    value: float
    lo: float
    hi: float
    color: str
    numbers: str  # printed beside the interval
    note: str = ""  # a second line under the numbers
    note_color: str = MUTED
    mark: float | None = None  # the bound the verdict reads, drawn as a triangle


@dataclass(frozen=True)
class Group:
    """Rows under one heading: an arm, or a comparison."""

    name: str
    rows: Sequence[Row]


@dataclass(frozen=True)
class Panel:
    title: str
    axis: str
    lo: float
    hi: float
    groups: Sequence[Group]
    step: float = 20
    signed: bool = False  # ticks as +25 / −25
    threshold: float | None = None
    legend: Sequence[str] = ()  # lines under the axis; "▲ …" and "● …" draw their glyph


def svg_picture(title: str, lines: Sequence[str], panels: Sequence[Panel]) -> str:
    """A titled picture: ``lines`` (the verdict) under the title, then the panels."""
    parts: list[str] = []
    y = float(PAD)
    for line in _wrap(title, 16, bold=True):
        y += 20
        parts.append(_text(PAD, y, line, size=16, weight="bold"))
    for i, text in enumerate(lines):
        y += 6 * (i > 0)  # a gap between two comparisons' sentences
        for line in _wrap(text, 14):
            y += 19
            parts.append(_text(PAD, y, line, size=14))
    for panel in panels:
        y = _panel(panel, y + 22, parts)
    height = math.ceil(y + PAD)
    desc = " ".join(lines)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" role="img">\n'
        f"<title>{escape(title)}</title>\n"
        + (f"<desc>{escape(desc)}</desc>\n" if desc else "")
        + '<rect width="100%" height="100%" fill="#ffffff"/>\n'
        + "\n".join(parts)
        + "\n</svg>\n"
    )


def _panel(panel: Panel, y: float, parts: list[str]) -> float:
    """Draw one panel from ``y`` down; return where it ends."""
    for line in _wrap(panel.title, 13, bold=True):
        y += 17
        parts.append(_text(PAD, y, line, size=13, weight="bold"))
    top = y + 18  # room above the rows for the threshold's label
    x0, x1 = PAD + LABEL_W, WIDTH - PAD - NUMBERS_W

    def sx(v: float) -> float:
        return x0 + (x1 - x0) * (min(max(v, panel.lo), panel.hi) - panel.lo) / (panel.hi - panel.lo)

    body: list[str] = []
    y = top
    for group in panel.groups:
        name = _clip(group.name, WIDTH - 2 * PAD, 12)
        body.append(_text(PAD, y + 14, name, weight="bold", halo=True))
        y += 20
        for row in group.rows:
            height = 36 if row.note else 28
            cy = y + height / 2 - (2 if row.note else 0)
            body.append(_text(PAD + 10, cy + 4, row.label))
            body.append(_line(sx(row.lo), cy, sx(row.hi), cy, row.color, width=2.5))
            for end in (row.lo, row.hi):
                body.append(_line(sx(end), cy - 6, sx(end), cy + 6, row.color, width=2.5))
            body.append(
                f'<circle cx="{sx(row.value):.1f}" cy="{cy:.1f}" r="4.5" fill="{row.color}"/>'
            )
            if row.mark is not None:
                body.append(_triangle(sx(row.mark), cy + 5, row.color))
            nx = x1 + 14
            if row.note:
                body.append(_text(nx, cy + 1, row.numbers, weight="bold"))
                body.append(_text(nx, cy + 16, row.note, size=12, fill=row.note_color))
            else:
                body.append(_text(nx, cy + 4, row.numbers, weight="bold"))
            y += height
    bottom = y + 4
    for tick in _ticks(panel.lo, panel.hi, panel.step):
        parts.append(_line(sx(tick), top, sx(tick), bottom, GRID))
        label = _signed(tick) if panel.signed else f"{tick:g}"
        parts.append(_text(sx(tick), bottom + 15, label, anchor="middle", size=11, fill=MUTED))
    if panel.lo < 0 < panel.hi:
        parts.append(_line(sx(0), top, sx(0), bottom, INK))
    if panel.threshold is not None:
        t = sx(panel.threshold)
        parts.append(_line(t, top - 14, t, bottom, THRESHOLD, width=1.5, dash=True))
        parts.append(
            _text(
                t + 4,
                top - 4,
                f"threshold {_signed(panel.threshold)}",
                size=11,
                fill=THRESHOLD,
            )
        )
    parts.extend(body)
    parts.append(_line(x0, bottom, x1, bottom, INK))
    parts.append(_text((x0 + x1) / 2, bottom + 32, panel.axis, anchor="middle", size=12))
    y = bottom + 36
    for legend in panel.legend:
        glyph = legend[:2] if legend[:2] in ("▲ ", "● ") else ""
        for i, line in enumerate(_wrap(legend[len(glyph) :], 12, WIDTH - 2 * PAD - 14)):
            y += 16
            if glyph == "▲ " and i == 0:
                parts.append(_triangle(PAD + 5, y - 8, MUTED))
            elif glyph and i == 0:
                parts.append(f'<circle cx="{PAD + 5}" cy="{y - 4:.1f}" r="4" fill="{MUTED}"/>')
            parts.append(_text(PAD + 14, y, line, size=12, fill=MUTED))
    return y


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    first = math.ceil(lo / step) * step
    count = math.floor((hi - first) / step + 1e-9) + 1
    return [first + i * step for i in range(count)]


def _signed(value: float) -> str:
    return "0" if value == 0 else f"{value:+g}".replace("-", "−")


def _wrap(
    text: str, size: float, width: float = WIDTH - 2 * PAD, *, bold: bool = False
) -> list[str]:
    """Greedy word wrap at an estimated ``EM`` em a character."""
    fits = max(1, int(width / (EM * size * (BOLD if bold else 1))))
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= fits:
            lines[-1] += " " + word
            continue
        while len(word) > fits:  # a name longer than a line is cut where it must be
            lines.append(word[:fits])
            word = word[fits:]
        lines.append(word)
    return lines


def _clip(text: str, width: float, size: float) -> str:
    """Bold text cut to ``width`` with an ellipsis."""
    fits = max(2, int(width / (EM * BOLD * size)))
    return text if len(text) <= fits else text[: fits - 1] + "…"


def _triangle(x: float, y: float, color: str) -> str:
    """An upward triangle with its tip at (x, y): the bound the verdict reads."""
    return (
        f'<path d="M{x:.1f},{y:.1f} l-4.5,8 h9 z" fill="{color}" stroke="#ffffff" '
        'stroke-width="0.8"/>'
    )


def _line(
    x1: float, y1: float, x2: float, y2: float, color: str, *, width: float = 1, dash: bool = False
) -> str:
    extra = ' stroke-dasharray="5,3"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
        f'stroke-width="{width:g}"{extra}/>'
    )


def _text(
    x: float,
    y: float,
    text: str,
    *,
    anchor: str = "start",
    size: int = 12,
    weight: str = "normal",
    fill: str = INK,
    halo: bool = False,
) -> str:
    """A text element; ``halo`` outlines it in white so lines behind it do not cross it."""
    extra = ' stroke="#ffffff" stroke-width="4" paint-order="stroke"' if halo else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-weight="{weight}" fill="{fill}"{extra}>{escape(text)}</text>'
    )


def result_picture(result: ScoreResult) -> str:
    """The picture of one score, from the same numbers and verdict sentence as the report."""
    from flightdeck.scoring.report_comparison import verdict_line

    panels = [_arm_panel(result)]
    if result.comparisons:
        panels.append(_difference_panel(result))
    title = f"Knowledge evals: {result.suite}, {result.n} questions"
    lines = [re.sub(r"-(?=\d)", "−", verdict_line(c)) for c in result.comparisons]
    return svg_picture(title, lines, panels)


def _arm_panel(result: ScoreResult) -> Panel:
    from flightdeck.scoring.rules import METRIC_WORDS, METRICS

    groups = []
    for s in result.arms.values():
        rows = []
        for m in METRICS:
            p = getattr(s, m)
            k = round(p.value * s.n)
            numbers = f"{100 * p.value:.1f}% ({k}/{s.n}) [{100 * p.lo:.1f}, {100 * p.hi:.1f}]"
            rows.append(
                Row(METRIC_WORDS[m], 100 * p.value, 100 * p.lo, 100 * p.hi, COLORS[m], numbers)
            )
        groups.append(Group(s.arm, rows))
    level = f"{100 * result.params.confidence:g}%"
    return Panel(
        f"Each arm: share of the {result.n} questions, with {level} Wilson intervals",
        "% of questions",
        0,
        100,
        groups,
    )


def _difference_panel(result: ScoreResult) -> Panel:
    from flightdeck.scoring.points import points
    from flightdeck.scoring.rules import METRIC_WORDS

    def pts(x: float, direction: Direction = "nearest") -> str:
        return points(x, direction).replace("-", "−")

    groups, ends = [], [0.0, result.params.threshold]
    rule = ""
    for c in result.comparisons:
        rows = []
        for m, mc in c.metrics.items():
            d = mc.decision
            verdict = "shown" if mc.shown else "not shown"
            note = verdict if d is None else f"{verdict} (bound {pts(d.shown.bound, 'down')})"
            mark = None if d is None else 100 * d.shown.bound
            if d is not None and not rule:
                rule = _rule_words(d.rule, d.shown.level)
            rows.append(
                Row(
                    METRIC_WORDS[m],
                    100 * mc.diff,
                    100 * mc.lo,
                    100 * mc.hi,
                    COLORS[m],
                    f"{pts(mc.diff)} [{pts(mc.lo, 'down')}, {pts(mc.hi, 'up')}]",
                    note,
                    SHOWN if mc.shown else NOT_SHOWN,
                    mark,
                )
            )
            ends += [100 * mc.lo, 100 * mc.hi] + ([] if mark is None else [mark])
        groups.append(Group(f"{c.candidate} − {c.baseline}", rows))
    p = result.params
    t = _signed(p.threshold)
    legend = [
        f"● the difference on these {result.n} questions; bar: the seeded {100 * p.confidence:g}% "
        f"bootstrap interval (seed {p.seed}, {p.resamples:,} resamples)."
    ]
    if rule:
        legend.append(
            f'▲ the lower bound the verdict reads ({rule}): "shown" needs it at {t} or above.'
        )
    step = 25.0
    lo = max(-100.0, math.floor((min(ends) - 1) / step) * step)
    hi = min(100.0, math.ceil((max(ends) + 1) / step) * step)
    return Panel(
        f"Paired differences, candidate − baseline, in points (threshold {t})",
        "points (candidate − baseline)",
        lo,
        hi,
        groups,
        step=step,
        signed=True,
        threshold=p.threshold,
        legend=legend,
    )


def _rule_words(rule: str, level: float) -> str:
    if rule == "calibrated":
        return f"calibrated rule, one-sided level α′ = {100 * level:.2f}%"
    return "plain percentile rule: the interval's lower end"
