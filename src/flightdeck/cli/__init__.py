"""The root command group, and the one place that maps errors to exit codes.

Exit codes: 0 success; 1 a negative verdict (canary found, gate not met); 2 bad input;
130 interrupted.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from flightdeck import __version__
from flightdeck.errors import FlightdeckError


class FlightdeckGroup(click.Group):
    """Turns a FlightdeckError into one `error: ...` line and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FlightdeckError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=FlightdeckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="flightdeck")
def cli() -> None:
    """Seal a gold set of questions, let arms answer, score them honestly.

    \b
    Example:
        flightdeck knowledge seal suites/knowledge-demo-v1 --holdouts holdouts
        flightdeck knowledge score suites/knowledge-demo-v1 --arm baseline-repo-search
    """


def _register() -> None:
    from flightdeck.cli.experiment import experiment
    from flightdeck.cli.holdout import holdout
    from flightdeck.cli.knowledge import knowledge

    cli.add_command(knowledge)
    cli.add_command(experiment)
    cli.add_command(holdout)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(auto_envvar_prefix="FLIGHTDECK", prog_name="flightdeck")
    sys.exit(0)
