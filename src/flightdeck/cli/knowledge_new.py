"""`flightdeck knowledge new`: a suite folder to start from, its repositories pinned."""

from __future__ import annotations

from pathlib import Path

import click

from flightdeck.cli._options import params_options, suite_argument


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
    from flightdeck.cli._options import open_project
    from flightdeck.suite.scaffold import new_suite, parse_as_of

    revisions = parse_as_of(as_of)
    project = open_project(params_file, repo, near=suite)
    result = new_suite(suite, revisions, repos=project.repos)
    for name, commit in result.as_of.items():
        click.echo(f"{name}: {revisions[name]} is {commit}")
    click.echo(f"wrote {', '.join(p.as_posix() for p in result.written)}")
    click.echo(
        f"next: replace the example q01 (see {suite / 'README.md'}), then "
        f"`flightdeck knowledge check {suite}`"
    )
