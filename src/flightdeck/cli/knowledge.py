"""`flightdeck knowledge …`: the group, and status, score, gate and show on a sealed suite.

The group's other commands live beside it by concern and are attached at the end: authoring
(new, check, seal), import-answers, rating (rate, agreement) and judging (judge, calibrate).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flightdeck.cli._options import (
    json_option,
    open_project,
    params_file_option,
    params_options,
    report_path_option,
    stats_options,
    suite_argument,
)
from flightdeck.cli.lazy import LazyCommands
from flightdeck.errors import NegativeVerdict

if TYPE_CHECKING:
    from flightdeck.holdouts.manifest_format import Evidence

# Commands that live in their own modules but belong to this group, imported when they run
ATTACHED = {
    "seal": "flightdeck.cli.authoring:seal_command",
    "check": "flightdeck.cli.authoring:check_command",
    "new": "flightdeck.cli.authoring:new_command",
    "import-answers": "flightdeck.cli.knowledge_import:import_answers_command",
    "rate": "flightdeck.cli.rating:rate_command",
    "agreement": "flightdeck.cli.rating:agreement_command",
    "judge": "flightdeck.cli.judge:judge_command",
    "calibrate": "flightdeck.cli.judge:calibrate_command",
}


@click.group(commands=LazyCommands(ATTACHED))
def knowledge() -> None:
    """The knowledge task: a sealed gold set of questions about your repositories.

    \b
    Example:
        flightdeck knowledge seal suites/knowledge-demo-v1 --holdouts holdouts
        flightdeck knowledge status suites/knowledge-demo-v1
    """


@knowledge.command("status")
@suite_argument
@click.option(
    "--holdouts",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Holdouts folder [params: holdouts/].",
)
@click.option("--min-raters", type=int, default=None, help="Raters per answer [2].")
@params_options
@json_option
def status_command(
    suite: Path,
    holdouts: Path | None,
    min_raters: int | None,
    params_file: Path | None,
    repo: tuple[str, ...],
    as_json: bool,
) -> None:
    """Show whether a suite is sealed and intact, and each arm's files, before scoring.

    Exit 0 when the suite is ready to score (only the arms params.yaml scores count, when
    it names them), 1 when it is not or is void.

    \b
    Example:
        flightdeck knowledge status suites/knowledge-demo-v1
        flightdeck knowledge status suites/knowledge-demo-v1 --json
    """
    project = open_project(params_file, repo, near=suite, holdouts=holdouts, min_raters=min_raters)
    params = project.params
    st = project.suite(suite).status()
    if as_json:
        import msgspec

        data = msgspec.to_builtins(st)  # its dataclasses and the manifest's Structs
        if data.get("custody"):
            data["custody"].pop("evidence", None)  # the same as "void", printed once
        data["ready"] = st.ready
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        if not st.ready:
            raise NegativeVerdict()
        return

    def mark(ok: bool) -> str:
        return "ok " if ok else "!! "

    click.echo(f"suite {st.suite}: {st.questions} questions")
    if not st.sealed:
        click.echo(f"{mark(False)}not sealed: run `flightdeck knowledge seal {suite}`")
    elif st.changed:
        click.echo(
            f"{mark(False)}sealed {st.sealed_at}, but changed since: {', '.join(st.changed)}"
        )
    else:
        click.echo(f"{mark(True)}sealed {st.sealed_at}, files match manifest.json")
    if st.unchecked_repos:
        click.echo(
            f"{mark(False)}sealed --unchecked: its sources in {', '.join(st.unchecked_repos)} "
            "were never checked at as_of"
        )
    if st.void is not None:
        click.echo(f"{mark(False)}VOID: a canary leaked ({_evidence(st.void)})")
    elif st.holdouts == "sealed":
        from flightdeck.holdouts.custody import describe_custody

        click.echo(f"{mark(True)}not void (canaries registered for the scan)")
        if st.custody is not None:
            words = describe_custody(st.custody, project.holdouts_manifest)
            click.echo(f"{mark(st.custody.last_scan is not None)}{words}")
    else:
        click.echo(
            f"{mark(False)}not registered in {project.holdouts_manifest}: a leaked key "
            "would go unnoticed (seal with --holdouts)"
        )
    if not st.arms:
        click.echo("no arms yet: no answers/<arm>.jsonl")
    for a in st.arms:
        raters = ", ".join(a.raters) if a.raters else "none"
        problems = []
        if a.answers < st.questions:
            problems.append(f"{st.questions - a.answers} unanswered")
        if not a.meta:
            problems.append("meta missing")
        if a.short_of_raters:
            problems.append(f"{a.short_of_raters} answers short of {params.min_raters} raters")
        if a.scored == "changed since scored":
            problems.append("answers changed since scored: use a new arm name")
        ok = a.ok
        if st.scoring and a.arm not in st.scoring:
            problems.append("not in params arms: not needed to score")
        click.echo(
            f"{mark(ok)}{a.arm}: answers {a.answers}/{st.questions}, "
            f"meta {'present' if a.meta else 'missing'}, labels {a.labels} by {raters}, "
            f"{SCORED_WORDS[a.scored]}" + (f" — {'; '.join(problems)}" if problems else "")
        )
    click.echo("ready to score" if st.ready else "not ready to score")
    if not st.ready:
        raise NegativeVerdict()


SCORED_WORDS = {
    "never": "not yet scored",
    "scored": "scored",
    "changed since scored": "changed since scored",
}


def _evidence(evidence: Evidence) -> str:
    from flightdeck.holdouts.custody import describe_void

    return describe_void(evidence)


@knowledge.command("score")
@suite_argument
@click.option("--arm", "arms", multiple=True, help="Arm to score (repeat) [params: arms].")
@click.option("--baseline", default=None, help="Arm that the candidate is compared against.")
@click.option("--candidate", default=None, help="Arm compared with the baseline.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Metrics JSON [metrics/<suite>.json].",
)
@report_path_option
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Per-question results folder [results/<suite>/].",
)
@click.option(
    "--judge",
    default=None,
    help="Take unrated arms' correctness from this calibrated judge [params: judge].",
)
@click.option(
    "--allow-dry-run",
    is_flag=True,
    help="Score arms answered by a dry run (--model mockllm/model), to check the pipeline.",
)
@stats_options
@params_options
def score_command(
    *,
    suite: Path,
    arms: tuple[str, ...],
    baseline: str | None,
    candidate: str | None,
    json_path: Path | None,
    report_path: Path | None,
    results_dir: Path | None,
    judge: str | None,
    allow_dry_run: bool,
    params_file: Path | None,
    repo: tuple[str, ...],
    **overrides: Any,
) -> None:
    """Score arms on a sealed suite, compare two, and write metrics and the report.

    Refuses a suite whose files changed since sealing, a void suite, an arm whose
    answers changed after it was first scored (that is a new arm name), and an arm answered
    by a dry run (--model mockllm/model) unless --allow-dry-run. Without --arm,
    params.yaml `arms` are scored; without --baseline/--candidate, params.yaml
    `baseline`/`candidate` are compared when both are scored.

    \b
    Example:
        flightdeck knowledge score suites/knowledge-gold-v1 \\
            --arm baseline-repo-search --arm baseline-projects \\
            --baseline baseline-repo-search --candidate baseline-projects
    """
    from flightdeck.project.modes import DryRuns
    from flightdeck.scoring.report import score_lines

    project = open_project(params_file, repo, near=suite, judge=judge, **overrides)
    scoring = project.suite(suite)
    result = scoring.score(
        arms=arms or None,
        baseline=baseline,
        candidate=candidate,
        metrics=json_path,
        report=report_path,
        results_dir=results_dir,
        dry_runs=DryRuns.ALLOW if allow_dry_run else DryRuns.REFUSE,
    )
    if result.holdouts != "sealed":
        click.echo(
            f"warning: {result.suite} is not registered in {project.holdouts_manifest}; "
            "a leaked key would go unnoticed (seal with --holdouts)",
            err=True,
        )
    for line in score_lines(result):
        click.echo(line)
    written = result.written
    click.echo(f"wrote {written['metrics']}, {written['report']}, {written['picture']}")
    if result.scratch:  # (#21) nothing the pipeline tracks was written
        results = sorted(
            {str(path.parent) for kind, path in written.items() if kind.startswith("results:")}
        )
        click.echo(
            f"scratch score: {', '.join(result.scratch)} not in the pipeline; results in "
            f"{', '.join(results)}, ledger lines in {scoring.folder.scratch_ledger}"
        )


@knowledge.command("gate")
@suite_argument
@click.option(
    "--pinned", default=None, help="The arm the candidate must not fall behind [params: pinned]."
)
@click.option("--candidate", default=None, help="The arm under test [params: candidate].")
@click.option(
    "--gate-margin",
    type=float,
    default=None,
    help="Allowed loss in points [params: gate_margin, 10].",
)
@click.option(
    "--judge",
    default=None,
    help="Take unrated arms' correctness from this calibrated judge [params: judge].",
)
@stats_options
@params_options
@json_option
def gate_command(
    *,
    suite: Path,
    pinned: str | None,
    candidate: str | None,
    gate_margin: float | None,
    judge: str | None,
    params_file: Path | None,
    repo: tuple[str, ...],
    as_json: bool,
    **overrides: Any,
) -> None:
    """The regression gate: fail (exit 1) when the candidate may be worse than the margin.

    Passes when, on each metric, candidate - pinned is shown to be at least -gate_margin
    points by the rule in force (params decision: calibrated, a false pass at most 2.5% at
    the suite's n). `dvc metrics diff` shows movement; this is what fails CI. Without
    --pinned/--candidate, params.yaml `pinned`/`candidate` name the arms.

    \b
    Example:
        flightdeck knowledge gate suites/knowledge-gold-v1 \\
            --pinned baseline-repo-search --candidate retrieval
    """
    from flightdeck.scoring.metrics import gate_json
    from flightdeck.scoring.report import gate_lines

    project = open_project(
        params_file, repo, near=suite, gate_margin=gate_margin, judge=judge, **overrides
    )
    result = project.suite(suite).gate(pinned=pinned, candidate=candidate)
    if as_json:
        click.echo(json.dumps(gate_json(result), indent=2, sort_keys=True))
    else:
        for line in gate_lines(result):
            click.echo(line)
    if not result.passed:
        raise NegativeVerdict()


@knowledge.command("show")
@click.argument("suite", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option(
    "--metrics",
    "metrics_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Metrics JSON [metrics/<suite>.json].",
)
@report_path_option
@params_file_option
@json_option
def show_command(
    suite: Path | None,
    metrics_path: Path | None,
    report_path: Path | None,
    params_file: Path | None,
    as_json: bool,
) -> None:
    """Print a scored suite's verdict and per-arm table from its metrics and report.

    Reads metrics/<suite>.json and reports/<suite>.md as the last score wrote them and
    recomputes nothing, so it shows what the pipeline produced even when every stage was
    up to date. SUITE defaults to params.yaml `suite`.

    \b
    Example:
        flightdeck knowledge show suites/knowledge-demo-v1
        flightdeck knowledge show            # the suite params.yaml names
    """
    from flightdeck.scoring.summary import render

    project = open_project(params_file, (), near=suite)
    summary = project.suite(suite).summary(metrics=metrics_path, report=report_path)
    if as_json:
        data = dataclasses.asdict(summary)
        data["metrics_path"] = summary.metrics_path.as_posix()
        data["report_path"] = summary.report_path.as_posix()
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    for line in render(summary):
        click.echo(line)
