"""What a scored suite came to, read back from its metrics JSON and report; nothing recomputed.

``make repro`` ends with this, so a newcomer whose every stage was up to date still sees the
verdict and the per-arm numbers the pipeline committed, exactly as CI and the report have them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_json
from flightdeck.scoring.points import points

METRIC_WORDS = {"correctness": "correctness", "citation_validity": "citation validity"}
_BOLD_LINE = re.compile(r"\*\*(?P<text>[^*].*?)\*\*\s*\Z")


@dataclass(frozen=True)
class ArmRow:
    arm: str
    n: int
    answered: int
    correctness: tuple[float, float, float]  # value, lo, hi
    citation_validity: tuple[float, float, float]
    kappa: float | None


@dataclass(frozen=True)
class ComparisonRow:
    candidate: str
    baseline: str
    metric: str
    diff: float
    lo: float
    hi: float
    shown: bool


@dataclass(frozen=True)
class Summary:
    suite: str
    metrics_path: Path
    report_path: Path
    verdict: str | None  # the report's verdict line; None when the report has none
    arms: tuple[ArmRow, ...]
    comparisons: tuple[ComparisonRow, ...]


def read_summary(metrics_path: Path, report_path: Path) -> Summary:
    """The verdict from the report (its first wholly bold line) and the numbers from the JSON."""
    for path in (metrics_path, report_path):
        if not path.is_file():
            raise InputError(
                path, None, "not found; run `make repro` or `dvc repro` (the score stage) first"
            )
    metrics = read_json(metrics_path)
    try:
        arms = tuple(_arm(name, data) for name, data in sorted(metrics["arms"].items()))
        comparisons = tuple(
            ComparisonRow(
                *_pair(name, metrics["arms"]),
                metric,
                float(values["diff"]),
                float(values["lo"]),
                float(values["hi"]),
                bool(values["shown"]),
            )
            for name, comparison in sorted(metrics.get("comparisons", {}).items())
            for metric in METRIC_WORDS
            if (values := comparison.get(metric)) is not None
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(
            metrics_path,
            None,
            f"not a flightdeck metrics file (missing or bad {exc}); score the suite again",
        ) from None
    return Summary(
        str(metrics.get("suite", metrics_path.stem)),
        metrics_path,
        report_path,
        _verdict(report_path),
        arms,
        comparisons,
    )


def _arm(name: str, data: dict[str, Any]) -> ArmRow:
    def triple(key: str) -> tuple[float, float, float]:
        d = data[key]
        return float(d["value"]), float(d["lo"]), float(d["hi"])

    kappa = data.get("kappa")
    return ArmRow(
        name,
        int(data["n"]),
        int(data["answered"]),
        triple("correctness"),
        triple("citation_validity"),
        None if kappa is None else float(kappa),
    )


def _pair(name: str, arms: dict[str, Any]) -> tuple[str, str]:
    """``<candidate>_vs_<baseline>`` split at the ``_vs_`` that leaves two scored arms."""
    for match in re.finditer("_vs_", name):
        candidate, baseline = name[: match.start()], name[match.end() :]
        if candidate in arms and baseline in arms:
            return candidate, baseline
    raise ValueError(f"comparison {name!r}")


def _verdict(report: Path) -> str | None:
    for line in report.read_text(encoding="utf-8").splitlines():
        match = _BOLD_LINE.match(line.strip())
        if match:
            return match["text"]
    return None


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render(summary: Summary) -> list[str]:
    """The lines ``knowledge show`` prints: the verdict, a per-arm table, the differences."""
    lines = [f"{summary.suite}: {summary.verdict or 'no verdict in the report (no comparison)'}"]
    header = ("arm", "answered", "correctness", "citation validity", "kappa")
    rows = [header] + [
        (
            a.arm,
            f"{a.answered}/{a.n}",
            f"{_pct(a.correctness[0])} [{_pct(a.correctness[1])}, {_pct(a.correctness[2])}]",
            f"{_pct(a.citation_validity[0])} [{_pct(a.citation_validity[1])}, "
            f"{_pct(a.citation_validity[2])}]",
            "undefined" if a.kappa is None else f"{a.kappa:.2f}",
        )
        for a in summary.arms
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines.append("")
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    if summary.comparisons:
        lines.append("")
    for c in summary.comparisons:
        lines.append(
            f"{c.candidate} - {c.baseline}, {METRIC_WORDS[c.metric]}: {points(c.diff)} points "
            f"[{points(c.lo, 'down')}, {points(c.hi, 'up')}], {'shown' if c.shown else 'not shown'}"
        )
    lines += ["", f"report: {summary.report_path.as_posix()}"]
    return lines
