"""Every public function, class and method of ``src/`` is used by ``src/`` itself (#23).

Code that only tests call (an oracle, a reference implementation, a probe of internal state)
lives in ``tests/``, and code nobody calls is deleted. A name counts as used when ``src/``
reads it anywhere (a call, an attribute, a lazy ``"module:attribute"`` string) other than
where it is defined; click commands and groups are used by being registered, and a private
class's methods by the library class it extends. The scan is by
name, so a name shared with something used elsewhere passes: it finds the plain cases.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "flightdeck"
LAZY = re.compile(r"[\w.:]+")


def _used_names(sources: list[str]) -> Counter[str]:
    used: Counter[str] = Counter()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name):
                used[node.id] += 1
            elif isinstance(node, ast.Attribute):
                used[node.attr] += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # a lazy import: "flightdeck.cli.holdout:holdout"
                used.update(re.split(r"[.:]", node.value) if LAZY.fullmatch(node.value) else ())
    return used


def _registered(node: ast.FunctionDef | ast.ClassDef) -> bool:
    return any(
        "command" in ast.unparse(d) or "group" in ast.unparse(d) for d in node.decorator_list
    )


def unused(sources: dict[str, str]) -> list[str]:
    """``file:name`` (``file:Class.name`` for a method) of every public definition in
    ``sources`` (file -> text) that no text of ``sources`` uses."""
    used = _used_names(list(sources.values()))
    found = []
    for file, source in sources.items():
        for node in ast.parse(source).body:
            members = [(node, "")]
            # a private class's methods are its base's protocol (io, http.server) calling in
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                members += [(m, f"{node.name}.") for m in node.body]
            for member, owner in members:
                if not isinstance(member, ast.FunctionDef | ast.ClassDef):
                    continue
                if member.name.startswith("_") or _registered(member):
                    continue
                if used[member.name] == 0:
                    found.append(f"{file}:{owner}{member.name}")
    return found


def test_no_public_code_of_src_is_unused_by_src() -> None:
    sources = {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    found = unused(sources)
    assert found == [], "move to tests/ (only tests use it) or delete:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        pytest.param({"a.py": "def f(): pass\n"}, ["a.py:f"], id="unused-function"),
        pytest.param({"a.py": "def f(): pass\n", "b.py": "f()\n"}, [], id="called"),
        pytest.param(
            {"a.py": "class C:\n    def m(self): pass\n", "b.py": "C()\n"},
            ["a.py:C.m"],
            id="unused-method",
        ),
        pytest.param(
            {"a.py": "class C:\n    @property\n    def p(self): return 1\n", "b.py": "C().p\n"},
            [],
            id="read-property",
        ),
        pytest.param({"a.py": "def _f(): pass\n"}, [], id="private"),
        pytest.param({"a.py": "class _H(Base):\n    def do_GET(self): pass\n"}, [], id="hook"),
        pytest.param({"a.py": "@grp.command('x')\ndef x_command(): pass\n"}, [], id="command"),
        pytest.param({"a.py": "def f(): pass\n", "b.py": 'L = "pkg.a:f"\n'}, [], id="lazy"),
    ],
)
def test_the_scan_tells_used_from_unused(sources: dict[str, str], expected: list[str]) -> None:
    assert unused(sources) == expected
