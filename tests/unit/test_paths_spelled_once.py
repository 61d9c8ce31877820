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


# Named only where a path is built (``InputError("params.yaml", ...)`` labels a message).
PATH_ONLY = {"params.yaml", "dvc.yaml"}
LAYOUT = FOLDERS | FILES | PATH_ONLY
# What the layout's own files end with: <arm>.jsonl, <arm>.meta.json, <suite>.json, <suite>.md
# and its .svg, <id>.log; an f-string ending so where a path is built names a layout file.
SUFFIXES = (".jsonl", ".json", ".md", ".svg", ".log")
PATH_CALLS = {"Path", "PurePath", "PurePosixPath", "joinpath", "with_name", "with_suffix"}


def _path_call(parent: ast.AST | None, node: ast.AST) -> str | None:
    """The name of the path-building call ``node`` is an argument of, else None."""
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name if name in PATH_CALLS else None
    return None


def _a_tuple_of_layout_names(node: ast.Tuple | ast.List | ast.Set) -> bool:
    """Two or more of its elements, and half of them at least, are names of the layout (a
    list of words that holds "results" and "decision" among twenty is no list of paths)."""
    named = sum(isinstance(e, ast.Constant) and e.value in LAYOUT for e in node.elts)
    return named >= 2 and 2 * named >= len(node.elts)


def _in_path_context(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """An operand of ``/``, an argument of ``Path(...)``, ``joinpath``, ``with_name`` or
    ``with_suffix``, or an element of a tuple, list or set of layout names."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.JoinedStr):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
        return True
    if isinstance(parent, ast.Tuple | ast.List | ast.Set):
        return _a_tuple_of_layout_names(parent)
    return _path_call(parent, node) is not None


def _builds_a_layout_file(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """The end of an f-string that builds a file name (``f"{arm}.jsonl"``) where a path is
    built, or a layout suffix given to ``with_suffix``."""
    text, parent = node.value, parents.get(id(node))
    if isinstance(parent, ast.JoinedStr):
        return text.endswith(SUFFIXES) and _in_path_context(node, parents)
    return _path_call(parent, node) == "with_suffix" and text in SUFFIXES


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
        in_path = "/" in text or _in_path_context(node, parents)
        names_a_folder = bool(parts & (FOLDERS | PATH_ONLY)) and in_path
        if names_a_file or names_a_folder or _builds_a_layout_file(node, parents):
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


def layout_defaults(source: str, layout: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every argument default in ``source`` that is a name of ``layout``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                for part in ast.walk(default) if default is not None else ():
                    name = getattr(part, "id", None) or getattr(part, "attr", None)
                    if name in layout:
                        found.append((part.lineno, name))
    return found


def test_no_argument_defaults_to_a_path_of_the_current_directory() -> None:
    # `cache_dir: Path = CACHE_FOLDER` is .flightdeck/cache of wherever the process runs;
    # the caller passes the project's (ProjectPaths.cache).
    names = ast.parse((ALLOWED / "names.py").read_text(encoding="utf-8"))
    assigned = [t for n in names.body if isinstance(n, ast.Assign) for t in n.targets]
    layout = {t.id for t in assigned if isinstance(t, ast.Name)}
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(ALLOWED)
        for line, name in layout_defaults(path.read_text(encoding="utf-8"), layout)
    ]
    assert "CACHE_FOLDER" in layout
    assert layout_defaults("def f(c=names.CACHE_FOLDER / 'x'): pass", layout) == [
        (1, "CACHE_FOLDER")
    ]
    assert found == [], "pass the project's path instead:\n" + "\n".join(found)


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
        pytest.param(
            'MARKS = (".git", "suites", "holdouts", "params.yaml", "dvc.yaml")',
            [(1, "suites"), (1, "holdouts"), (1, "params.yaml"), (1, "dvc.yaml")],
            id="tuple-of-layout-names",
        ),
        pytest.param('KINDS = ("results", "why")', [], id="one-layout-word-in-a-tuple"),
        pytest.param(
            'WORDS = {"results", "decision", "impact", "status", "outcome"}',
            [],
            id="layout-words-among-others",
        ),
        pytest.param('folder / f"{arm}.jsonl"', [(1, ".jsonl")], id="f-string-file"),
        pytest.param(
            'path.with_name(f".{arm}.rerun.jsonl")', [(1, ".rerun.jsonl")], id="with-name"
        ),
        pytest.param('report.with_suffix(".svg")', [(1, ".svg")], id="with-suffix"),
        pytest.param('root.joinpath("holdouts")', [(1, "holdouts")], id="joinpath"),
        pytest.param('Path(f"{root}/results")', [(1, "/results")], id="f-string-path"),
        pytest.param('InputError("params.yaml", None, "x")', [], id="params-as-a-label"),
        pytest.param('root / "params.yaml"', [(1, "params.yaml")], id="params-joined"),
        pytest.param('message = f"wrote {arm}.jsonl"', [], id="f-string-prose"),
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
