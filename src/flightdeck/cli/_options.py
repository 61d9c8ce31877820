"""Options shared by several commands, as decorators."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def suite_argument(func: F) -> F:
    """The SUITE argument: a suite folder such as suites/knowledge-demo-v1."""
    return click.argument(  # type: ignore[return-value]
        "suite", type=click.Path(file_okay=False, path_type=Path)
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
    return click.option(  # type: ignore[return-value]
        "--params",
        "params_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="params.yaml to read (default: ./params.yaml when present).",
    )(func)


def json_option(func: F) -> F:
    """--json: machine-readable output on stdout."""
    return click.option(  # type: ignore[return-value]
        "--json", "as_json", is_flag=True, help="Print JSON for machines instead of text."
    )(func)
