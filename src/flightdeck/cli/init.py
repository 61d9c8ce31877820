"""`flightdeck init`: make a git repository a knowledge-evals project."""

from __future__ import annotations

from pathlib import Path

import click


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
def init_command(folder: Path, suite: str, force: bool, no_dvc: bool) -> None:
    """Write params.yaml, the generic dvc.yaml, a CI workflow and the folders a project needs.

    Run it in a git repository. It never overwrites a file (exit 2, naming it) unless
    --force; .gitignore entries are appended, never duplicated. A team then edits
    params.yaml only: dvc.yaml is written once.

    \b
    Example:
        flightdeck init
        flightdeck init ../team-evals --suite team-gold-v1
    """
    from flightdeck.project_init import init_project

    result = init_project(folder, suite=suite, force=force, dvc=not no_dvc)
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
