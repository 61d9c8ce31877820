"""Every command has help with an Example and appears in the README; --help stays light."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from flightdeck.cli import cli

README = (Path(__file__).parents[2] / "README.md").read_text()


def commands(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        found.append((path, command))
        if isinstance(command, click.Group):
            found += commands(command, path)
    return found


ALL = commands(cli)


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_has_an_example_and_readme_mentions_it(
    path: tuple[str, ...], command: click.Command
) -> None:
    assert "Example:" in (command.help or ""), f"`flightdeck {' '.join(path)}` help has no Example"
    example = (command.help or "").partition("Example:")[2]
    # a lone backslash at a docstring line's end joins the next line into this one
    assert not re.search(r"\S {6,}--", example), (
        f"`flightdeck {' '.join(path)}` help joins two example lines (write \\\\ in the docstring)"
    )
    assert f"flightdeck {' '.join(path)}" in README, (
        f"README does not mention flightdeck {' '.join(path)}"
    )


def test_help_imports_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "from flightdeck.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='flightdeck')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = {'numpy', 'scipy', 'polars', 'dvc', 'matplotlib', 'bm25s', 'yaml', 'isal', 'zstandard'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
