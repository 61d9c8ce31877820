"""Decode suite files into msgspec Structs, and name the first bad line in our own words.

Each record is one msgspec Struct (``schema.py``) whose field types hold the rules, so a
valid file is decoded and checked in C, the whole file in one call, and the rules its types
carry for Python run once over each place of the file (:mod:`flightdeck.suite.columns`).
Only when a line fails is it read again with the standard ``json`` module (whose syntax
messages we quote), and msgspec is asked where each field fails
(:mod:`flightdeck.suite.problems`): the first place it refuses, in the order the record's
words list its fields, is said in the words of ``explanations.py``. The Struct is the only
rule; the words only say what it refused.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

import msgspec
from msgspec import Meta

from flightdeck.errors import InputError, InternalError, JSONProblem
from flightdeck.files.jsonl import decode_object
from flightdeck.files.strict_json import (
    has_lone_surrogate,
    line_of_place,
    loads_strict,
    texts_repeat_a_key,
)
from flightdeck.suite.columns import NON_BLANK, Columns, Place, Rule, accepts, colons_agree, places
from flightdeck.suite.problems import SET_BY_READER, Problem, file_fields, problems

T = TypeVar("T", bound=msgspec.Struct)
Words = Callable[[Problem], "str | None"]

# A field the reader fills in (the line number, the answer's hash). No value a file could
# give passes these constraints, so msgspec refuses the field in a file as firmly as an
# unknown one, and the words call it unknown.
Line = Annotated[int, Meta(ge=1, le=0, description=SET_BY_READER)]
Computed = Annotated[str, Meta(min_length=1, max_length=0, description=SET_BY_READER)]
NonBlank = Annotated[str, NON_BLANK]  # searched for a \S, checked with str.strip
AT_LEAST_ONE = Meta(min_length=1)
SURROGATE = "holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode"


def show(value: object) -> str:
    """A value as the messages quote it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Schema(Generic[T]):
    """A record type and what its readers need beside it.

    ``words`` gives each field a file holds the words for what msgspec refuses in it, in
    the order the fields are checked; a field's words return None only for a place that
    merely holds a surrogate, which the record's own message names after every field.
    ``finish`` normalises decoded records in place (lower-case hex, the answer's hash),
    given their :class:`~flightdeck.suite.columns.Columns`, before the reader sets their
    line numbers. ``not_null`` names fields a file may leave out but not set to null,
    though the record holds None for them. The rules the types carry for Python are found
    in the record's type tree (:attr:`rules`) and run over many records at once.
    """

    cls: type[T]
    words: Mapping[str, Words]
    finish: Callable[[Columns], None] | None = None
    missing: Mapping[str, str] = field(default_factory=dict)
    not_null: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = {f.name for f in self.file_fields}
        assert set(self.words) == names, f"{self.cls.__name__}: words for {sorted(names)}"

    @cached_property
    def decoder(self) -> msgspec.json.Decoder[T]:
        return msgspec.json.Decoder(self.cls)

    @cached_property
    def file_fields(self) -> tuple[msgspec.structs.FieldInfo, ...]:
        """The fields a file holds, in the record's order (those the reader sets left out)."""
        return file_fields(self.cls)

    @cached_property
    def rules(self) -> tuple[tuple[Place, Rule], ...]:
        """Every rule the record's types carry for Python, with the place it applies to."""
        return places(self.cls)

    def accepts(self, records: list[T]) -> bool:
        """Whether the rules the types carry for Python hold in every one of ``records``."""
        return accepts(self.rules, Columns(records))


@dataclass(frozen=True)
class Refusal:
    """What is wrong with a value, and where: object keys and item numbers (``()``: all of it)."""

    message: str
    place: tuple[str | int, ...] = ()


def first_refusal(obj: dict[str, Any], schema: Schema[Any]) -> Refusal | None:
    """What is wrong with ``obj`` as a record, and where, in the order a person fixes it.

    An unknown field first, then each field in the order of ``schema.words``: missing, or
    the first place msgspec refuses in it; a string with an unpaired surrogate that no
    field's words name is the record's problem, after every field.
    """
    fields = {f.name: f for f in schema.file_fields}
    names = [f.encode_name for f in schema.file_fields]
    if schema.cls.__struct_config__.forbid_unknown_fields:
        unknown = sorted(set(obj) - set(names))
        if unknown:
            what = f"unknown field {unknown[0]!r}; allowed fields are {', '.join(names)}"
            return Refusal(what, (unknown[0],))
    for name, words in schema.words.items():
        key = fields[name].encode_name
        if key not in obj:
            if fields[name].required:
                return Refusal(schema.missing.get(name, f"missing field {key!r}; add it"))
            continue
        type_ = fields[name].type
        if name in schema.not_null:  # the record's None means "left out", never null
            type_ = _without_none(type_)
        for problem in problems(obj[key], type_):
            message = words(problem)
            if message is not None:
                return Refusal(message, (key, *problem.path))
            if problem.kind:
                where = f"{schema.cls.__name__}.{name}"
                raise InternalError(f"{where}: no words for {problem.kind} {problem.detail!r}")
    return Refusal(SURROGATE) if has_lone_surrogate(obj) else None


def _without_none(type_: Any) -> Any:
    members = [t for t in getattr(type_, "__args__", ()) if t is not type(None)]
    return members[0] if len(members) == 1 else type_


def decode_lines(path: Path, data: bytes, schema: Schema[T]) -> tuple[list[T], InputError | None]:
    """The records of a JSON Lines file up to its first bad line, and that line's error.

    A valid file is decoded in one call (:func:`_whole_file`); a record never runs into the
    next line, and each record's ``line`` is set to its line number. A file that one call
    does not take whole is walked line by line, which names the first bad line.
    """
    columns, error = decode_columns(path, data, schema)
    return columns.records, error


def decode_columns(path: Path, data: bytes, schema: Schema[T]) -> tuple[Columns, InputError | None]:
    """:func:`decode_lines`, its records as the columns their rules were checked on (which
    the readers' rules between records read again: the ids, the raters)."""
    whole = _whole_file(data, schema)
    if whole is not None:
        columns, lines = whole
        records: list[T] = columns.records
        error = None
    else:
        records, lines, error = _line_by_line(path, data.split(b"\n"), schema)
        columns = Columns(records)
    if schema.finish is not None:
        schema.finish(columns)
    assert len(records) == len(lines), "a record without its line number"
    deque(map(msgspec.structs.force_setattr, records, repeat("line"), lines), maxlen=0)
    return columns, error


def _whole_file(data: bytes, schema: Schema[T]) -> tuple[Columns, Sequence[int]] | None:
    """Every record of a valid file from one ``Decoder.decode_lines`` call (as the columns
    its rules were checked on), and their lines; None when the file needs the line-by-line
    walk (a bad line, or lines not one record each).

    ``decode_lines`` reads whitespace-separated values, so it would take two records on one
    line, or one record written over two lines, as well as one per line. It is held to one
    record per line: a newline never falls inside a JSON string (msgspec refuses a raw
    control character there), so a value written over two lines has a line break between
    two of its tokens, and inside a value no token that ends a line with ``}`` is followed by
    one that starts the next with ``{``. So when every non-blank line starts with ``{`` and
    ends with ``}``, no value spans a line break, each such line holds at least one whole
    value, and as many values as lines means exactly one each. Blank lines (JSON white space
    only) are skipped by both; any other byte between values makes ``decode_lines`` refuse.
    """
    try:
        records = schema.decoder.decode_lines(data)
    except msgspec.DecodeError:  # ValidationError included
        return None
    n = len(records)
    lines: Sequence[int]
    kept: list[bytes] | None = None  # the lines' texts, when they had to be split
    if _plain_lines(data, n):  # the common case, checked on the whole buffer in C
        lines = range(1, n + 1)
    else:
        stripped = [raw.strip() for raw in data.split(b"\n")]
        kept = [text for text in stripped if text]
        if len(kept) != n or not _plain_lines(b"\n".join(kept), n):
            return None
        lines = [number for number, text in enumerate(stripped, start=1) if text]
    columns = Columns(records)
    if not accepts(schema.rules, columns):
        return None
    fields, not_null = schema.file_fields, schema.not_null
    if not colons_agree(data, columns, in_file=fields, not_null=not_null) and (
        _maybe_null(schema, data, records)
        or texts_repeat_a_key(data.split(b"\n")[:n] if kept is None else kept)
    ):
        return None
    return columns, lines


def _plain_lines(data: bytes, n: int) -> bool:
    """Whether ``data`` is ``n`` lines, each starting with ``{`` and ending with ``}``, with
    no blank line (a last newline ends the last one)."""
    if n == 0 or data.count(b"\n") - data.endswith(b"\n") != n - 1:
        return False
    ends = data.endswith(b"}") or data.endswith(b"}\n")
    return data.startswith(b"{") and ends and data.count(b"}\n{") == n - 1


def decode_document(path: Path, obj: dict[str, Any], schema: Schema[T], data: bytes) -> T:
    """One JSON object (a whole file, read from ``data``) as a record, or an InputError naming
    the file, and the line of the refused field when the file has several."""
    outcome = _record_or_error(obj, schema, path, None, data)
    if isinstance(outcome, InputError):
        raise outcome
    return outcome


def _record_or_error(
    obj: dict[str, Any], schema: Schema[T], path: Path, line: int | None, data: bytes | None = None
) -> T | InputError:
    """The record of one parsed object, or the error its words give (in ``data``: on its line)."""
    refused = first_refusal(obj, schema)
    if refused is None:
        try:
            record = msgspec.convert(obj, schema.cls)
        except msgspec.ValidationError as exc:  # a refusal no field's walk found
            refused = Refusal(f"{exc}; fix the record")
        else:
            if schema.accepts([record]):
                return record
            where = f"{path}:{line}" if line is not None else str(path)
            raise InternalError(f"{where}: a rule of {schema.cls.__name__} has no words")
    if data is not None:
        line = line_of_place(data, refused.place)
    return InputError(path, line, refused.message)


def _maybe_null(schema: Schema[Any], raw: bytes, records: list[Any]) -> bool:
    """Whether a not-null field may be null in ``raw`` (a file or a line) and its records."""
    return any(
        f'"{name}"'.encode() in raw and any(getattr(r, name) is None for r in records)
        for name in schema.not_null
    )


def _line_by_line(
    path: Path, parts: list[bytes], schema: Schema[T]
) -> tuple[list[T], list[int], InputError | None]:
    records, lines, error, unchecked = _up_to_first_bad(path, parts, schema)
    # the lines msgspec took are checked for repeated keys together (one pass, as in
    # decode_lines), and one by one only when some line repeats a key
    if unchecked and texts_repeat_a_key([parts[number - 1] for number in unchecked]):
        number = next(n for n in unchecked if texts_repeat_a_key([parts[n - 1]]))
        keep = lines.index(number)
        outcome = _explain_line(path, number, parts[number - 1], schema)
        assert isinstance(outcome, InputError), "a repeated key was not refused"
        return records[:keep], lines[:keep], outcome
    return records, lines, error


def _up_to_first_bad(
    path: Path, parts: list[bytes], schema: Schema[T]
) -> tuple[list[T], list[int], InputError | None, list[int]]:
    """Records up to the first bad line, its error, and the lines msgspec alone accepted.

    msgspec decodes each line; the rules the types carry for Python run over the lines it
    took since the last check, together, whenever it refuses a line and at the end, so a
    line they refuse is named before a later one msgspec refuses (:func:`_first_refused`).
    """
    decode = schema.decoder.decode
    walk = _Walk[T](path, schema)
    for number, raw in enumerate(parts, start=1):
        if not raw.strip():
            continue
        try:
            record: T | None = decode(raw)
        except msgspec.DecodeError:
            record = None
        if record is not None:
            walk.take(number, raw, record)
            continue
        error = walk.settle() or walk.explain(number, raw)
        if error is not None:
            return walk.records, walk.lines, error, walk.unchecked()
    return walk.records, walk.lines, walk.settle(), walk.unchecked()


@dataclass
class _Walk(Generic[T]):
    """The records of a line-by-line walk so far, and which of them the rules have seen."""

    path: Path
    schema: Schema[T]
    records: list[T] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    raws: list[bytes] = field(default_factory=list)
    checked: int = 0  # records[:checked] passed the rules (or were read strictly)
    strict: set[int] = field(default_factory=set)  # lines read strictly, not msgspec's alone

    def take(self, number: int, raw: bytes, record: T) -> None:
        self.records.append(record)
        self.lines.append(number)
        self.raws.append(raw)

    def explain(self, number: int, raw: bytes) -> InputError | None:
        """Read a line msgspec refused strictly: its error, or its record taken."""
        outcome = _explain_line(self.path, number, raw, self.schema)
        if isinstance(outcome, InputError):
            return outcome
        self.take(number, raw, outcome)
        self.strict.add(number)
        self.checked = len(self.records)
        return None

    def settle(self) -> InputError | None:
        """Run the rules over the records taken since the last check; the first refused's error."""
        while self.checked < len(self.records):
            i = _first_refused(self.schema, self.records, self.raws, self.checked)
            if i is None:
                self.checked = len(self.records)
                break
            outcome = _explain_line(self.path, self.lines[i], self.raws[i], self.schema)
            if isinstance(outcome, InputError):
                del self.records[i:], self.lines[i:], self.raws[i:]
                return outcome
            self.records[i] = outcome
            self.strict.add(self.lines[i])
            self.checked = i + 1
        return None

    def unchecked(self) -> list[int]:
        return [number for number in self.lines if number not in self.strict]


def _first_refused(
    schema: Schema[T], records: list[T], raws: list[bytes], start: int
) -> int | None:
    """The first of ``records[start:]`` that a rule refuses (or that may hold a null where
    none may be), or None: the rules run over a half at a time, about twice over in all."""

    def refused(lo: int, hi: int) -> bool:
        part = records[lo:hi]
        if not schema.accepts(part):
            return True
        nulls = zip(part, raws[lo:hi], strict=True) if schema.not_null else ()
        return any(_maybe_null(schema, raw, [record]) for record, raw in nulls)

    lo, hi = start, len(records)
    if not refused(lo, hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refused(lo, mid):
            hi = mid
        else:
            lo = mid
    return lo


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
