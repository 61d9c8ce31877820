"""Options shared by several commands, as decorators."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from flightdeck.project import Project, Suite

F = TypeVar("F", bound=Callable[..., Any])


def suite_argument(func: F) -> F:
    """The SUITE argument: a suite folder such as suites/knowledge-demo-v1."""
    return click.argument("suite", type=click.Path(file_okay=False, path_type=Path))(func)


def workspace_option(func: F) -> F:
    """--workspace: a built-in harness's read-only <repo>/<path> folder (FLIGHTDECK_WORKSPACE)."""
    return click.option(
        "--workspace",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        envvar="FLIGHTDECK_WORKSPACE",
        required=True,
        help="Folder of <repo>/<path> files to search [env: FLIGHTDECK_WORKSPACE].",
    )(func)


def question_option(func: F) -> F:
    """--question: a built-in harness asked one question by hand, instead of its task."""
    return click.option(
        "--question",
        default=None,
        help="Ask this instead of reading the task from FLIGHTDECK_TASK or stdin.",
    )(func)


def params_file_option(func: F) -> F:
    """--params: where params.yaml is."""
    return click.option(
        "--params",
        "params_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="params.yaml to read (default: ./params.yaml when present).",
    )(func)


def report_path_option(func: F) -> F:
    """--report: where the markdown report is (score writes it, show reads it)."""
    return click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Markdown report [reports/<suite>.md].",
    )(func)


def params_options(func: F) -> F:
    """--params and --repo: where params.yaml is, and repository locations by name."""
    func = click.option(
        "--repo",
        "repo",
        multiple=True,
        metavar="NAME=PATH",
        help="Where repository NAME is (a clone or a git bundle); overrides params.yaml.",
    )(func)
    return params_file_option(func)


def json_option(func: F) -> F:
    """--json: machine-readable output on stdout."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print JSON for machines instead of text."
    )(func)


def stats_options(func: F) -> F:
    """The params.yaml values a flag may override for one run."""
    options = [
        click.option("--seed", type=int, default=None, help="Bootstrap seed [params: seed, 0]."),
        click.option(
            "--resamples", type=int, default=None, help="Bootstrap resamples [params: 10000]."
        ),
        click.option(
            "--confidence", type=float, default=None, help="Interval level [params: 0.95]."
        ),
        click.option(
            "--threshold", type=float, default=None, help="Decision threshold, points [15]."
        ),
        click.option("--min-raters", type=int, default=None, help="Raters per answer [2]."),
        click.option(
            "--holdouts",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Holdouts folder whose manifest may mark the suite void [params: holdouts/].",
        ),
        click.option(
            "--holdouts-reason",
            default=None,
            metavar="TEXT",
            help="Why --holdouts names another folder than params.yaml; needed to score a suite "
            "that params' holdouts mark void, and printed in the report.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def open_project(
    params_file: Path | None, repo: tuple[str, ...], *, near: Path | None = None, **overrides: Any
) -> Project:
    """The project: params.yaml with flags laid over it (a flag left unset keeps its value).

    ``near`` is the suite folder: without ./params.yaml, the nearest one above it is used.
    Warnings about params.yaml (unknown keys) go to stderr.
    """
    from flightdeck.project import Project

    project = Project.open(params_file, near=near, repos=repo, **overrides)
    for warning in project.params.warnings:
        click.echo(f"warning: {warning}", err=True)
    return project


def warn_if_unsealed(suite: Suite) -> None:
    """Say on stderr that answers to an unsealed suite cannot be scored until it is sealed.

    Only a warning: answers may be built first. The refusal of a *changed* sealed suite is
    the core's (``SuiteFolder.require_intact``), so Python callers get it too.
    """
    if suite.root.is_dir() and not suite.folder.is_sealed:
        click.echo(
            f"warning: {suite.root} is not sealed; answers to an unsealed suite cannot be scored "
            "until it is",
            err=True,
        )
