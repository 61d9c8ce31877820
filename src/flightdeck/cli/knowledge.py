"""`flightdeck knowledge …`: seal, status, score and gate a suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from flightdeck.cli._options import (
    json_option,
    open_project,
    params_options,
    report_path_option,
    stats_options,
    suite_argument,
)


@click.group()
def knowledge() -> None:
    """The knowledge task: a sealed gold set of questions about your repositories.

    \b
    Example:
        flightdeck knowledge seal suites/knowledge-demo-v1 --holdouts holdouts
        flightdeck knowledge status suites/knowledge-demo-v1
    """


@knowledge.command("seal")
@suite_argument
@click.option(
    "--holdouts",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Register the suite's canaries in DIR/manifest.json [params: holdouts, holdouts/].",
)
@click.option(
    "--unchecked",
    is_flag=True,
    help="Seal although a repository of as_of is not at hand; the manifest records which.",
)
@params_options
def seal_command(
    suite: Path,
    holdouts: Path | None,
    unchecked: bool,
    params_file: Path | None,
    repo: tuple[str, ...],
) -> None:
    """Validate a suite, give each key a canary, and write manifest.json.

    Every valid source is checked to exist at its question's as_of commit with the
    recorded sha256, in each repository at hand. The canaries join the holdouts manifest
    (params `holdouts`, or --holdouts; seal is the one command that creates that folder).
    Sealing an intact, registered suite again does nothing and exits 0; a changed question
    is a new suite version, never an edit.

    \b
    Example:
        flightdeck knowledge seal suites/knowledge-gold-v1 --holdouts holdouts
    """
    from flightdeck.tasks.knowledge import seal

    project = open_project(params_file, repo, near=suite, holdouts=holdouts)
    holdouts = project.holdouts
    result = seal(project.at(suite), repos=project.repos, holdouts=holdouts, unchecked=unchecked)
    if result.unchecked_repos:
        click.echo(
            "warning: sealed --unchecked: sources not checked in repositories not at hand: "
            f"{', '.join(result.unchecked_repos)} (recorded in manifest.json)",
            err=True,
        )
    if result.already:
        click.echo(
            f"{result.suite} is already sealed, intact and registered in "
            f"{holdouts / 'manifest.json'}; nothing to do"
        )
        return
    if result.registered_only:
        click.echo(
            f"{result.suite} was already sealed and intact; registered its canaries in "
            f"{holdouts / 'manifest.json' if holdouts else '?'}"
        )
        return
    click.echo(
        f"sealed {result.suite}: {result.questions} questions, "
        f"{result.checked_sources} sources checked at as_of; wrote {suite / 'manifest.json'}"
    )
    if holdouts is not None:
        click.echo(f"canaries registered in {holdouts / 'manifest.json'}")


@knowledge.command("check")
@suite_argument
@params_options
@click.pass_context
def check_command(
    ctx: click.Context, suite: Path, params_file: Path | None, repo: tuple[str, ...]
) -> None:
    """Run every check of seal and list every problem; write nothing (sealing is for good).

    One line per problem, in file and line order, at most 50. Exit 0 when the suite would
    seal, 2 when there is a problem.

    \b
    Example:
        flightdeck knowledge check suites/knowledge-gold-v1
        flightdeck knowledge check suites/knowledge-gold-v1 --repo sdlc=../sdlc
    """
    from flightdeck.tasks.knowledge import check

    project = open_project(params_file, repo, near=suite)
    problems = check(project.at(suite), repos=project.repos)
    for problem in problems[:CHECK_LIMIT]:
        click.echo(f"error: {problem}", err=True)
    if len(problems) > CHECK_LIMIT:
        click.echo(f"error: ... and {len(problems) - CHECK_LIMIT} more problems", err=True)
    if problems:
        ctx.exit(2)
    if (suite / "manifest.json").exists():
        click.echo(f"{suite}: every seal check passes; it is sealed and its files are intact")
        return
    click.echo(f"{suite}: every seal check passes; seal it with `flightdeck knowledge seal`")


CHECK_LIMIT = 50


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
@click.pass_context
def status_command(
    ctx: click.Context,
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
    import dataclasses

    from flightdeck.tasks.knowledge import status

    project = open_project(params_file, repo, near=suite, holdouts=holdouts, min_raters=min_raters)
    params = project.params
    st = status(project.at(suite), params=params)
    if as_json:
        data = dataclasses.asdict(st)
        if data.get("custody"):
            data["custody"].pop("evidence", None)  # the same as "void", printed once
        data["ready"] = st.ready
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        ctx.exit(0 if st.ready else 1)

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
            words = describe_custody(st.custody, params.holdouts / "manifest.json")
            click.echo(f"{mark(st.custody.last_scan is not None)}{words}")
    else:
        click.echo(
            f"{mark(False)}not registered in {params.holdouts / 'manifest.json'}: a leaked key "
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
        ctx.exit(1)


SCORED_WORDS = {
    "never": "not yet scored",
    "scored": "scored",
    "changed since scored": "changed since scored",
}


def _evidence(evidence: dict[str, Any]) -> str:
    from flightdeck.tasks.knowledge import describe_void

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
@stats_options
@params_options
def score_command(
    suite: Path,
    arms: tuple[str, ...],
    baseline: str | None,
    candidate: str | None,
    json_path: Path | None,
    report_path: Path | None,
    results_dir: Path | None,
    judge: str | None,
    params_file: Path | None,
    repo: tuple[str, ...],
    **overrides: Any,
) -> None:
    """Score arms on a sealed suite, compare two, and write metrics and the report.

    Refuses a suite whose files changed since sealing, a void suite, and an arm whose
    answers changed after it was first scored (that is a new arm name). Without --arm,
    params.yaml `arms` are scored; without --baseline/--candidate, params.yaml
    `baseline`/`candidate` are compared when both are scored.

    \b
    Example:
        flightdeck knowledge score suites/knowledge-gold-v1 \\
            --arm baseline-repo-search --arm baseline-projects \\
            --baseline baseline-repo-search --candidate baseline-projects
    """
    from flightdeck.scoring.report import score_lines
    from flightdeck.tasks.knowledge import score

    project = open_project(params_file, repo, near=suite, judge=judge, **overrides)
    params = project.params
    result = score(
        project.at(suite),
        list(arms or params.arms),
        params=params,
        baseline=baseline,
        candidate=candidate,
        metrics=json_path,
        report=report_path,
        results_dir=results_dir,
    )
    if result.holdouts != "sealed":
        click.echo(
            f"warning: {result.suite} is not registered in {params.holdouts / 'manifest.json'}; "
            "a leaked key would go unnoticed (seal with --holdouts)",
            err=True,
        )
    for line in score_lines(result):
        click.echo(line)
    written = result.written
    click.echo(f"wrote {written['metrics']}, {written['report']}, {written['picture']}")


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
    from flightdeck.scoring.report import gate_json, gate_lines
    from flightdeck.tasks.knowledge import gate

    project = open_project(
        params_file, repo, near=suite, gate_margin=gate_margin, judge=judge, **overrides
    )
    result = gate(project.at(suite), pinned=pinned, candidate=candidate, params=project.params)
    if as_json:
        click.echo(json.dumps(gate_json(result), indent=2, sort_keys=True))
    else:
        for line in gate_lines(result):
            click.echo(line)
    if not result.passed:
        click.get_current_context().exit(1)


def _attach() -> None:
    """Commands that live in their own modules but belong to the knowledge group."""
    from flightdeck.cli.judge import calibrate_command, judge_command
    from flightdeck.cli.knowledge_import import import_answers_command
    from flightdeck.cli.knowledge_new import new_command
    from flightdeck.cli.knowledge_show import show_command
    from flightdeck.cli.rating import agreement_command, rate_command

    knowledge.add_command(import_answers_command)
    knowledge.add_command(rate_command)
    knowledge.add_command(agreement_command)
    knowledge.add_command(judge_command)
    knowledge.add_command(calibrate_command)
    knowledge.add_command(new_command)
    knowledge.add_command(show_command)


_attach()
