"""`flightdeck init`, `knowledge new`, `check` and `seal`: from a git repository to a sealed suite.

The authoring commands, in the order a team runs them once per suite version (init, new
and check each end by naming the next); after seal, a changed question is a new version.
"""

from __future__ import annotations

from pathlib import Path

import click

from flightdeck.cli._options import open_project, params_options, suite_argument
from flightdeck.errors import InputProblems


@click.command("init")
@click.argument(
    "folder", type=click.Path(file_okay=False, path_type=Path), default=".", required=False
)
@click.option(
    "--suite",
    default="knowledge-gold-v1",
    show_default=True,
    help="The suite params.yaml names (suites/<suite>/).",
)
@click.option("--force", is_flag=True, help="Replace files that already exist.")
@click.option("--no-dvc", is_flag=True, help="Do not run `dvc init` when .dvc/ is missing.")
@click.option(
    "--install",
    metavar="PIN",
    default=None,
    help="What CI installs: git+https://HOST/OWNER/REPO@<full commit>, or the path of a "
    "flightdeck_evals wheel committed here [the commit this flightdeck was installed from].",
)
def init_command(folder: Path, suite: str, force: bool, no_dvc: bool, install: str | None) -> None:
    """Write params.yaml, the generic dvc.yaml, a CI workflow and the folders a project needs.

    Run it in a git repository. It never overwrites a file (exit 2, naming it) unless
    --force; .gitignore entries are appended, never duplicated. A team then edits
    params.yaml only: dvc.yaml is written once. The CI workflow installs flightdeck pinned
    to one commit (or a wheel you committed), never a name from the package index.

    \b
    Example:
        flightdeck init
        flightdeck init ../team-evals --suite team-gold-v1 \\
            --install git+https://github.com/OWNER/flightdeck@<40-hex commit>
    """
    from flightdeck.project.modes import ExistingFiles
    from flightdeck.tasks.init import init_project

    existing = ExistingFiles.REPLACE if force else ExistingFiles.REFUSE
    result = init_project(folder, suite=suite, existing=existing, dvc=not no_dvc, install=install)
    for path in result.written:
        click.echo(f"wrote {(folder / path).as_posix()}")
    if result.gitignore_added:
        click.echo(
            f"added to {(folder / '.gitignore').as_posix()}: {' '.join(result.gitignore_added)}"
        )
    if result.dvc_initialised:
        click.echo("ran dvc init")
    click.echo(
        "next: name your repositories under repos: in params.yaml, then "
        f"`flightdeck knowledge new suites/{suite} --as-of <repo>=<rev>`"
    )


@click.command("new")
@suite_argument
@click.option(
    "--as-of",
    "as_of",
    multiple=True,
    required=True,
    metavar="REPO=REV",
    help="Pin repository REPO at REV (a tag, branch or short hash; repeatable).",
)
@params_options
def new_command(
    suite: Path, as_of: tuple[str, ...], params_file: Path | None, repo: tuple[str, ...]
) -> None:
    """Create a suite folder with one example question and key, and a README explaining them.

    Each REV is resolved through git to the full commit the questions pin. The example
    source has no sha256: seal computes it. An existing suite file is never overwritten.

    \b
    Example:
        flightdeck knowledge new suites/team-gold-v1 --as-of sdlc=v1.2
        flightdeck knowledge new suites/team-gold-v1 --as-of sdlc=main --as-of infra=3f2a9c1
    """
    from flightdeck.suite.scaffold import parse_as_of

    revisions = parse_as_of(as_of)
    project = open_project(params_file, repo, near=suite)
    result = project.new_suite(suite, revisions=revisions)
    for name, commit in result.as_of.items():
        click.echo(f"{name}: {revisions[name]} is {commit}")
    click.echo(f"wrote {', '.join(p.as_posix() for p in result.written)}")
    click.echo(
        f"next: replace the example q01 (see {suite / 'README.md'}), then "
        f"`flightdeck knowledge check {suite}`"
    )


@click.command("check")
@suite_argument
@params_options
def check_command(suite: Path, params_file: Path | None, repo: tuple[str, ...]) -> None:
    """Run every check of seal and list every problem; write nothing (sealing is for good).

    One line per problem, in file and line order, at most 50. Exit 0 when the suite would
    seal, 2 when there is a problem.

    \b
    Example:
        flightdeck knowledge check suites/knowledge-gold-v1
        flightdeck knowledge check suites/knowledge-gold-v1 --repo sdlc=../sdlc
    """
    project = open_project(params_file, repo, near=suite)
    checking = project.suite(suite)
    problems = checking.check()
    if problems:
        shown = [str(problem) for problem in problems[:CHECK_LIMIT]]
        if len(problems) > CHECK_LIMIT:
            shown.append(f"... and {len(problems) - CHECK_LIMIT} more problems")
        raise InputProblems(shown)
    if checking.folder.manifest.exists():
        click.echo(f"{suite}: every seal check passes; it is sealed and its files are intact")
        return
    click.echo(f"{suite}: every seal check passes; seal it with `flightdeck knowledge seal`")


CHECK_LIMIT = 50


@click.command("seal")
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
    project = open_project(params_file, repo, near=suite, holdouts=holdouts)
    holdouts = project.holdouts
    sealing = project.suite(suite)
    from flightdeck.project.modes import ReposNotAtHand

    absent = ReposNotAtHand.SKIP if unchecked else ReposNotAtHand.REFUSE
    result = sealing.seal(repos_not_at_hand=absent)
    if result.unchecked_repos:
        click.echo(
            "warning: sealed --unchecked: sources not checked in repositories not at hand: "
            f"{', '.join(result.unchecked_repos)} (recorded in manifest.json)",
            err=True,
        )
    if result.already:
        click.echo(
            f"{result.suite} is already sealed, intact and registered in "
            f"{project.holdouts_manifest}; nothing to do"
        )
        return
    if result.registered_only:
        click.echo(
            f"{result.suite} was already sealed and intact; registered its canaries in "
            f"{project.holdouts_manifest if holdouts else '?'}"
        )
        return
    click.echo(
        f"sealed {result.suite}: {result.questions} questions, "
        f"{result.checked_sources} sources checked at as_of; wrote {sealing.folder.manifest}"
    )
    if holdouts is not None:
        click.echo(f"canaries registered in {project.holdouts_manifest}")
