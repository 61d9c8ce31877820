"""What score writes and says: every output file at once, the markdown report, terminal lines.

:func:`write_outputs` writes the metrics JSON (its content is :mod:`.metrics`'), the
per-question results (:mod:`.results`), this report and its picture (:mod:`.picture`), each
atomically; :func:`score_lines` and :func:`gate_lines` are what the CLI prints. Values are
rounded to fixed places and keys sorted, so git and ``dvc metrics diff`` show real movement.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flightdeck.arms.harness_needs import is_dry_run
from flightdeck.errors import InputError
from flightdeck.files.jsonl import atomic_write, write_json, writing_to
from flightdeck.holdouts.manifest import manifest_path
from flightdeck.project.paths import report_picture, results_file
from flightdeck.scoring.metrics import metrics_json
from flightdeck.scoring.outcomes import GateResult, ScoreResult
from flightdeck.scoring.points import points
from flightdeck.scoring.report_comparison import comparison_lines, counted, verdict_line
from flightdeck.scoring.report_questions import question_table
from flightdeck.scoring.results import encode_results
from flightdeck.scoring.rules import ArmScore, Comparison
from flightdeck.suite.records import KINDS
from flightdeck.version import __version__


def write_outputs(
    result: ScoreResult,
    *,
    metrics: Path,
    report: Path,
    results_dir: Path,
) -> dict[str, Path]:
    """Write every output of score atomically; returns what was written.

    Every folder is made before any file is written, so a bad output path fails first
    instead of leaving some outputs new and others old. An output path that cannot be
    written (a file where a folder should be, no permission) is the user's to fix: an
    :class:`InputError` naming it; a full disk stays an OSError.
    """
    picture = report_picture(report)
    if picture == report:
        raise InputError(report, None, "the report is markdown; give a .md path")
    with writing_to(metrics):  # a file where a folder goes, no permission: the user's path
        return _write_outputs(result, metrics, report, picture, results_dir)


def _write_outputs(
    result: ScoreResult,
    metrics: Path,
    report: Path,
    picture: Path,
    results_dir: Path,
) -> dict[str, Path]:
    for folder in (metrics.parent, report.parent, results_dir):
        folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for arm, s in result.arms.items():
        path = results_file(results_dir, arm)
        atomic_write(path, encode_results(s.table))
        written[f"results:{arm}"] = path
    write_json(metrics, metrics_json(result))
    written["metrics"] = metrics
    write_picture(result, picture)
    written["picture"] = picture
    atomic_write(report, markdown_report(result, picture_name=picture.name))
    written["report"] = report
    return written


def fabricated_words(arm: str, citations: dict[str, int]) -> str:
    """ "arm: 3 fabricated citations: 2 not a valid source (file exists at as_of), 1 no ..."."""
    from flightdeck.scoring.fabricated import SPLIT, WORDS

    total = citations.get("fabricated", 0)
    if not total or not any(part in citations for part in SPLIT):
        return ""
    parts = ", ".join(
        f"{citations[part]} {WORDS[part]}" for part in SPLIT if citations.get(part, 0)
    )
    noun = "citation" if total == 1 else "citations"
    return f"- {arm}: {total} fabricated {noun}: {parts}."


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def meta_lines(s: ArmScore) -> list[str]:
    if s.meta is None:
        return [f"- **{s.arm}**: meta missing (who ran it, when, with which model is unknown)"]
    f = s.meta.fields
    parts = [f"runner {f.get('runner')}", f"by {f.get('by')}", f"on {f.get('date')}"]
    parts.append(f"model {f.get('model')}")
    if f.get("command"):
        parts.append(f"command `{f['command']}`")
    snapshot = f.get("knowledge_snapshot")
    if snapshot:
        parts.append(f"snapshot {_snapshot(snapshot)}")
    sandbox = f.get("sandbox")
    if isinstance(sandbox, dict) and sandbox.get("mode") == "none":
        parts.append("**arm ran without a sandbox**")
    if is_dry_run(f):  # only scored with --allow-dry-run (#21)
        parts.append("**dry run: no model answered (scored with --allow-dry-run)**")
    provenance = f.get("provenance")
    if isinstance(provenance, dict) and isinstance(provenance.get("prompt_sha256"), str):
        parts.append(f"prompt sha256 {provenance['prompt_sha256'][:16]}")
    return [f"- **{s.arm}**: " + ", ".join(str(p) for p in parts)]


def _snapshot(value: Any) -> str:
    """``{"sdlc": "3f2a…"}`` -> ``sdlc@3f2a1b2c3d4e``; a folder snapshot as its fields."""
    if not isinstance(value, dict):
        return f"`{_short(value)}`"
    commits = all(
        isinstance(v, str) or (isinstance(v, list) and all(isinstance(c, str) for c in v))
        for v in value.values()
    ) and all(len(c) == 40 for v in value.values() for c in ([v] if isinstance(v, str) else v))
    if commits:
        parts = [
            f"{repo}@{commit[:12]}"
            for repo, v in value.items()
            for commit in ([v] if isinstance(v, str) else v)
        ]
    else:
        parts = [
            f"{k} {_clip(_short(v), 16 if re.fullmatch(r'[0-9a-f]{40,64}', str(v)) else 60)}"
            for k, v in value.items()
        ]
    more = f" and {len(parts) - 4} more" if len(parts) > 4 else ""
    return "`" + ", ".join(parts[:4]) + "`" + more


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def markdown_report(result: ScoreResult, *, picture_name: str) -> str:
    p = result.params
    level = f"{100 * p.confidence:g}%"
    out = [f"# Knowledge evals: {result.suite}", ""]
    for comparison in result.comparisons:
        out += _verdict(comparison)
    out += [
        f"{counted(result.n, 'question')}, sealed {result.sealed_at}; the suite files match "
        f"their manifest (score refuses otherwise){_unchecked(result)}, and "
        f"{_custody(result)}. Scored with "
        f"flightdeck {__version__}. Intervals are {level}: Wilson for "
        "proportions, a paired percentile bootstrap over questions for differences (seed "
        f"{p.seed}, {p.resamples} resamples).",
        "",
    ]
    out += ["## Arms", ""]
    for s in result.arms.values():
        out += meta_lines(s)
    out += _sources_section(result)
    out += ["", "## Metrics", ""]
    out += [
        "| arm | answered | correctness | citation validity | raters | κ (agreement) |",
        "|---|---|---|---|---|---|",
    ]
    for s in result.arms.values():
        out.append(
            f"| {s.arm} | {s.answered}/{s.n} | {_interval(s.correctness)} | "
            f"{_interval(s.citation_validity)} | {', '.join(s.raters) or 'none'} | {_kappa(s)} |"
        )
    out += ["", "### Citations", ""]
    out += [
        "| arm | valid | fabricated | stale | unsupported | uncited answers | missing answers |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in result.arms.values():
        c = s.citations
        out.append(
            f"| {s.arm} | {c['valid']} | {c['fabricated']} | {c['stale']} | "
            f"{c['unsupported']} | {s.uncited} | {s.missing} |"
        )
    split = [line for s in result.arms.values() if (line := fabricated_words(s.arm, s.citations))]
    if split:
        out += ["", *split]
    out += ["", "### By question kind", ""]
    header = (
        "| kind | n | "
        + " | ".join(f"{s.arm} correct | {s.arm} cited validly" for s in result.arms.values())
        + " |"
    )
    out += [header, "|---|---|" + "---|---|" * len(result.arms)]
    first = next(iter(result.arms.values()))
    for kind in KINDS:
        if kind not in first.by_kind:
            continue
        row = f"| {kind} | {first.by_kind[kind]['n']} |"
        for s in result.arms.values():
            k = s.by_kind[kind]
            row += f" {k['correct']}/{k['n']} | {k['citation_valid']}/{k['n']} |"
        out.append(row)
    out += ["", "### By question", ""]
    out += question_table(result)
    out += [f"![{_picture_words(result)}]({picture_name})", ""]
    for comparison in result.comparisons:
        out += _comparison_section(comparison, result)
    out += _how_to_read(result)
    return "\n".join(out) + "\n"


def _unchecked(result: ScoreResult) -> str:
    repos = getattr(result, "unchecked_repos", ())
    if not repos:
        return ""
    return (
        f"; **it was sealed --unchecked: its sources in {', '.join(repos)} were never "
        "checked at as_of**"
    )


def _sources_section(result: ScoreResult) -> list[str]:
    """Where each arm's correctness came from, when a judge was named (#14)."""
    if not result.correctness_from:
        return []
    out = ["", "### Where correctness comes from", ""]
    out += [f"- **{arm}**: {words}" for arm, words in result.correctness_from.items()]
    return out


def _custody(result: ScoreResult) -> str:
    from flightdeck.holdouts.custody import Custody, describe_custody

    told = result.custody or Custody("no-manifest", None, None)
    words = describe_custody(told, manifest_path(result.params.holdouts))
    words = words if told.state in ("sealed", "void") else f"**{words}**"
    return words + _holdouts_elsewhere(result)


def _holdouts_elsewhere(result: ScoreResult) -> str:
    """(#25) --holdouts named another folder than params.yaml: say so, with the reason."""
    from flightdeck.holdouts.custody import describe_void, void_in_params_holdouts

    params = result.params
    if not params.holdouts_elsewhere:
        return ""
    evidence = void_in_params_holdouts(params, result.suite)
    void = "" if evidence is None else f", which marks this suite void ({describe_void(evidence)})"
    reason = params.holdouts_reason or "none given"
    return (
        f" **Scored with --holdouts {params.holdouts}, not params.yaml's "
        f"{params.holdouts_in_params}{void}; reason: {reason}.**"
    )


def _verdict(c: Comparison) -> list[str]:
    """The decision first, with its direction: what a sceptic reads before any table."""
    return [f"**{verdict_line(c)}**", ""]


def _picture_words(result: ScoreResult) -> str:
    """The image's alt text: what it shows, and the verdict for a reader who cannot see it."""
    words = "each arm's intervals and the paired differences against the threshold"
    return "; ".join([words, *(verdict_line(c) for c in result.comparisons)]).rstrip(".")


def _how_to_read(result: ScoreResult) -> list[str]:
    return [
        "## How to read this",
        "",
        "- **Correct**: the majority of the raters marked the answer correct (every required "
        "fact present); a tie counts as incorrect, and an unanswered question counts as "
        "incorrect.",
        "- **Citation-valid**: the answer cites at least one source and every citation is "
        "valid; an unanswered or uncited answer is not citation-valid.",
        "- Each citation is exactly one of, in this order: **fabricated** (not one of the "
        "question's valid sources in the sealed key: the file may exist, but it is not what "
        "supports the answer; the line under the citations table says how many cite a file "
        "that exists at `as_of` and how many one that does not), **stale** (a valid source, "
        "but the content the arm saw differs from the file at the question's `as_of` "
        "commit), **unsupported** (a rater marked the cited span as not supporting the "
        "claim), **valid**.",
        "- κ is Cohen's kappa between the first two raters over the answers both rated; "
        "percent agreement is beside it.",
        "- **By question** lists each arm's majority, its votes and its citations' classes; "
        f"`results/{result.suite}/` has the same per question, with each citation's uri.",
        "",
    ]


def _interval(p: Any) -> str:
    return f"{_pct(p.value)} [{_pct(p.lo)}, {_pct(p.hi)}]"


def _kappa(s: ArmScore) -> str:
    k = s.kappa
    if k.value is None:
        agreement = "" if k.agreement is None else f" (agreement {_pct(k.agreement)})"
        return f"{k.reason}{agreement}"
    return f"{k.value:.2f} (agreement {_pct(k.agreement or 0.0)}, {k.n} items)"


def _comparison_section(c: Comparison, result: ScoreResult) -> list[str]:
    baselines = len({other.baseline for other in result.comparisons})
    return comparison_lines(c, result.n, result.params, baselines=baselines)


def write_picture(result: ScoreResult, path: Path) -> None:
    """A static SVG: the verdict, each arm's Wilson intervals, the paired differences."""
    from flightdeck.scoring.picture import result_picture

    atomic_write(path, result_picture(result))


# --- the terminal ---------------------------------------------------------------------------


def score_lines(result: ScoreResult) -> list[str]:
    """What ``knowledge score`` prints: each arm's provenance and rates, each comparison."""
    lines = [f"suite {result.suite}: {result.n} questions"]
    lines += [meta_lines(s)[0].replace("**", "") for s in result.arms.values()]
    lines += [f"{arm}: correctness from {words}" for arm, words in result.correctness_from.items()]
    for s in result.arms.values():
        c = s.citations
        lines.append(
            f"{s.arm}: correctness {_interval(s.correctness)}, citation validity "
            f"{_interval(s.citation_validity)}; citations valid {c['valid']}, fabricated "
            f"{c['fabricated']}, stale {c['stale']}, unsupported {c['unsupported']}; "
            f"uncited {s.uncited}, missing {s.missing}; kappa {_kappa(s)}"
        )
    for comp in result.comparisons:
        for mc in comp.metrics.values():
            lines.append(
                f"{comp.candidate} - {comp.baseline}, {mc.metric}: {points(mc.diff)} points "
                f"[{points(mc.lo, 'down')}, {points(mc.hi, 'up')}]; "
                f"{counted(mc.candidate_only, 'question')} only the candidate got right, "
                f"{mc.baseline_only} only the baseline"
            )
            lines.append(f"  {mc.statement}")
    return lines


def gate_lines(result: GateResult) -> list[str]:
    """What ``knowledge gate`` prints: each metric's decision bound against the margin, the verdict.

    The bound is the rule in force (params ``decision``), with its level and, when known, its
    false-pass rate at this n; Tango's score bound is beside it, and a note says when it alone
    would read the other way.
    """
    lines = [f"{arm}: correctness from {words}" for arm, words in result.correctness_from.items()]
    for m, mc in result.comparison.metrics.items():
        d = result.decisions[m]
        verdict = "FAIL" if m in result.failed else "ok"
        size = "" if d.shown.size is None else f", false pass <= {100 * d.shown.size:.2f}%"
        lines.append(
            f"{verdict:4} {m}: {result.candidate} - {result.pinned} = {points(mc.diff)} points, "
            f"{d.rule} bound {points(d.shown.bound, 'down')} (must be >= "
            f"-{result.margin:g}; level {100 * d.shown.level:.2f}%{size} at n = {d.n}); "
            f"Tango score bound {points(d.tango.lo, 'down')}"
        )
        if (d.tango.lo >= -result.margin / 100) != d.shown.holds:
            alone = "fail" if d.shown.holds else "pass"
            lines.append(f"     note: Tango's 95% bound alone would {alone} {m}")
    if result.passed:
        lines.append(
            f"gate passed: {result.candidate} is shown to be at most {result.margin:g} "
            f"points worse than {result.pinned} on every metric"
        )
    else:
        lines.append(
            f"gate failed on {', '.join(result.failed)}: {result.candidate} may be more "
            f"than {result.margin:g} points worse than {result.pinned}"
        )
        if result.note:
            lines.append(f"note: {result.note}")
    return lines
