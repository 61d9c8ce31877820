"""The root command group, and the one place that maps errors to exit codes.

Exit codes: 0 success; 1 a negative verdict (:class:`~flightdeck.errors.NegativeVerdict`);
2 bad input (:class:`~flightdeck.errors.InputError`, click usage errors); 3 a bug (any other
exception, a :class:`~flightdeck.errors.FlightdeckError` whose ``exit_code`` is 3 included:
the traceback is kept); 130 interrupted; 141 stdout closed early (``flightdeck ... | head``),
quietly. Each code is the ``exit_code`` of its class in :mod:`flightdeck.errors`.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

import click

from flightdeck.cli.lazy import LazyCommands
from flightdeck.errors import EXIT_BUG, EXIT_INTERRUPTED, FlightdeckError, NegativeVerdict
from flightdeck.version import __version__

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `yes | head`


class FlightdeckGroup(click.Group):
    """Turns every error into one `error: ...` line and its exit code.

    Click's own usage errors print several lines (usage, hint, error); the spec wants one
    line for every error, so they are caught here too and keep click's exit code 2. A group
    called without a command prints its help on stdout and exits 0. Anything that is not a
    flightdeck or click error is a bug: its traceback is printed and the exit code is 3, so it
    never reads as bad input (2) or a verdict (1).
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
        except click.exceptions.NoArgsIsHelpError as exc:
            _echo_or_quit(exc.ctx.get_help())
            sys.exit(0)
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
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            _silence_stdout()
            sys.exit(EXIT_BROKEN_PIPE)
        except Exception:  # a bug: keep the traceback, and an exit code of its own
            traceback.print_exc()
            click.echo(
                "error: flightdeck crashed: this is a bug, not bad input; please report it "
                "with the traceback above",
                err=True,
            )
            sys.exit(EXIT_BUG)
        sys.exit(code if isinstance(code, int) else 0)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except BrokenPipeError:  # `flightdeck --help | head`
            _silence_stdout()
            ctx.exit(EXIT_BROKEN_PIPE)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NegativeVerdict as exc:  # the command printed the verdict
            if exc.message:
                click.echo(exc.message, err=True)
            ctx.exit(exc.exit_code)
        except FlightdeckError as exc:
            if exc.exit_code == EXIT_BUG:  # a bug: main() keeps the traceback
                raise
            click.echo(f"error: {exc.format_message()}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:  # the reader of stdout went away: nothing left to tell it
            _silence_stdout()
            ctx.exit(EXIT_BROKEN_PIPE)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)


def _echo_or_quit(text: str) -> None:
    try:
        click.echo(text)
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(EXIT_BROKEN_PIPE)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit does not fail on the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test runner's buffer)
        pass
    finally:
        os.close(devnull)


# Each group's module is imported when its command runs (cli/lazy.py): `holdout canary-scan`
# never imports the knowledge or experiment commands.
COMMANDS = {
    "knowledge": "flightdeck.cli.knowledge:knowledge",
    "experiment": "flightdeck.cli.experiment:experiment",
    "holdout": "flightdeck.cli.holdout:holdout",
    "init": "flightdeck.cli.authoring:init_command",
}


@click.group(
    cls=FlightdeckGroup,
    commands=LazyCommands(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="flightdeck")
def cli() -> None:
    """Seal a gold set of questions, let arms answer, score them honestly.

    \b
    Example:
        flightdeck knowledge status suites/knowledge-demo-v1
        flightdeck knowledge seal suites/my-suite-v1 --holdouts holdouts
    """


def main() -> None:
    """Console-script entry point."""
    cli(auto_envvar_prefix="FLIGHTDECK", prog_name="flightdeck")
    sys.exit(0)
