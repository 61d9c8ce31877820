"""The layout the architecture asks for (#9): modules of at most 400 lines, no import circle.

Imports inside functions count: a circle through a deferred import is still two modules that
need each other, and the first layout's circles were exactly those. So do imports of a name
from a package's ``__init__`` (``from flightdeck import __version__`` in a module that
``flightdeck/__init__.py`` re-exports was one).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "flightdeck"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once for every test of this module."""
    return ast.parse(path.read_text(encoding="utf-8"))


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from a import b` names module a.b when b is one, else a name in a
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            # a package's own __init__ counts too: a module that reads a name from it needs
            # it, as the package needs the modules its __init__ imports (even lazily)
            if target and target != name:
                found.add(target)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_no_module_imports_itself_back() -> None:
    found = modules()
    known = set(found)
    graph = {name: imports_of(name, path, known) for name, path in found.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_are_at_most_400_lines(name: str) -> None:
    lines = modules()[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it by concern"


# --- the checks above must not pass for want of something to check --------------------------


def test_the_finder_sees_the_package() -> None:
    found = modules()
    assert len(found) >= 60, sorted(found)
    for name in ("flightdeck", "flightdeck.cli", "flightdeck.tasks.knowledge", "flightdeck.errors"):
        assert name in found


def test_the_real_graph_has_its_edges_and_a_circle_added_to_it_is_found() -> None:
    found = modules()
    known = set(found)
    graph = {name: imports_of(name, path, known) for name, path in found.items()}
    # a module-level import, one inside a function, and one under TYPE_CHECKING
    assert "flightdeck.tasks.scoring" in graph["flightdeck.tasks.gate"]
    assert "flightdeck.scoring.report" in graph["flightdeck.tasks.scoring"]
    assert "flightdeck.scoring.tables" in graph["flightdeck.tasks.scoring"]
    graph["flightdeck.tasks.scoring"].add("flightdeck.tasks.gate")
    assert ["flightdeck.tasks.gate", "flightdeck.tasks.scoring"] in circles(graph)


def write_package(root: Path, files: dict[str, str]) -> dict[str, Path]:
    """A package ``pkg`` under ``root`` from {relative path: source}; its modules by name."""
    paths = {}
    for rel, text in files.items():
        path = root / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        parts = Path("pkg", rel).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return paths


def test_imports_are_resolved_relative_nested_and_to_submodules(tmp_path: Path) -> None:
    found = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from . import b\n",  # a submodule named from its package
            "a/b.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from ..c import thing\n"  # two levels up, a name in c
                "def f():\n    from .d import g\n"  # inside a function
            ),
            "a/d.py": "import pkg.a.e as e\nfrom pkg import c\n",  # absolute; c is a submodule
            "a/e.py": "from pkg.a import b\nfrom pkg.a import some_name\n",
            "c.py": "from pkg import a\nimport os\n",  # a package, and a module outside
        },
    )
    known = set(found)
    graph = {name: imports_of(name, path, known) for name, path in found.items()}
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.a.b"},
        "pkg.a.b": {"pkg.c", "pkg.a.d"},
        "pkg.a.d": {"pkg.a.e", "pkg.c"},
        "pkg.a.e": {"pkg.a.b", "pkg.a"},  # some_name is a name in pkg.a's __init__
        "pkg.c": {"pkg.a"},
    }
    assert circles(graph) == [["pkg.a", "pkg.a.b", "pkg.a.d", "pkg.a.e", "pkg.c"]]


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def borrowed_names(tree: ast.Module, known: set[str]) -> list[str]:
    """The private names of flightdeck's modules that a file reaches for: imported
    (``from flightdeck.x import _y``), read off a module it imported (``x._y``,
    ``flightdeck.x._y``), read off a class or function it imported (``Store._write``) or set
    or got by name (``monkeypatch.setattr(x, "_y", ...)``)."""
    bound: dict[str, str] = {}  # a local name -> the flightdeck module it names
    objects: dict[str, str] = {}  # a local name -> the flightdeck class or function it names
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "flightdeck":
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else "flightdeck"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("flightdeck"):
            for alias in node.names:
                if is_private(alias.name):
                    found.append(f"{node.module}.{alias.name}")
                elif f"{node.module}.{alias.name}" in known:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                else:
                    objects[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def module_of(node: ast.expr) -> str | None:
        name = dotted(node)
        if name is None or name.split(".")[0] not in bound:
            return None
        head, _, rest = name.partition(".")
        full = f"{bound[head]}.{rest}" if rest else bound[head]
        return full if full in known else None

    def owner_of(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and node.id in objects:
            return objects[node.id]
        return module_of(node)

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            module = owner_of(node.value)
            if module:
                found.append(f"{module}.{node.attr}")
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            target, attr = node.args[0], node.args[1]
            is_named = isinstance(attr, ast.Constant) and isinstance(attr.value, str)
            if is_named and is_private(attr.value) and (module := owner_of(target)):
                found.append(f"{module}.{attr.value}")
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    """A helper another module (or a test) needs is public, with a docstring."""
    found = modules()
    known = set(found)
    tests = PACKAGE.parents[1] / "tests"
    found |= {str(p.relative_to(tests.parent)): p for p in tests.rglob("*.py")}
    borrowed = [
        f"{name} uses {private}"
        for name, path in found.items()
        for private in borrowed_names(parsed(path), known)
    ]
    assert borrowed == []


@pytest.mark.parametrize(
    ("source", "private"),
    [
        pytest.param("from flightdeck.a import _x", "flightdeck.a._x", id="from-import"),
        pytest.param("from flightdeck import a\na._x()", "flightdeck.a._x", id="module-attr"),
        pytest.param("import flightdeck.a as m\nm._x", "flightdeck.a._x", id="import-as"),
        pytest.param("import flightdeck.a\nflightdeck.a._x", "flightdeck.a._x", id="dotted"),
        pytest.param(
            "from flightdeck import a\nmonkeypatch.setattr(a, '_x', 1)",
            "flightdeck.a._x",
            id="set-by-name",
        ),
    ],
)
def test_the_private_name_finder_sees_each_way_of_reaching_in(source: str, private: str) -> None:
    assert borrowed_names(ast.parse(source), {"flightdeck", "flightdeck.a"}) == [private]


def test_the_private_name_finder_lets_public_and_dunder_names_be() -> None:
    source = "from flightdeck import a\nimport os\na.x, a.__file__, os._exit, obj._y\n"
    assert borrowed_names(ast.parse(source), {"flightdeck", "flightdeck.a"}) == []


def test_the_readme_layout_lists_every_module_and_no_other() -> None:
    readme = (PACKAGE.parents[1] / "README.md").read_text(encoding="utf-8")
    layout = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0].split("```")[1]
    listed = set(re.findall(r"\b(\w+\.py)\b", layout))
    files = {p.name for p in PACKAGE.rglob("*.py")}
    assert sorted(files - listed - {"__init__.py"}) == []
    assert sorted(listed - files) == []
