"""Without the ``llm`` extra a model arm is refused once, before any trial (#21).

The CLI runs in a subprocess whose import system hides inspect_ai (:data:`HIDE_INSPECT`), so
``import inspect_ai`` fails as it does where the package was never installed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import BuiltProject
from tests.cli.test_experiment import seal_suite

from flightdeck.arms.harness_needs import harness_needs, refuse_without_inspect
from flightdeck.errors import InputError
from flightdeck.models import INSPECT_MISSING

# Every path lookup goes through PathFinder, which is wrapped to find no inspect_ai.
HIDE_INSPECT = """
import importlib.machinery, runpy, sys

class HideInspect(importlib.machinery.PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] == "inspect_ai":
            return None
        return super().find_spec(name, path, target)

sys.meta_path[:] = [
    HideInspect if f is importlib.machinery.PathFinder else f for f in sys.meta_path
]
"""
RUN_CLI = HIDE_INSPECT + "runpy.run_module('flightdeck', run_name='__main__')\n"
SRC = Path(__file__).parents[2] / "src"  # this checkout's flightdeck, whatever the cwd


def without_inspect(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", code, *args]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_the_prelude_hides_inspect_as_a_missing_package(tmp_path: Path) -> None:
    done = without_inspect(HIDE_INSPECT + "import inspect_ai\n", cwd=tmp_path)
    assert "ModuleNotFoundError: No module named 'inspect_ai'" in done.stderr


@pytest.mark.parametrize(
    "program",
    [[sys.executable, "-m", "flightdeck"], ["flightdeck"]],
    ids=["python-m", "console-script"],
)
@pytest.mark.parametrize("agent", ["llm", "attached"])
def test_a_model_arm_without_inspect_is_one_line_exit_2_before_any_trial(
    project: BuiltProject, program: list[str], agent: str
) -> None:
    seal_suite(project)  # no unsealed warning: the error is all there is to say
    command = [*program, "experiment", "agent", agent, "--model", "mockllm/model"]
    done = without_inspect(
        RUN_CLI,
        *("experiment", "run", str(project.suite), "--arm", "llm-dry"),
        *("--harness", shlex.join(command)),
        cwd=project.root,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"error: --model: {INSPECT_MISSING}\n"
    assert done.stdout == ""
    assert not (project.suite / "answers" / "llm-dry.jsonl").exists()
    assert not (project.suite / "traces" / "llm-dry").exists()
    assert not (project.root / "runs" / "demo-v1" / "llm-dry.jsonl").exists()


def test_another_interpreter_is_left_to_its_own_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harness naming another interpreter has packages this process cannot see."""
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    other = tmp_path / "elsewhere" / "python"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    argv = [str(other), "-m", "flightdeck", "experiment", "agent", "llm", "--model", "mockllm/m"]
    refuse_without_inspect(harness_needs(argv), argv, str(other.parent))
    here = [sys.executable, *argv[1:]]
    with pytest.raises(InputError, match="inspect_ai is not installed"):
        refuse_without_inspect(harness_needs(here), here, str(other.parent))
