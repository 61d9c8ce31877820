"""params.yaml as a file: where it is, its YAML read strictly, and the line each key is on.

PyYAML keeps the last of two equal keys without a word, so the reader here refuses a key
given twice; every check of a value names its params.yaml line through :func:`line_of`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flightdeck.errors import InputError

PARAMS_FILE = "params.yaml"


def find_params(near: Path | None = None) -> Path:
    """./params.yaml, else the nearest params.yaml above ``near`` (a suite folder).

    So a command run from outside the project still finds the project's holdouts and
    repositories rather than silently using the defaults.
    """
    here = Path(PARAMS_FILE)
    if here.is_file() or near is None:
        return here
    for folder in near.resolve().parents:
        candidate = folder / PARAMS_FILE
        if candidate.is_file():
            return candidate
    return here


def read_yaml(path: Path) -> Any:
    """The YAML in ``path``; a key given twice or bad syntax is an InputError on its line."""
    import yaml

    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_unique_keys_loader()) or {}
    except _DuplicateKey as exc:
        raise InputError(
            path, exc.line, f"duplicate key {exc.key!r} (first on line {exc.first}); keep one"
        ) from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputError(path, line, f"not YAML ({exc.problem}); fix the syntax") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"not YAML ({exc}); fix the syntax") from None


class _DuplicateKey(Exception):
    """A key given twice in one mapping: YAML would silently keep the last."""

    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


def _unique_keys_loader() -> Any:
    """PyYAML's SafeLoader, refusing a key given twice in a mapping.

    PyYAML keeps the last of two equal keys without a word, so a second ``holdouts:`` or
    ``gate_margin:`` further down the file would silently win (and an error about the value
    would name the first one's line).
    """
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _DuplicateKey(key, line, seen[key])
                except TypeError:  # an unhashable key: let PyYAML report it
                    continue
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    return Loader


def line_of(path: Path, name: str) -> int | None:
    """The line of a top-level ``name:``."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.startswith(f"{name}:"):
            return number
    return None


def line_of_nested(path: Path, name: str) -> int | None:
    """The line of an indented ``name:`` (a judge under ``judges:``)."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip().startswith(f"{name}:") and text[:1].isspace():
            return number
    return None
