"""Exit codes that tell bugs from bad input, help for bare groups, quiet broken pipes.

0 success, 1 a verdict, 2 bad input (one line, no traceback), 3 a bug (traceback kept),
130 interrupted, 141 stdout closed early. Broken pipes and a dying scan worker are real
processes: click's runner has no pipe to break and no worker to kill.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject

from flightdeck.cli import EXIT_BROKEN_PIPE, cli
from flightdeck.holdouts.registry import register_suite
from flightdeck.suite.records import CANARY_PREFIX

GROUPS = [[], ["knowledge"], ["holdout"], ["experiment"], ["experiment", "agent"]]


@pytest.mark.parametrize("group", GROUPS, ids=[" ".join(g) or "flightdeck" for g in GROUPS])
def test_a_bare_group_prints_its_help_and_exits_0(runner: CliRunner, group: list[str]) -> None:
    result = runner.invoke(cli, group, prog_name="flightdeck")
    helped = runner.invoke(cli, [*group, "--help"], prog_name="flightdeck")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout == helped.stdout
    assert result.stdout.startswith(f"Usage: {' '.join(['flightdeck', *group])} [OPTIONS]")


def test_bad_input_exits_2_in_one_line(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "suites" / "nope"
    result = runner.invoke(cli, ["knowledge", "status", str(missing)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {missing}: suite folder not found; pass a folder such as suites/<suite>\n"
    )


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(RuntimeError("boom"), id="runtime-error"),
        pytest.param(KeyError("boom"), id="key-error"),
        # an OSError is not bad input unless the core says whose path is at fault
        pytest.param(PermissionError(13, "Permission denied", "/internal/boom"), id="os-error"),
    ],
)
def test_a_bug_keeps_its_traceback_and_exits_3(
    runner: CliRunner, project: BuiltProject, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr("flightdeck.tasks.knowledge.status", broken)
    result = runner.invoke(cli, ["knowledge", "status", str(project.suite)])
    assert result.exit_code == 3, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert f"{type(error).__name__}: " in result.stderr
    assert "boom" in result.stderr
    assert result.stderr.endswith(
        "error: flightdeck crashed: this is a bug, not bad input; please report it with the "
        "traceback above\n"
    )


def test_ctrl_c_exits_130(
    runner: CliRunner, project: BuiltProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("flightdeck.tasks.knowledge.status", interrupted)
    result = runner.invoke(cli, ["knowledge", "status", str(project.suite)])
    assert result.exit_code == 130
    assert result.stderr == "interrupted\n"


def run_into_closed_pipe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run flightdeck with stdout a pipe whose reader is gone (as `... | head` leaves it)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "flightdeck", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=cwd,
            check=False,
            timeout=60,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["knowledge", "status", "suites/demo-v1"], id="command-output"),
        pytest.param(["knowledge", "status", "suites/demo-v1", "--json"], id="json"),
        pytest.param(["--help"], id="root-help"),
        pytest.param(["knowledge", "score", "--help"], id="command-help"),
        pytest.param([], id="bare-group"),
    ],
)
def test_a_broken_pipe_exits_quietly(project: BuiltProject, args: list[str]) -> None:
    done = run_into_closed_pipe(args, project.root)
    assert done.stderr == b""
    assert done.returncode == EXIT_BROKEN_PIPE == 141


@pytest.mark.skipif(sys.platform != "linux", reason="scan workers fork only on Linux")
def test_a_dead_scan_worker_is_a_bug_not_bad_input(tmp_path: Path) -> None:
    holdouts = tmp_path / "holdouts"
    register_suite(
        holdouts, suite="s-v1", manifest_sha256="a" * 64, canaries={"q1": CANARY_PREFIX + "0" * 32}
    )
    traces = tmp_path / "traces"
    traces.mkdir()
    for name in ("a.log", "b.log", "c.log"):  # sparse: over a range each, so two workers get work
        with (traces / name).open("wb") as handle:
            handle.truncate(70 << 20)
    # Each worker is killed by a signal as it takes its first task, as one killed by SIGBUS
    # on a file cut short would be (the runner's public map, handed a dying task function).
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        from flightdeck.holdouts.workers import Runner
        real_map = Runner.map
        def dying(task, state):
            os.kill(os.getpid(), signal.SIGKILL)
        Runner.map = lambda self, func, tasks, stop=None: real_map(self, dying, tasks)
        sys.argv = ["flightdeck", "holdout", "canary-scan", "--holdouts", {str(holdouts)!r},
                    "--jobs", "2", {str(traces)!r}]
        from flightdeck.cli import main
        main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback (most recent call last):" in done.stderr
    assert "WorkerDiedError: a scan process died" in done.stderr
    assert "check the path" not in done.stderr


def test_an_unwritable_project_folder_is_bad_input(
    runner: CliRunner, project: BuiltProject
) -> None:
    (project.root / "runs").write_text("a file where experiment run keeps its ledgers\n")
    harness = f"{sys.executable} -c pass"
    result = runner.invoke(
        cli,
        ["experiment", "run", str(project.suite), "--arm", "a", "--harness", harness],
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith("error: runs/demo-v1: Not a directory; check the path\n")
    assert "Traceback" not in result.stderr
