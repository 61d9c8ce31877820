"""The root command group, and the one place that maps errors to exit codes.

Exit codes: 0 success; 1 a negative verdict (canary found, gate not met); 2 bad input;
130 interrupted; 141 when the output pipe closed.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from flightdeck import __version__
from flightdeck.errors import FlightdeckError


class FlightdeckGroup(click.Group):
    """Turns every error into one `error: ...` line and its exit code.

    Click's own usage errors print several lines (usage, hint, error); the spec wants one
    line for every error, so they are caught here too and keep click's exit code 2.
    """

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else (prog_name or "flightdeck")
            message = exc.format_message().rstrip(".")
            click.echo(f"error: {where}: {message}; see `{where} --help`", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FlightdeckError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:  # `flightdeck ... | head`: the reader left; not bad input
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error
            ctx.exit(141)  # 128 + SIGPIPE, as a shell reports a writer killed by the pipe
        except OSError as exc:  # an output path that cannot be written, a full disk
            where = exc.filename or "flightdeck"
            click.echo(f"error: {where}: {exc.strerror or exc}; check the path", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=FlightdeckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="flightdeck")
def cli() -> None:
    """Seal a gold set of questions, let arms answer, score them honestly.

    \b
    Example:
        flightdeck knowledge status suites/knowledge-demo-v1
        flightdeck knowledge seal suites/my-suite-v1 --holdouts holdouts
    """


def _register() -> None:
    from flightdeck.cli.experiment import experiment
    from flightdeck.cli.holdout import holdout
    from flightdeck.cli.init import init_command
    from flightdeck.cli.knowledge import knowledge

    cli.add_command(knowledge)
    cli.add_command(experiment)
    cli.add_command(holdout)
    cli.add_command(init_command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(auto_envvar_prefix="FLIGHTDECK", prog_name="flightdeck")
    sys.exit(0)
