"""Shared fixtures: a CLI runner, a tree builder and a small real project.

Markers (pyproject.toml) let a maintainer run the fast subset, `make test-fast`: every test
in tests/browser/ is `browser`, every test in tests/pipeline/ is `slow`, every test of the LLM
files below is `llm`, and single slow tests elsewhere carry `@pytest.mark.slow`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject, build_project, copy_project
from tests.tree import gen

FOLDER_MARKS = {"browser": "browser", "pipeline": "slow"}
# Each starts inspect_ai (about 2 s an eval) against a loopback model: the LLM arms and judge.
LLM_FILES = {
    "tests/cli/test_attached.py",
    "tests/cli/test_doc_examples.py",
    "tests/cli/test_dry_run.py",
    "tests/cli/test_llm_arm.py",
    "tests/cli/test_judge_llm.py",
    "tests/unit/test_attached.py",
    "tests/unit/test_llm_agent.py",
}
ROOT = Path(__file__).parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.parent.name
        if folder in FOLDER_MARKS:
            item.add_marker(FOLDER_MARKS[folder])
        if item.path.relative_to(ROOT).as_posix() in LLM_FILES:
            item.add_marker("llm")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def project_template(tmp_path_factory: pytest.TempPathFactory) -> BuiltProject:
    """``build_project`` once a session (once a worker under xdist); never changed: each
    test's ``project`` is a copy of it."""
    return build_project(tmp_path_factory.mktemp("project-template"))


@pytest.fixture
def project(
    project_template: BuiltProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> BuiltProject:
    """An unsealed suite over a real two-commit repository; cwd is the project root."""
    built = copy_project(project_template, tmp_path)
    monkeypatch.chdir(tmp_path)
    return built


@pytest.fixture
def tree(tmp_path: Path) -> Callable[[dict[str, Any]], list[Path]]:
    """``tree({"suites/x/questions.jsonl": [...], "params.yaml": "..."})`` under tmp_path."""
    return lambda files: gen(tmp_path, files)
