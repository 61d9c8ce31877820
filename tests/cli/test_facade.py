"""The facade (#23): each command opens its suite once and reads manifest.json at most once.

Counted on the real commands through click's runner: every look at the suite's folder and
files (``SuiteFolder.require_files``, which opening a suite runs) and every read of a suite's
manifest.json, for every command that takes a suite; and that no module below the facade
opens the params or the repositories again (``Project.open``, ``Project.repos``). That last
is also read from the source: ``Project.repos`` is the one ``RepoSet(...)`` in ``src/``, so
a builder no command reaches (a fallback for Python callers) is found too.
"""

from __future__ import annotations

import ast
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject, answer, write_jsonl

import flightdeck
import flightdeck.project.suite_folder
import flightdeck.tasks.knowledge  # every module that reads a suite's manifest by name
from flightdeck.cli import cli
from flightdeck.errors import InputError
from flightdeck.project import Project as Facade
from flightdeck.project import Suite
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.suite.repos import RepoSet


class Counts:
    def __init__(self) -> None:
        self.opens = 0
        self.manifest_reads = 0
        self.project_opens = 0
        self.repo_sets: list[str] = []  # the function that built each RepoSet
        self.scratch_rules = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    counted = Counts()
    real_look = SuiteFolder.require_files
    real_read = flightdeck.project.suite_folder.read_manifest

    def require_files(self: SuiteFolder, *, keys: bool = True) -> None:
        counted.opens += 1  # the look at the suite's folder and files that opens it
        real_look(self, keys=keys)

    def read_manifest(path: Path) -> object:
        counted.manifest_reads += 1
        return real_read(path)

    real_open = Facade.open.__func__  # type: ignore[attr-defined]
    real_repo_set = RepoSet.__init__
    real_rule = Facade.scratch_arms

    def open_project(cls: type[Facade], *args: Any, **kwargs: Any) -> Facade:
        counted.project_opens += 1
        return real_open(cls, *args, **kwargs)  # type: ignore[no-any-return]

    def repo_set(self: RepoSet, *args: Any, **kwargs: Any) -> None:
        counted.repo_sets.append(sys._getframe(1).f_code.co_qualname)
        real_repo_set(self, *args, **kwargs)

    def scratch_arms(self: Facade, arms: Iterable[str]) -> frozenset[str]:
        counted.scratch_rules += 1
        return real_rule(self, arms)

    monkeypatch.setattr(SuiteFolder, "require_files", require_files)
    monkeypatch.setattr(Facade, "open", classmethod(open_project))
    monkeypatch.setattr(RepoSet, "__init__", repo_set)
    monkeypatch.setattr(Facade, "scratch_arms", scratch_arms)
    for module in list(sys.modules.values()):
        if getattr(module, "read_manifest", None) is real_read:
            monkeypatch.setattr(module, "read_manifest", read_manifest)
    return counted


def run(runner: CliRunner, *args: str, stdin: str | None = None) -> int:
    return runner.invoke(cli, list(args), input=stdin, catch_exceptions=False).exit_code


HARNESS = shlex.join([sys.executable, "-c", 'print(\'{"answer": "Postgres.", "citations": []}\')'])


def test_every_command_on_a_suite_opens_it_once(
    runner: CliRunner, project: BuiltProject, counts: Counts
) -> None:
    suite = str(project.suite)
    assert run(runner, "knowledge", "check", suite) == 0
    assert (counts.opens, counts.manifest_reads) == (1, 0)  # unsealed: nothing to read
    counts.opens = 0
    assert run(runner, "knowledge", "seal", suite, "--holdouts", "holdouts") == 0
    assert (counts.opens, counts.manifest_reads) == (1, 0)
    project.write_arm("a", [True, True, False, True])
    project.write_arm("b", [True, True, True, True])
    person = write_jsonl(project.root / "person.jsonl", [answer(project, "q1", "x", [])])
    with (project.root / "params.yaml").open("a") as f:
        f.write("judges:\n  facts:\n    kind: facts\n")
    for args, manifest_reads in (
        (("knowledge", "check", suite), 1),
        (("knowledge", "status", suite), 1),
        (
            (
                "knowledge",
                "score",
                suite,
                "--arm",
                "a",
                "--arm",
                "b",
                "--baseline",
                "a",
                "--candidate",
                "b",
            ),
            1,
        ),  # fmt: skip
        (("knowledge", "gate", suite, "--pinned", "a", "--candidate", "b"), 1),
        (
            (
                "knowledge",
                "import-answers",
                suite,
                "--arm",
                "person",
                "--from",
                str(person),
                "--by",
                "ada",
                "--model",
                "m",
                "--date",
                "2026-11-20",
                "--snapshot-commit",
                f"sdlc={project.as_of}",
            ),
            1,
        ),  # fmt: skip
        (("knowledge", "agreement", suite, "--arm", "a"), 1),
        (("knowledge", "judge", suite, "--judge", "facts", "--arm", "a"), 1),
        (("knowledge", "calibrate", suite, "--judge", "facts"), 1),
        (
            (
                "experiment",
                "run",
                suite,
                "--arm",
                "c",
                "--harness",
                HARNESS,
                "--sandbox",
                "none",
                "--jobs",
                "1",
            ),
            1,
        ),  # fmt: skip
    ):
        counts.opens = counts.manifest_reads = counts.project_opens = counts.scratch_rules = 0
        counts.repo_sets = []
        assert run(runner, *args) in (0, 1), args
        assert (counts.opens, counts.manifest_reads) == (1, manifest_reads), args
        assert counts.project_opens == 1, args
        assert counts.repo_sets in ([], ["Project.repos"]), args  # the project's, once
        assert counts.scratch_rules <= 1, args  # one owner of the scratch rule (#21)
    counts.opens = counts.manifest_reads = 0
    assert run(runner, "knowledge", "rate", suite, "--rater", "cy", "--tui", stdin="q\n") == 0
    assert (counts.opens, counts.manifest_reads) == (1, 1)
    counts.opens = counts.manifest_reads = 0
    assert run(runner, "knowledge", "show", suite) == 0
    assert (counts.opens, counts.manifest_reads) == (0, 0)  # reads what score wrote, only


def test_load_results_opens_the_project_through_the_facade(
    runner: CliRunner, project: BuiltProject, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = str(project.suite)
    assert run(runner, "knowledge", "seal", suite, "--holdouts", "holdouts") == 0
    project.write_arm("a", [True, True, False, True])
    assert run(runner, "knowledge", "score", suite, "--arm", "a") == 0
    monkeypatch.chdir(project.root)
    counts.project_opens = 0
    frame = flightdeck.load_results(project.suite)
    assert frame["arm"].unique().to_list() == ["a"]
    assert counts.project_opens == 1  # params.yaml read as every other entry reads it


def test_a_suite_is_bound_to_its_project_and_named_by_folder_or_name(
    project: BuiltProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)
    opened = Facade.open()
    by_name = opened.suite("demo-v1")
    by_folder = opened.suite(project.suite)
    assert isinstance(by_name, Suite)
    assert by_name.root.resolve() == by_folder.root.resolve() == project.suite.resolve()
    assert by_name.project is opened
    assert by_name.params is opened.params
    assert by_name.folder.project == opened.paths  # its outputs go where the project's do
    assert opened.suite("not-a-suite").root == Path("not-a-suite")  # a folder, named as given
    with pytest.raises(InputError, match="name the suite"):
        opened.suite(None)  # params.yaml names no suite


def _repo_set_builders(source: str) -> list[str]:
    """The qualified name of the function around each ``RepoSet(...)`` call in ``source``."""
    found: list[str] = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = owner
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                inner = f"{owner}.{child.name}" if owner else child.name
            if isinstance(child, ast.Call):
                func = child.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name == "RepoSet":
                    found.append(owner or "<module>")
            visit(child, inner)

    visit(ast.parse(source), "")
    return found


def test_only_project_repos_builds_a_repo_set_in_src() -> None:
    package = Path(flightdeck.__file__).parent
    builders = [
        f"{path.relative_to(package).as_posix()}:{where}"
        for path in sorted(package.rglob("*.py"))
        for where in _repo_set_builders(path.read_text(encoding="utf-8"))
    ]
    assert builders == ["project/__init__.py:Project.repos"]
