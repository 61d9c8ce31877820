"""Options shared by several commands, as decorators."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def suite_argument(func: F) -> F:
    """The SUITE argument: a suite folder such as suites/knowledge-demo-v1."""
    return click.argument("suite", type=click.Path(file_okay=False, path_type=Path))(func)


def params_file_option(func: F) -> F:
    """--params: where params.yaml is."""
    return click.option(
        "--params",
        "params_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="params.yaml to read (default: ./params.yaml when present).",
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
    ]
    for option in reversed(options):
        func = option(func)
    return func


def load_params_from_cli(
    params_file: Path | None, repo: tuple[str, ...], *, near: Path | None = None, **overrides: Any
) -> Any:
    """params.yaml with flags laid over it (a flag left unset keeps the file's value).

    ``near`` is the suite folder: without ./params.yaml, the nearest one above it is used.
    """
    from flightdeck.params import load_params, parse_repo_option

    params = load_params(params_file, near=near)
    for warning in params.warnings:
        click.echo(f"warning: {warning}", err=True)
    return params.with_overrides(repos=parse_repo_option(repo), **overrides)


def check_seal(suite: Path) -> None:
    """Refuse a sealed suite whose sealed files changed; warn on stderr if it is not sealed.

    Answers may be built before a suite is sealed (they cannot be scored until it is), so
    an unsealed suite is a warning, not an error. A missing folder is left to the command.
    """
    from flightdeck.project import SuitePaths, open_suite, verify_sealed

    if not suite.is_dir():
        return
    if SuitePaths(suite).manifest.is_file():
        verify_sealed(open_suite(suite))
    else:
        click.echo(
            f"warning: {suite} is not sealed; answers to an unsealed suite cannot be scored "
            "until it is",
            err=True,
        )
