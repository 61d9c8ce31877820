"""params.yaml as a file: where it is, its YAML read strictly, and the line each key is on.

PyYAML keeps the last of two equal keys without a word, so the reader here refuses a key
given twice; it crashes on an integer of more digits than Python reads and on a date that
does not exist (``2024-13-45``), so the reader names those on their line instead. Merge keys
(``<<: *base``) work as YAML 1.1 defines them: the mapping's own keys override the merged
ones, and only a key given twice in the mapping itself is refused. The file is read once:
every mapping it holds is a :class:`Located` dict that keeps the line of each of its keys
(a merged key keeps its line in the anchor), and every list a :class:`LocatedList` that keeps
the line of each of its items, so every check of a value names its
params.yaml line through :func:`line_in` without reading the file again.

PyYAML shares an anchored value among its aliases, so aliases of anchors that hold aliases
multiply what a short file stands for (``a: &a [x,x]``, ``b: &b [*a,*a]``, ...: the "billion
laughs") and anything that walks the values walks every copy. The reader counts the values as
it composes them, an alias as every value of its anchor, and refuses the alias that takes the
count past the file's length in characters: written-out values take at least a character
each, so only aliasing can pass it. An alias inside its own anchor (a value that holds itself)
and nesting deeper than the interpreter recurses are refused on their line too.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flightdeck.errors import HandledError, InputError
from flightdeck.project.names import PARAMS_FILE


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


class Located(dict[Any, Any]):
    """A mapping of params.yaml, with the line of each of its keys (``lines``)."""

    lines: dict[Any, int]

    def __init__(self) -> None:
        super().__init__()
        self.lines = {}


class LocatedList(list[Any]):
    """A list of params.yaml, with the line of each of its items (``lines``)."""

    lines: list[int]

    def __init__(self) -> None:
        super().__init__()
        self.lines = []


def line_of_item(items: Any, index: int) -> int | None:
    """The params.yaml line of ``items[index]`` (None for a list not read from it)."""
    lines: list[int] = getattr(items, "lines", [])
    return lines[index] if 0 <= index < len(lines) else None


def line_in(mapping: Any, key: Any) -> int | None:
    """The params.yaml line of ``key`` in ``mapping`` (None for a mapping not read from it)."""
    lines: dict[Any, int] = getattr(mapping, "lines", {})
    try:
        return lines.get(key)
    except TypeError:  # an unhashable key
        return None


def read_yaml(path: Path) -> Any:
    """The YAML in ``path``; a key given twice or bad syntax is an InputError on its line."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"not YAML ({exc}); fix the syntax") from None
    try:  # the reader refuses a control character as it is made
        loader = _unique_keys_loader()(text)
    except yaml.reader.ReaderError as exc:
        what = f"character U+{exc.character:04X} is not allowed in YAML"
        at = text.count("\n", 0, exc.position) + 1
        raise InputError(path, at, f"not YAML ({what}); remove it") from None
    try:
        return loader.get_single_data() or {}
    except RecursionError:
        line = loader.get_mark().line + 1
        raise InputError(path, line, "YAML nested too deeply; write flatter values") from None
    except _DuplicateKey as exc:
        raise InputError(
            path, exc.line, f"duplicate key {exc.key!r} (first on line {exc.first}); keep one"
        ) from None
    except _Refused as exc:
        raise InputError(path, exc.line, exc.message) from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputError(path, line, f"not YAML ({exc.problem}); fix the syntax") from None
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"not YAML ({exc}); fix the syntax") from None
    finally:
        loader.dispose()


class _DuplicateKey(HandledError):
    """A key given twice in one mapping: YAML would silently keep the last."""

    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _Refused(HandledError):
    """A value refused on its line: a scalar PyYAML would crash on (a ValueError, exit 3), an
    alias inside its own anchor or past the file's length: what it is and how to fix it."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _unique_keys_loader() -> Any:
    """PyYAML's SafeLoader, refusing a key given twice in a mapping and impossible scalars.

    PyYAML keeps the last of two equal keys without a word, so a second ``holdouts:`` or
    ``gate_margin:`` further down the file would silently win (and an error about the value
    would name the first one's line). Its int and timestamp constructors raise a bare
    ValueError on ``1`` x 5,000 or ``2024-13-45``; here they name the line.
    """
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, text: str) -> None:
            super().__init__(text)
            self.characters = len(text)
            self.values = 0  # composed so far, an alias counted as all its anchor's values
            self.sizes: dict[int, int] = {}  # id of each node composed whole -> its values

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]  # (the stubs')
                node: Any = super().compose_node(parent, index)  # undefined: refused
                line = event.start_mark.line + 1
                size = self.sizes.get(id(node))
                if size is None:  # its anchor is still being composed: it holds itself
                    raise _Refused(
                        line,
                        f"alias *{event.anchor} is inside its own anchor &{event.anchor} "
                        "(a value that holds itself); write the value out",
                    )
                self.values += size
                if self.values > self.characters:
                    raise _Refused(
                        line,
                        f"alias *{event.anchor} makes the file stand for more values than its "
                        f"{self.characters:,} characters: aliases of anchors that hold aliases "
                        'multiply (a "billion laughs"); write the values out',
                    )
                return node
            node = super().compose_node(parent, index)  # a scalar, sequence or mapping
            items = node.value if isinstance(node.value, list) else ()
            children = [n for item in items for n in (item if isinstance(item, tuple) else [item])]
            self.sizes[id(node)] = 1 + sum(self.sizes[id(child)] for child in children)
            self.values += 1
            return node

        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError:
                digits = sum(c.isdigit() for c in node.value)
                raise _Refused(
                    node.start_mark.line + 1,
                    f"an integer of {digits:,} digits is more than Python reads "
                    f"({sys.get_int_max_str_digits():,}); write a smaller number",
                ) from None

        def construct_yaml_timestamp(self, node: Any) -> Any:
            try:
                return super().construct_yaml_timestamp(node)
            except ValueError as exc:
                raise _Refused(
                    node.start_mark.line + 1,
                    f"{node.value!r} is not a real date ({exc}); write one as YYYY-MM-DD",
                ) from None

        def construct_located(self, node: Any) -> Iterator[Located]:
            data = Located()
            yield data
            data.update(self.construct_mapping(node))
            # flatten_mapping has put the merged pairs first, so a mapping's own key wins
            for key_node, _ in node.value:
                key = self.construct_object(key_node)
                with contextlib.suppress(TypeError):  # an unhashable key: PyYAML refused it
                    data.lines[key] = key_node.start_mark.line + 1

        def construct_located_list(self, node: Any) -> Iterator[LocatedList]:
            data = LocatedList()
            yield data
            data.extend(self.construct_sequence(node))
            data.lines = [item.start_mark.line + 1 for item in node.value]

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:  # <<: merged below, overridden by own keys
                    continue
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _DuplicateKey(key, line, seen[key])
                except TypeError:  # an unhashable key: let PyYAML report it
                    continue
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    Loader.add_constructor("tag:yaml.org,2002:map", Loader.construct_located)
    Loader.add_constructor("tag:yaml.org,2002:seq", Loader.construct_located_list)
    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_timestamp)
    return Loader
