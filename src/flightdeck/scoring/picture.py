"""The report's static picture: each arm's Wilson intervals and the paired differences.

Written as plain SVG rather than with matplotlib: the chart is a few lines, dots and labels,
and matplotlib's import and layout cost over a second per `score`, more than the whole
scoring budget. Plain SVG is also byte-for-byte deterministic, so git shows real changes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

COLORS = {"correctness": "#1f77b4", "citation_validity": "#ff7f0e"}
SHOWN, NOT_SHOWN, THRESHOLD = "#d62728", "#7f7f7f", "#d62728"
ROW, PLOT_W, PAD = 34, 360, 16
CHAR_W = 6.6  # average advance of an 11 px sans-serif character, with a margin


@dataclass(frozen=True)
class Interval:
    """One row of a panel: a label, a point estimate and its interval, in percent/points."""

    label: str
    value: float
    lo: float
    hi: float
    color: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    axis: str
    lo: float
    hi: float
    rows: Sequence[Interval]
    threshold: float | None = None


def svg_panels(panels: Sequence[Panel]) -> str:
    """Panels stacked vertically, each a labelled axis with horizontal interval bars."""
    longest = max((len(r.label) for p in panels for r in p.rows), default=10)
    label_w = round(CHAR_W * longest) + 12
    width = label_w + PLOT_W + 2 * PAD
    parts: list[str] = []
    y = PAD
    for panel in panels:
        parts.append(_text(PAD, y + 12, panel.title, weight="bold"))
        y += 24
        top = y
        x0, x1 = label_w + PAD, label_w + PAD + PLOT_W

        def sx(v: float, p: Panel = panel, a: float = x0, b: float = x1) -> float:
            return a + (b - a) * (min(max(v, p.lo), p.hi) - p.lo) / (p.hi - p.lo)

        bottom = top + ROW * len(panel.rows)
        for tick in _ticks(panel.lo, panel.hi):
            parts.append(_line(sx(tick), top, sx(tick), bottom, "#e0e0e0"))
            parts.append(_text(sx(tick), bottom + 14, f"{tick:g}", anchor="middle", size=10))
        if panel.lo < 0 < panel.hi:
            parts.append(_line(sx(0), top, sx(0), bottom, "#000000"))
        if panel.threshold is not None:
            t = sx(panel.threshold)
            parts.append(_line(t, top - 4, t, bottom, THRESHOLD, dash=True))
            parts.append(
                _text(t + 3, top - 6, f"threshold {panel.threshold:g}", size=10, fill=THRESHOLD)
            )
        for i, row in enumerate(panel.rows):
            cy = top + ROW * i + ROW / 2
            parts.append(_text(x0 - 8, cy + 4, row.label, anchor="end", size=11))
            parts.append(_line(sx(row.lo), cy, sx(row.hi), cy, row.color, width=2))
            for end in (row.lo, row.hi):
                parts.append(_line(sx(end), cy - 5, sx(end), cy + 5, row.color, width=2))
            parts.append(
                f'<circle cx="{sx(row.value):.1f}" cy="{cy:.1f}" r="4" fill="{row.color}"/>'
            )
        parts.append(_line(x0, bottom, x1, bottom, "#000000"))
        parts.append(_text((x0 + x1) / 2, bottom + 30, panel.axis, anchor="middle", size=11))
        legends = list(dict.fromkeys((r.legend, r.color) for r in panel.rows if r.legend))
        lx = x0
        for legend, color in legends:
            parts.append(f'<circle cx="{lx:.1f}" cy="{bottom + 46:.1f}" r="4" fill="{color}"/>')
            parts.append(_text(lx + 8, bottom + 50, legend, size=10))
            lx += 130
        y = bottom + (66 if legends else 46)
    height = y + PAD
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" '
        f'viewBox="0 0 {width} {height:.0f}" font-family="sans-serif">\n'
        f'<rect width="100%" height="100%" fill="#ffffff"/>\n' + "\n".join(parts) + "\n</svg>\n"
    )


def _ticks(lo: float, hi: float) -> list[float]:
    step = 20 if hi - lo <= 100 else 25
    first = int(lo // step) * step
    return [float(v) for v in range(first, int(hi) + 1, step) if lo <= v <= hi]


def _line(
    x1: float, y1: float, x2: float, y2: float, color: str, *, width: float = 1, dash: bool = False
) -> str:
    extra = ' stroke-dasharray="5,3"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
        f'stroke-width="{width}"{extra}/>'
    )


def _text(
    x: float,
    y: float,
    text: str,
    *,
    anchor: str = "start",
    size: int = 12,
    weight: str = "normal",
    fill: str = "#000000",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-weight="{weight}" fill="{fill}">{escape(text)}</text>'
    )
