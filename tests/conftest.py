"""Shared fixtures: a CLI runner and a small real project (repository, suite, params)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.builders import Project, build_project


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An unsealed suite over a real two-commit repository; cwd is the project root."""
    built = build_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return built
