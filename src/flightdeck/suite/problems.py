"""Where and why msgspec refuses a value: the places in it, in the order a person reads it.

msgspec checks a value against a type in C and, when it refuses one, says what it expected
and where (``Expected `str` matching regex '\\S' - at `$.scope[1]```). This module asks it
about each place of a field's value in turn (the list before its items, a key before its
value, a nested record's fields in their order) and yields a :class:`Problem` for each place
it refuses, with the value there and msgspec's own words: the type is the only rule. The
rules a type carries for Python (:mod:`flightdeck.suite.columns`) are run at the same
places: a string's :class:`~flightdeck.suite.columns.Pattern` is said as msgspec says a
refused ``Meta(pattern=...)`` (kind ``pattern``, its words), before a length msgspec checks
for it, and a :class:`~flightdeck.suite.columns.Check` (a glob's syntax, a span's order, a
real date) as ``check``. A string holding an unpaired surrogate (msgspec passes it; it
cannot be written back as UTF-8) is added where nothing else is refused. The words a user
reads are chosen from a Problem in ``explanations.py``.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec

from flightdeck.files.strict_json import has_lone_surrogate
from flightdeck.suite.columns import Check, Pattern, rules_of

SET_BY_READER = "set by the reader; a file cannot set it"


@dataclass(frozen=True)
class Problem:
    """One place of a field's value that its type refuses (or that only holds a surrogate).

    ``kind`` is what msgspec said: ``type`` (not that JSON type), ``pattern`` (msgspec's or
    a :class:`~flightdeck.suite.columns.Pattern`), ``length``, ``enum``, ``shape`` (a
    nested record's field missing or unknown), ``range`` (a number out of bounds),
    ``check`` (a :class:`~flightdeck.suite.columns.Check`) or ``""`` when the value passes
    and only ``surrogate`` is true. ``path`` leads from the field to the place:
    item numbers, object keys and nested field names; ``at_key`` marks the key itself of an
    object entry. ``root`` is the field's whole value.
    """

    kind: str
    value: Any
    root: Any
    path: tuple[Any, ...] = ()
    at_key: bool = False
    surrogate: bool = False
    detail: str = ""  # msgspec's own message, without its place


def problems(value: Any, type_: Any) -> Iterator[Problem]:
    """Every place of ``value`` that ``type_`` refuses, in reading order."""
    yield from _walk(value, type_, value, (), False)


def refusal(value: Any, type_: Any) -> str | None:
    """msgspec's message when it refuses ``value`` (a plain JSON value) as ``type_``, else None."""
    try:
        msgspec.convert(value, type_)
    except msgspec.ValidationError as exc:
        return str(exc)
    except UnicodeEncodeError:  # msgspec cannot quote a surrogate in its message: mask them
        return refusal(_masked(value), type_)
    return None


def _masked(value: Any) -> Any:
    """``value`` with each unpaired surrogate replaced by U+FFFD (its shape and types kept)."""
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if isinstance(value, dict):
        return {_masked(k): _masked(v) for k, v in value.items()}
    return value


def file_fields(cls: type[msgspec.Struct]) -> tuple[msgspec.structs.FieldInfo, ...]:
    """The fields a file holds, in the record's order (those the reader sets left out)."""
    return tuple(
        f
        for f in msgspec.structs.fields(cls)
        if not any(getattr(m, "description", None) == SET_BY_READER for m in _metas(f.type))
    )


def _walk(
    value: Any, type_: Any, root: Any, path: tuple[Any, ...], at_key: bool
) -> Iterator[Problem]:
    base = _base(type_)
    if get_origin(base) in (Union, types.UnionType):
        members = [t for t in get_args(base) if t not in (type(None), msgspec.UnsetType)]
        if value is not None and len(members) == 1:  # X | None, X | Unset: a given X
            yield from _walk(value, members[0], root, path, at_key)
            return
    message = refusal(value, type_)
    place = "" if message is None else message.partition(" - at `")[2]
    container = _container(base, value)
    rules = rules_of(type_)
    pattern = next((r for r in rules if isinstance(r, Pattern)), None)
    if pattern is not None and isinstance(value, str) and not pattern.matches(value):
        yield Problem("pattern", value, root, path, at_key, _lone(value), pattern.detail)
        return
    at_node = place in ("", "$`") and _kind(message or "") != "shape"  # a record says which
    if message is not None and (container is None or at_node):
        yield Problem(_kind(message), value, root, path, at_key, _lone(value), _detail(message))
        return
    if container is None:
        checks = [r for r in rules if isinstance(r, Check)]
        if _lone(value):
            yield Problem("", value, root, path, at_key, True)
        elif any(not check.holds(value) for check in checks):
            yield Problem("check", value, root, path, at_key)
        return
    yield from container(value, root, path)


def _container(
    base: Any, value: Any
) -> Callable[[Any, Any, tuple[Any, ...]], Iterator[Problem]] | None:
    """How to walk the places of ``value`` as ``base``; None for a leaf."""
    origin = get_origin(base)
    if origin in (tuple, list) and isinstance(value, list):
        item = get_args(base)[0]

        def items(v: Any, root: Any, path: tuple[Any, ...]) -> Iterator[Problem]:
            for number, element in enumerate(v):
                yield from _walk(element, item, root, (*path, number), False)

        return items
    if origin is dict and isinstance(value, dict):
        key_type, value_type = get_args(base)

        def entries(v: Any, root: Any, path: tuple[Any, ...]) -> Iterator[Problem]:
            for key, element in v.items():
                yield from _walk(key, key_type, root, (*path, key), True)
                yield from _walk(element, value_type, root, (*path, key), False)

        return entries
    if isinstance(base, type) and issubclass(base, msgspec.Struct) and isinstance(value, dict):
        return lambda v, root, path: _fields(base, v, root, path)
    return None


def _fields(
    cls: type[msgspec.Struct], value: dict[str, Any], root: Any, path: tuple[Any, ...]
) -> Iterator[Problem]:
    """A nested record: its shape (an unknown field, a missing one), then each field in order."""
    fields = file_fields(cls)
    if cls.__struct_config__.forbid_unknown_fields:
        for name in sorted(set(value) - {f.encode_name for f in fields}):
            yield Problem("shape", value, root, path, detail=f"unknown field {name!r}")
    for f in fields:
        if f.required and f.encode_name not in value:
            yield Problem("shape", value, root, path, detail=f"missing field {f.encode_name!r}")
    for f in fields:
        if f.encode_name in value:
            yield from _walk(value[f.encode_name], f.type, root, (*path, f.encode_name), False)


def _kind(message: str) -> str:
    said = message.partition(" - at `")[0]
    if said.startswith("Invalid enum value"):
        return "enum"
    if said.startswith("Object "):  # missing required field, contains unknown field
        return "shape"
    if "matching regex" in said:
        return "pattern"
    if "of length" in said:
        return "length"
    if ", got `" in said:
        return "type"
    return "range"  # ``Expected `int` >= 1`` and the like


def _detail(message: str) -> str:
    return message.partition(" - at `")[0]


def _lone(value: Any) -> bool:
    return has_lone_surrogate(value)


def _base(type_: Any) -> Any:
    while get_origin(type_) is Annotated:
        type_ = get_args(type_)[0]
    return type_


def _metas(type_: Any) -> tuple[Any, ...]:
    return tuple(getattr(type_, "__metadata__", ()))
