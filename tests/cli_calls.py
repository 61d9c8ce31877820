"""The CLI run in-process as the command tests run it, and what bad input looks like."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from flightdeck.cli import cli


def invoke(runner: CliRunner, *args: str | Path) -> Result:
    """``flightdeck ARGS...``; a crash is raised, not turned into an exit code."""
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)


def assert_error(result: Result, line: str) -> None:
    """Bad input: exit 2, exactly one stderr line, no traceback."""
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {line}\n"
    assert "Traceback" not in result.output
