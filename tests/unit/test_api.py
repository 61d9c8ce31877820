"""The public Python API: ``flightdeck.score`` does all that ``knowledge score`` does.

It loads lazily, so ``import flightdeck`` (and ``flightdeck --help``) stays light.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject

from flightdeck.cli import cli
from flightdeck.files.jsonl import sha256_file

HEAVY = {"numpy", "scipy", "polars", "dvc", "yaml", "msgspec", "flightdeck.tasks.scoring"}


def test_import_flightdeck_loads_nothing_heavy() -> None:
    code = (
        "import sys, flightdeck\n"
        f"print(sorted(set({sorted(HEAVY)!r}) & set(sys.modules)))\n"
        "score = flightdeck.score\n"
        "print(score.__module__, 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.splitlines()
    assert before == "[]"
    assert after == "flightdeck.project.results False"  # the facade's; numpy waits for a score


def test_an_unknown_name_is_an_attribute_error() -> None:
    import flightdeck

    with pytest.raises(AttributeError, match="^module 'flightdeck' has no attribute 'scroe'$"):
        flightdeck.scroe  # type: ignore[attr-defined]  # noqa: B018


def test_score_from_python_writes_what_the_command_writes(project: BuiltProject) -> None:
    import flightdeck

    runner = CliRunner()
    sealed = runner.invoke(cli, ["knowledge", "seal", str(project.suite), "--holdouts", "holdouts"])
    assert sealed.exit_code == 0, sealed.output
    project.write_arm("a@2026-12", [True, True, False])
    result = flightdeck.score(str(project.suite), ["a@2026-12"])  # params from ./params.yaml
    root = project.root.resolve()
    assert {k: v.resolve() for k, v in result.written.items()} == {
        "results:a@2026-12": root / "results" / "demo-v1" / "a@2026-12.jsonl",
        "metrics": root / "metrics" / "demo-v1.json",
        "picture": root / "reports" / "demo-v1.svg",
        "report": root / "reports" / "demo-v1.md",
    }
    assert result.recorded == ("a@2026-12",)
    (line,) = (project.suite / "scores.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["arm"] == "a@2026-12"
    assert record["answers_sha256"] == sha256_file(project.suite / "answers" / "a@2026-12.jsonl")
    metrics = json.loads((root / "metrics" / "demo-v1.json").read_text())
    assert metrics["arms"]["a@2026-12"]["answered"] == 3
    python_bytes = {p: p.read_bytes() for p in result.written.values()}

    # The command computes and writes the same bytes, and records nothing new.
    again = runner.invoke(cli, ["knowledge", "score", str(project.suite), "--arm", "a@2026-12"])
    assert again.exit_code == 0, again.output
    assert {p: p.read_bytes() for p in result.written.values()} == python_bytes
    assert len((project.suite / "scores.jsonl").read_text().splitlines()) == 1
    with (root / "params.yaml").open("a") as f:
        f.write("arms: [a@2026-12]\n")
    # Without arms, the ones params.yaml names; nothing new for the ledger.
    again_from_python = flightdeck.score(project.suite)
    assert list(again_from_python.arms) == ["a@2026-12"]
    assert again_from_python.recorded == ()


def test_a_dry_run_arm_is_scored_only_when_asked(project: BuiltProject) -> None:
    """``dry_runs=DryRuns.ALLOW`` is ``--allow-dry-run``: refused without it, scored with it."""
    import flightdeck
    from flightdeck.errors import InputError

    runner = CliRunner()
    sealed = runner.invoke(cli, ["knowledge", "seal", str(project.suite), "--holdouts", "holdouts"])
    assert sealed.exit_code == 0, sealed.output
    project.write_arm("dry", [True, False])
    meta = project.write_meta("dry", dry_run=True)
    with pytest.raises(InputError, match="arm 'dry' is a dry run .* pass --allow-dry-run") as e:
        flightdeck.score(project.suite, ["dry"])
    assert e.value.path == str(meta)
    assert not (project.root / "metrics").exists()
    result = flightdeck.score(project.suite, ["dry"], dry_runs=flightdeck.DryRuns.ALLOW)
    assert result.arms["dry"].answered == 2
    assert result.recorded == ("dry",)
