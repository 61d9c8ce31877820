"""The command groups import a subcommand's module only when it runs (cli/lazy.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from flightdeck.cli import COMMANDS, cli
from flightdeck.cli.knowledge import ATTACHED
from flightdeck.cli.lazy import LazyCommands

CLI_MODULES = {
    "flightdeck.cli.authoring",
    "flightdeck.cli.experiment",
    "flightdeck.cli.experiment_agent",
    "flightdeck.cli.experiment_llm",
    "flightdeck.cli.holdout",
    "flightdeck.cli.judge",
    "flightdeck.cli.knowledge",
    "flightdeck.cli.knowledge_import",
    "flightdeck.cli.rating",
}


def modules_after(*argv: str) -> set[str]:
    """The flightdeck.cli modules a real process imported for ``flightdeck ARGV``."""
    code = (
        "import json, sys\n"
        "from flightdeck.cli import main\n"
        f"sys.argv = ['flightdeck', *{list(argv)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('flightdeck.cli.'))),"
        " file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


def test_a_canary_scan_imports_the_holdout_group_only(tmp_path) -> None:
    (tmp_path / "holdouts").mkdir()
    trace = tmp_path / "t.log"
    trace.write_text("nothing here\n")
    loaded = modules_after("holdout", "canary-scan", "--holdouts", str(tmp_path / "h"), str(trace))
    assert loaded & CLI_MODULES == {"flightdeck.cli.holdout"}


def test_knowledge_score_leaves_the_attached_commands_unimported() -> None:
    loaded = modules_after("knowledge", "score", "--help")
    assert loaded & CLI_MODULES == {"flightdeck.cli.knowledge"}


def test_the_root_help_lists_every_command_of_every_module() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line}
    assert listed == set(COMMANDS)
    result = CliRunner().invoke(cli, ["knowledge", "--help"])
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line}
    assert set(ATTACHED) < listed


def test_an_unknown_command_still_gets_its_suggestion() -> None:
    result = CliRunner().invoke(cli, ["holdot"])
    assert result.exit_code == 2
    assert "holdout" in result.output


PROBE = "flightdeck_lazy_probe"  # a module no other test imports


def test_a_module_is_imported_when_its_command_is_looked_up_never_before(
    tmp_path, monkeypatch
) -> None:
    (tmp_path / f"{PROBE}.py").write_text(
        "import click\n\n\n@click.command('probe')\ndef probe() -> None:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    commands = LazyCommands({"probe": f"{PROBE}:probe"})
    try:
        assert "probe" in commands
        assert (list(commands), len(commands)) == (["probe"], 1)
        assert PROBE not in sys.modules
        assert commands["probe"].name == "probe"
        assert PROBE in sys.modules
    finally:
        sys.modules.pop(PROBE, None)


@pytest.mark.parametrize(
    "where",
    ["flightdeck.cli.holdout:no_such_thing", "flightdeck.cli.holdout:holdout"],
    ids=["missing attribute", "another command's name"],
)
def test_a_wrong_table_entry_is_a_loud_bug(where: str) -> None:
    commands = LazyCommands({"scan": where})
    assert "scan" in commands
    with pytest.raises(LookupError, match="is not the command 'scan'"):
        commands["scan"]
    with pytest.raises(LookupError):
        commands.get("scan")  # not a quiet None: click would report "no such command"


def test_the_mapping_holds_added_commands_and_forgets_deleted_ones() -> None:
    commands = LazyCommands({"holdout": "flightdeck.cli.holdout:holdout"})
    extra = click.Command("extra")
    commands["extra"] = extra
    assert list(commands) == ["extra", "holdout"]
    assert len(commands) == 2
    assert commands["holdout"].name == "holdout"
    del commands["holdout"]
    assert dict(commands) == {"extra": extra}
    with pytest.raises(KeyError):
        del commands["holdout"]
    assert commands.get("holdout") is None
