"""Every path flightdeck gives a project is spelled in ``flightdeck/project/`` only (#23).

A module outside that package that joins a folder or file name of the project layout
(``root / "holdouts"``, ``Path(".flightdeck") / "cache"``, ``f"{root}/traces/{suite}"``,
``"manifest.json"``) builds a path the project already knows, and the two drift apart; it
asks :class:`~flightdeck.project.paths.ProjectPaths` or
:class:`~flightdeck.project.suite_folder.SuiteFolder` instead. Prose is not a path: a string
with a space in it (a message, a help text) and a docstring are left alone, and so is a name
used as a JSON key.

Importing one of the package's modules first runs ``flightdeck/project/__init__.py``, so the
lowest modules that import its names (params, suite/, holdouts/) are imported first here, each
in a fresh interpreter: a circle through the package's ``__init__`` fails at once.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "flightdeck"
ALLOWED = PACKAGE / "project"
FOLDERS = {
    ".flightdeck",
    "cache",
    "holdouts",
    "results",
    "reports",
    "runs",
    "traces",
    "scratch",
    "metrics",
    "workspaces",
    "suites",
    "answers",
    "labels",
    "judgements",
    "decision",
}
FILES = {
    "manifest.json",
    "scans.jsonl",
    "scores.jsonl",
    "questions.jsonl",
    "keys.jsonl",
    "calibration.json",
    "rating-order.key",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _in_path_context(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """An operand of ``/`` or an argument of ``Path(...)``."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.JoinedStr):
        parent = parents.get(id(parent))
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in ("Path", "PurePath", "PurePosixPath")
    return False


def spelled_paths(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string in ``source`` that spells a path of the project layout."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        text = node.value
        if id(node) in skip or not text or any(c.isspace() for c in text):
            continue
        parts = set(text.strip("/").split("/"))
        names_a_file = bool(parts & FILES)
        names_a_folder = bool(parts & FOLDERS) and ("/" in text or _in_path_context(node, parents))
        if names_a_file or names_a_folder:
            found.append((node.lineno, node.col_offset, text))
    return [(line, text) for line, _, text in sorted(found)]


def test_no_module_outside_the_project_package_spells_a_project_path() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(ALLOWED)
        for line, text in spelled_paths(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "ask flightdeck.project for these paths:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param('root / "holdouts"', [(1, "holdouts")], id="joined"),
        pytest.param(
            'Path(".flightdeck") / "cache"', [(1, ".flightdeck"), (1, "cache")], id="path"
        ),
        pytest.param('f"{root}/traces/{suite}"', [(1, "/traces/")], id="f-string"),
        pytest.param(
            'NAMES = ("questions.jsonl", "keys.jsonl")',
            [(1, "questions.jsonl"), (1, "keys.jsonl")],
            id="file-names",
        ),  # fmt: skip
        pytest.param('x = ".flightdeck/scratch"', [(1, ".flightdeck/scratch")], id="nested"),
        pytest.param('data["results"] = 1', [], id="json-key"),
        pytest.param('"holdouts must be a folder path"', [], id="message"),
        pytest.param('def f():\n    """Writes runs/<suite>/x and manifest.json."""', [], id="doc"),
        pytest.param('Path("README.md") / "docs"', [], id="other-names"),
    ],
)
def test_the_finder_tells_paths_from_prose(source: str, expected: list[tuple[int, str]]) -> None:
    assert spelled_paths(source) == expected


def test_the_finder_reads_the_package() -> None:
    files = [p for p in PACKAGE.rglob("*.py") if not p.is_relative_to(ALLOWED)]
    assert len(files) >= 100
    spelled = {text for _, text in spelled_paths((ALLOWED / "names.py").read_text())}
    # the one place that spells them, seen by the finder
    assert {".flightdeck", "cache", "manifest.json", "scans.jsonl", "keys.jsonl"} <= spelled


@pytest.mark.parametrize(
    "module",
    [
        "flightdeck.params",
        "flightdeck.params.yaml_file",
        "flightdeck.suite.repos",
        "flightdeck.suite.sealed",
        "flightdeck.suite.records",
        "flightdeck.holdouts.manifest",
        "flightdeck.project.names",
        "flightdeck.project.suite_folder",
        "flightdeck.tasks.init",
    ],
)
def test_a_module_that_imports_the_names_imports_first(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
