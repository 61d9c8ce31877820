"""The facade (#23): each command opens its suite once and reads manifest.json once.

Counted on the real commands through click's runner: every look at the suite's folder and
files (``Suite.require_files``, which opening a suite runs) and every read of a suite's
manifest.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.builders import Project, answer, labels_for

import flightdeck.project
import flightdeck.tasks.knowledge  # every module that reads a suite's manifest by name
from flightdeck.cli import cli
from flightdeck.facade import Project as Facade
from flightdeck.facade import Suite


class Counts:
    def __init__(self) -> None:
        self.opens = 0
        self.manifest_reads = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    counted = Counts()
    real_look = flightdeck.project.Suite.require_files
    real_read = flightdeck.project.read_manifest

    def require_files(self: flightdeck.project.Suite, *, keys: bool = True) -> None:
        counted.opens += 1  # the look at the suite's folder and files that opens it
        real_look(self, keys=keys)

    def read_manifest(path: Path) -> object:
        counted.manifest_reads += 1
        return real_read(path)

    monkeypatch.setattr(flightdeck.project.Suite, "require_files", require_files)
    for module in list(sys.modules.values()):
        if getattr(module, "read_manifest", None) is real_read:
            monkeypatch.setattr(module, "read_manifest", read_manifest)
    return counted


def arm(project: Project, name: str, correct: list[bool]) -> None:
    records = [
        answer(project, "q1", "Postgres, for JSONB.", ["docs/adr/0001-database.md"]),
        answer(project, "q2", "make release, then tag.", ["docs/runbooks/deploy.md"]),
        answer(project, "q3", "@ada", ["CODEOWNERS"]),
        answer(project, "q4", "Dropped Python 3.9.", ["CHANGELOG.md"]),
    ]
    project.write_answers(name, records)
    project.write_labels(name, labels_for(records, {"ada": correct, "bob": correct}))
    project.write_meta(name)


def run(runner: CliRunner, *args: str) -> int:
    return runner.invoke(cli, list(args), catch_exceptions=False).exit_code


def test_seal_status_score_and_gate_open_the_suite_once(
    runner: CliRunner, project: Project, counts: Counts
) -> None:
    suite = str(project.suite)
    assert run(runner, "knowledge", "seal", suite, "--holdouts", "holdouts") == 0
    assert (counts.opens, counts.manifest_reads) == (1, 0)  # unsealed: nothing to read
    arm(project, "a", [True, True, False, True])
    arm(project, "b", [True, True, True, True])
    for args, manifest_reads in (
        (("status", suite), 1),
        (("score", suite, "--arm", "a", "--arm", "b", "--baseline", "a", "--candidate", "b"), 1),
        (("gate", suite, "--pinned", "a", "--candidate", "b"), 1),
    ):
        counts.opens = counts.manifest_reads = 0
        assert run(runner, "knowledge", *args) in (0, 1)
        assert (counts.opens, counts.manifest_reads) == (1, manifest_reads), args


def test_a_suite_is_bound_to_its_project_and_named_by_folder_or_name(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)
    opened = Facade.open()
    by_name = opened.suite("demo-v1")
    by_folder = opened.suite(project.suite)
    assert isinstance(by_name, Suite)
    assert by_name.root.resolve() == by_folder.root.resolve() == project.suite.resolve()
    assert by_name.project is opened
    assert by_name.params is opened.params
    assert opened.suite("not-a-suite").root == Path("not-a-suite")  # a folder, named as given
