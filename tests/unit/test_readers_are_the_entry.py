"""The suite records are only ever decoded by the suite readers.

A record's Struct (``suite/schema.py``) carries part of its rules as ``Pattern`` and ``Check``
metadata, which msgspec does not read: the readers of ``suite/records.py`` run them over a
whole file at once (``suite/columns.py``). So a plain ``msgspec.convert(obj, Label)`` would
take a blank rater or a non-hex commit. This test holds every module of ``src/`` but the
readers' own to decoding such a Struct through the readers, never with msgspec directly.
"""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec
import pytest

from flightdeck.suite import schema
from flightdeck.suite.columns import places
from flightdeck.suite.records import Label

SRC = Path(__file__).resolve().parents[2] / "src" / "flightdeck"
# Where the readers decode, convert and explain the records (decoding.py, problems.py,
# explanations.py) and say which rules each place holds (columns.py).
READERS = {"decoding.py", "problems.py", "explanations.py", "columns.py", "records.py"}
DECODERS = {"Decoder", "convert", "decode", "decode_lines"}


def ruled_structs() -> set[str]:
    """The names of the schema's Structs with a rule msgspec does not check."""
    return {
        name
        for name, value in vars(schema).items()
        if isinstance(value, type) and issubclass(value, msgspec.Struct) and places(value)
    }


def direct_decodes(tree: ast.AST, structs: set[str]) -> list[int]:
    """Lines where msgspec decodes or converts into one of ``structs`` by name."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in DECODERS:
            continue
        named = [*node.args, *(k.value for k in node.keywords if k.arg == "type")]
        if any(isinstance(a, ast.Name) and a.id in structs for a in named):
            found.append(node.lineno)
    return found


def test_the_ruled_structs_are_found() -> None:
    assert {"Question", "Key", "Answer", "Label", "Source"} <= ruled_structs()


def test_a_struct_alone_takes_what_the_readers_refuse() -> None:
    """Why the rule matters: msgspec alone lets a blank rater through."""
    assert msgspec.convert({"id": "q1", "rater": " ", "correct": True}, Label).rater == " "


@pytest.mark.parametrize(
    "source",
    [
        "msgspec.convert(obj, Label)",
        "msgspec.json.Decoder(Question).decode(b'')",
        "msgspec.json.decode(b'', type=Key)",
    ],
)
def test_the_finder_sees_a_direct_decode(source: str) -> None:
    assert direct_decodes(ast.parse(source), ruled_structs())


def test_no_module_outside_the_readers_decodes_a_suite_record_itself() -> None:
    structs = ruled_structs()
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "suite" and path.name in READERS:
            continue
        for line in direct_decodes(ast.parse(path.read_text(encoding="utf-8")), structs):
            offenders.append(f"{path.relative_to(SRC)}:{line}")
    assert offenders == [], "decode suite records through flightdeck.suite.records"
