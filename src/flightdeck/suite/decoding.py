"""Decode suite files into msgspec Structs, and name the first bad line in our own words.

Each record is one msgspec Struct (``schema.py``) whose field types hold the rules, so a
valid file is decoded and checked in C, line by line, in one pass. Only when a line fails
is it read again with the standard ``json`` module (whose syntax messages we quote) and
each field held against its *explanation*: a short ladder of the schema's own types (a
string, then a non-blank string, then one of the kinds ...) whose first failing rung picks
the message. An explanation never accepts a line; only the Struct does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

import msgspec
from msgspec import Meta

from flightdeck.errors import InputError, JSONProblem
from flightdeck.files.jsonl import decode_object
from flightdeck.files.strict_json import (
    has_lone_surrogate,
    loads_strict,
    texts_repeat_a_key,
)

T = TypeVar("T", bound=msgspec.Struct)
Explain = Callable[[Any], "str | None"]

SET_BY_READER = "set by the reader; a file cannot set it"
# A field the reader fills in (the line number, the answer's hash). No value a file could
# give passes these constraints, so msgspec refuses the field in a file as firmly as an
# unknown one, and the explanation calls it unknown.
Line = Annotated[int, Meta(ge=1, le=0, description=SET_BY_READER)]
Computed = Annotated[str, Meta(pattern="(?!)", description=SET_BY_READER)]
# Non-blank: re's \S and str.strip agree on what is white space (both use str.isspace).
NonBlank = Annotated[str, Meta(pattern=r"\S")]
AT_LEAST_ONE = Meta(min_length=1)
SURROGATE = "holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode"


def show(value: object) -> str:
    """A value as the messages quote it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fails(value: Any, type_: Any) -> bool:
    """Whether msgspec refuses ``value`` (a plain JSON value) as ``type_``."""
    try:
        msgspec.convert(value, type_)
    except (msgspec.ValidationError, UnicodeEncodeError):  # msgspec cannot quote a surrogate
        return True
    return False


@dataclass(frozen=True)
class Schema(Generic[T]):
    """A record type and what its readers need beside it.

    ``explain`` gives each field a file holds its explanation, in the order the fields
    are explained. ``check`` holds the rules no type can (a glob's syntax, a span's
    order), over many records at once; ``finish`` normalises decoded records in place
    (lower-case hex, the answer's hash) before the reader sets their line numbers.
    ``not_null`` names fields a file may leave out but not set to null, though the
    record holds None for them; a line that might set one goes to the explanation.
    """

    cls: type[T]
    explain: Mapping[str, Explain]
    check: Callable[[list[T]], bool] | None = None
    finish: Callable[[list[T]], None] | None = None
    missing: Mapping[str, str] = field(default_factory=dict)
    not_null: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = {f.name for f in self.file_fields}
        assert set(self.explain) == names, f"{self.cls.__name__}: explain {sorted(names)}"

    @cached_property
    def decoder(self) -> msgspec.json.Decoder[T]:
        return msgspec.json.Decoder(self.cls)

    @cached_property
    def file_fields(self) -> tuple[msgspec.structs.FieldInfo, ...]:
        """The fields a file holds, in the record's order (those the reader sets left out)."""
        return tuple(
            f
            for f in msgspec.structs.fields(self.cls)
            if not any(getattr(m, "description", None) == SET_BY_READER for m in _metas(f.type))
        )

    def accepts(self, records: list[T]) -> bool:
        return self.check is None or self.check(records)


def _metas(type_: Any) -> tuple[Any, ...]:
    return tuple(getattr(type_, "__metadata__", ()))


def explain_record(obj: dict[str, Any], schema: Schema[Any]) -> str | None:
    """Why ``obj`` is not a valid record, in the order a person fixes it; None if no rung fails."""
    fields = {f.name: f for f in schema.file_fields}
    names = [f.encode_name for f in schema.file_fields]
    if schema.cls.__struct_config__.forbid_unknown_fields:
        unknown = sorted(set(obj) - set(names))
        if unknown:
            return f"unknown field {unknown[0]!r}; allowed fields are {', '.join(names)}"
    for name, explain in schema.explain.items():
        key = fields[name].encode_name
        if key not in obj:
            if fields[name].required:
                return schema.missing.get(name, f"missing field {key!r}; add it")
            continue
        message = explain(obj[key])
        if message is not None:
            return message
    return None


def decode_lines(path: Path, data: bytes, schema: Schema[T]) -> tuple[list[T], InputError | None]:
    """The records of a JSON Lines file up to its first bad line, and that line's error.

    Each non-blank line is decoded on its own (a record never runs into the next line),
    and each record's ``line`` is set to its line number.
    """
    decode = schema.decoder.decode
    parts = data.split(b"\n")
    filled = [raw for raw in parts if raw.strip()]
    try:
        records: list[T] | None = [decode(raw) for raw in filled]
    except msgspec.DecodeError:  # ValidationError included
        records = None
    if (
        records is not None
        and schema.accepts(records)
        and not _maybe_null(schema, data, records)
        and not _keys_repeated(filled)
    ):
        lines = [n for n, raw in enumerate(parts, start=1) if raw.strip()]
        error = None
    else:
        records, lines, error = _line_by_line(path, parts, schema)
    if schema.finish is not None:
        schema.finish(records)
    set_line = msgspec.structs.force_setattr
    for record, number in zip(records, lines, strict=True):
        set_line(record, "line", number)
    return records, error


def decode_document(path: Path, obj: dict[str, Any], schema: Schema[T]) -> T:
    """One JSON object (a whole file) as a record, or an InputError naming the file."""
    outcome = _record_or_error(obj, schema, path, None)
    if isinstance(outcome, InputError):
        raise outcome
    return outcome


def _record_or_error(
    obj: dict[str, Any], schema: Schema[T], path: Path, line: int | None
) -> T | InputError:
    """The record of one parsed object, or the error the schema's explanations give for it."""
    message = explain_record(obj, schema)
    if message is None and has_lone_surrogate(obj):
        message = SURROGATE
    if message is None:
        try:
            record = msgspec.convert(obj, schema.cls)
        except msgspec.ValidationError as exc:
            message = f"{exc}; fix the record"
        else:
            if schema.accepts([record]):
                return record
            where = f"{path}:{line}" if line is not None else str(path)
            raise AssertionError(f"{where}: a rule of {schema.cls.__name__} has no explanation")
    return InputError(path, line, message)


def _maybe_null(schema: Schema[Any], raw: bytes, records: list[Any]) -> bool:
    """Whether a not-null field may be null in ``raw`` (a file or a line) and its records."""
    return any(
        f'"{name}"'.encode() in raw and any(getattr(r, name) is None for r in records)
        for name in schema.not_null
    )


def _keys_repeated(lines: list[bytes]) -> bool:
    """Whether a key repeats in any line msgspec read as a record (it keeps the last)."""
    return texts_repeat_a_key(lines)


def _line_by_line(
    path: Path, parts: list[bytes], schema: Schema[T]
) -> tuple[list[T], list[int], InputError | None]:
    records, lines, error, unchecked = _up_to_first_bad(path, parts, schema)
    # the lines msgspec took are checked for repeated keys together (one pass, as in
    # decode_lines), and one by one only when some line repeats a key
    if unchecked and _keys_repeated([parts[number - 1] for number in unchecked]):
        number = next(n for n in unchecked if _keys_repeated([parts[n - 1]]))
        keep = lines.index(number)
        outcome = _explain_line(path, number, parts[number - 1], schema)
        assert isinstance(outcome, InputError), "a repeated key was not refused"
        return records[:keep], lines[:keep], outcome
    return records, lines, error


def _up_to_first_bad(
    path: Path, parts: list[bytes], schema: Schema[T]
) -> tuple[list[T], list[int], InputError | None, list[int]]:
    """Records up to the first bad line, its error, and the lines msgspec alone accepted."""
    decode = schema.decoder.decode
    records: list[T] = []
    lines: list[int] = []
    unchecked: list[int] = []
    for number, raw in enumerate(parts, start=1):
        if not raw.strip():
            continue
        try:
            record: T | None = decode(raw)
        except msgspec.DecodeError:
            record = None
        if record is None or not schema.accepts([record]) or _maybe_null(schema, raw, [record]):
            outcome = _explain_line(path, number, raw, schema)
            if isinstance(outcome, InputError):
                return records, lines, outcome, unchecked
            record = outcome
        else:
            unchecked.append(number)
        records.append(record)
        lines.append(number)
    return records, lines, None, unchecked


def _explain_line(path: Path, number: int, raw: bytes, schema: Schema[T]) -> T | InputError:
    """The error of a line msgspec refused (or whose keys repeat), or its record.

    The line is read again strictly (:func:`flightdeck.files.jsonl.loads_strict`): bad JSON, a key
    given twice, a number out of range is named as such. A lone surrogate is named with its
    field, from the explanations, as the value json reads.
    """
    try:
        obj = decode_object(path, number, raw)
    except InputError as exc:
        with_surrogate = _with_surrogate(raw)
        if with_surrogate is None:
            return exc
        obj = with_surrogate
    return _record_or_error(obj, schema, path, number)


def _with_surrogate(raw: bytes) -> dict[str, Any] | None:
    """The object of a line whose only fault as JSON is a lone surrogate; else None."""
    try:
        loads_strict(raw)
    except JSONProblem as exc:
        if exc.kind == "surrogate" and isinstance(exc.value, dict):
            return exc.value
    return None


# --- explanations shared by several records ------------------------------------------------


def text(name: str, *, blank_ok: bool = False, then: tuple[Any, Explain] | None = None) -> Explain:
    """A string field: a string, valid Unicode, not blank, then ``then``'s type."""

    def explain(value: Any) -> str | None:
        if fails(value, str):
            return f"{name} must be a string, got {show(value)}"
        if has_lone_surrogate(value):
            return f"{name} {SURROGATE}"
        if not blank_ok and fails(value, NonBlank):
            return f"{name} is empty; give a non-empty string"
        if then is not None and fails(value, then[0]):
            return then[1](value)
        return None

    return explain


def texts(name: str, *, at_least_one: bool, each: Explain | None = None) -> Explain:
    """A list of non-blank strings; ``each`` explains an item once all items are strings."""

    def explain(value: Any) -> str | None:
        if fails(value, list[Any]):
            return f"{name} must be a list of strings, got {show(value)}"
        if at_least_one and fails(value, Annotated[list[Any], AT_LEAST_ONE]):
            return f"{name} is empty; list at least one"
        for item in value:
            if fails(item, NonBlank):
                return f"{name} must hold non-empty strings, got {show(item)}"
            if has_lone_surrogate(item):
                return f"{name} {SURROGATE}"
        for item in value if each is not None else ():
            message = each(item)  # type: ignore[misc]
            if message is not None:
                return message
        return None

    return explain


def flag(name: str) -> Explain:
    """A true-or-false field."""
    return lambda value: (
        f"{name} must be true or false, got {show(value)}" if fails(value, bool) else None
    )


def either(type_: Any, message: Callable[[Any], str]) -> Explain:
    """A field whose one rung is its own type."""
    return lambda value: message(value) if fails(value, type_) else None
