"""The rules a record's types carry for Python, and their check over a whole file at once.

msgspec checks a type, a length, a ``Literal``, a number's range in C as it decodes, but a
``Meta(pattern=...)`` costs it a call into Python's ``re`` for every string, which was most
of a reader's time. So a string's pattern is written on its type as a :class:`Pattern`
and a rule no regex holds (a glob's syntax, a span's order, a real date) as a
:class:`Check`; msgspec ignores both (it reads only ``Meta`` in ``Annotated``), and a
length the pattern implies stays a ``Meta`` msgspec checks. The reader gathers, from the
decoded records, every value at each place of the record's type tree (:func:`places`: its
fields, nested records, the items of a tuple, the keys and values of a dict, a given
optional) into one list, and runs each rule once over its list (:func:`accepts`), which a
rule does in far less than a call per value (one ``str.strip`` pass, one regex over the
values joined). :mod:`flightdeck.suite.problems` runs the same rules on one value, to say
where a bad line fails and in msgspec's own words for a pattern. The same columns tell
whether a file msgspec took whole gave a key twice (:func:`colons_agree`), which msgspec
lets through, keeping the last.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec
from msgspec import Meta

from flightdeck.errors import HandledError
from flightdeck.files.strict_json import ESCAPED_COLON

Place = tuple[str, ...]
# The steps from a record to a place: a field's name, or one of these.
ITEM, KEY, VALUE, GIVEN = "[]", "{key}", "{value}", "?"


@dataclass(frozen=True, eq=False)
class Pattern:
    """A regex a string must match, searched as ``Meta(pattern=...)`` would be.

    ``column`` is the same rule over many strings at once: true exactly when the pattern
    matches each of them (``tests/unit/test_columns.py`` holds every rule to that).
    ``colon_free``: no string the pattern matches holds a ``:`` (so the count of a file's
    colons, :func:`colons_agree`, skips them).
    """

    pattern: str
    column: Callable[[list[str]], bool]
    colon_free: bool = False

    def matches(self, value: str) -> bool:
        return _compiled(self.pattern).search(value) is not None

    @property
    def detail(self) -> str:
        """What msgspec says when it refuses a string for this pattern."""
        return f"Expected `str` matching regex {self.pattern!r}"


@dataclass(frozen=True, eq=False)
class Check:
    """A rule for one value that no type can hold; ``column`` runs it over many at once."""

    holds: Callable[[Any], bool]
    column: Callable[[list[Any]], bool] | None = None

    def over(self, values: list[Any]) -> bool:
        return all(map(self.holds, values)) if self.column is None else self.column(values)


Rule = Pattern | Check


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def searched(pattern: str) -> Pattern:
    """A pattern checked string by string (one ``re`` call each, as msgspec would)."""
    return Pattern(pattern, lambda values: all(map(_compiled(pattern).search, values)))


# re's \s is str.isspace (as str.strip's white space is), so a string holds a \S exactly
# when str.strip leaves something of it: one C call a string, no regex.
NON_BLANK = Pattern(r"\S", lambda values: all(map(str.strip, values)))


@dataclass(frozen=True, eq=False)
class Spelled:
    """A string spelled as ``prefix`` and then ``length`` characters of the class ``chars``
    (a regex class such as ``[0-9a-f]``), or one or more of them when ``length`` is None.

    msgspec checks the length (:attr:`size`), in C; the characters are checked over a whole
    column with one regex over the values joined: a class of single characters holds for a
    concatenation exactly when it holds for each part, and with every value's length known,
    each value's ``prefix`` is checked where it starts.
    """

    chars: str
    length: int | None = None
    prefix: str = ""

    @functools.cached_property
    def pattern(self) -> Pattern:
        count = "+" if self.length is None else f"{{{self.length}}}"
        colon_free = ":" not in self.prefix and _compiled(self.chars).fullmatch(":") is None
        return Pattern(
            rf"\A{re.escape(self.prefix)}{self.chars}{count}\Z", self._column, colon_free
        )

    @functools.cached_property
    def size(self) -> Meta:
        """The lengths the pattern allows, as the constraint msgspec checks in C."""
        if self.length is None:
            return Meta(min_length=len(self.prefix) + 1)
        whole = len(self.prefix) + self.length
        return Meta(min_length=whole, max_length=whole)

    def _column(self, values: list[str]) -> bool:
        if self.prefix:
            if not all(map(str.startswith, values, repeat(self.prefix))):
                return False
            values = list(map(itemgetter(slice(len(self.prefix), None)), values))
        return _compiled(f"{self.chars}*\\Z").match("".join(values)) is not None


def rules_of(type_: Any) -> tuple[Rule, ...]:
    """The rules a type carries for Python (in its ``Annotated`` metadata), patterns first."""
    found = [m for m in getattr(type_, "__metadata__", ()) if isinstance(m, Pattern | Check)]
    return tuple(sorted(found, key=lambda rule: not isinstance(rule, Pattern)))


def places(type_: Any) -> tuple[tuple[Place, Rule], ...]:
    """Every rule in a type's tree, with the place of the values it applies to."""
    return tuple(_places(type_, ()))


def _places(type_: Any, place: Place) -> Iterator[tuple[Place, Rule]]:
    for rule in rules_of(type_):
        yield place, rule
    base = type_
    while get_origin(base) is Annotated:
        base = get_args(base)[0]
    origin, args = get_origin(base), get_args(base)
    if origin in (Union, types.UnionType):
        members = [t for t in args if t not in (type(None), msgspec.UnsetType)]
        if len(members) == 1:  # X | None, X | Unset: the values given
            yield from _places(members[0], (*place, GIVEN))
        elif any(places(member) for member in members):
            raise TypeError(f"{base}: rules inside a union of several types are not supported")
    elif origin in (tuple, list):
        if origin is tuple and args[1:] != (Ellipsis,):
            raise TypeError(f"{base}: a tuple of fixed length is not supported")
        yield from _places(args[0], (*place, ITEM))
    elif origin is dict:
        yield from _places(args[0], (*place, KEY))
        yield from _places(args[1], (*place, VALUE))
    elif isinstance(base, type) and issubclass(base, msgspec.Struct):
        for field in msgspec.structs.fields(base):
            yield from _places(field.type, (*place, field.name))


class Columns:
    """The values at each place of some records, each list built once, when first asked for."""

    def __init__(self, records: list[Any]) -> None:
        self.records = records
        self._at: dict[Place, list[Any]] = {(): records}

    def __getitem__(self, place: Place) -> list[Any]:
        values = self._at.get(place)
        if values is None:
            parent, step = self[place[:-1]], place[-1]
            values = self._at[place] = _step(step, parent)
        return values


def _step(step: str, values: list[Any]) -> list[Any]:
    if step == ITEM:
        return list(chain.from_iterable(values))
    if step == KEY:
        return list(chain.from_iterable(map(dict.keys, values)))
    if step == VALUE:
        return list(chain.from_iterable(map(dict.values, values)))
    if step == GIVEN:
        return [v for v in values if v is not None and v is not msgspec.UNSET]
    return list(map(attrgetter(step), values))


def accepts(rules: tuple[tuple[Place, Rule], ...], columns: Columns) -> bool:
    """Whether every rule holds for every value at its place (each rule once, over a list)."""
    for place, rule in rules:
        values = columns[place]
        if not values:
            continue
        if isinstance(rule, Pattern):
            if not rule.column(values):
                return False
        elif not rule.over(values):
            return False
    return True


# --- a key given twice, told from the colons of the records already decoded -----------
# Every key of a JSON text ends with the one ":" outside strings after it; every other colon
# is in a string, which the record holds as the file wrote it (\u003a sends the file to the
# closer look). So a file giving each key once has a colon a key its records were given and
# those in their strings, counted from the type tree and the columns (no second encoding); a
# key given twice adds one, as does a not-null field given as null (held as None, as if left
# out). Each count not exact is low: the two can differ without a repeat, never agree with one.

FieldInfo = msgspec.structs.FieldInfo
_SCALARS = (bool, int, float, type(None), msgspec.UnsetType)  # JSON without a colon
_WORD = re.compile(r"[A-Za-z0-9_-]+\Z")  # a name no JSON token but a string touches


class _Uncountable(HandledError):
    """Not counted (``Any``, ``Raw``, an array-like record, a default with a colon...)."""


def colons_agree(
    data: bytes, columns: Columns, *, in_file: tuple[FieldInfo, ...], not_null: tuple[str, ...]
) -> bool:
    """Whether ``data``, a file of one record a line that msgspec took whole as
    ``columns.records``, has exactly the colons of their keys and strings: then no key is
    given twice at any depth and no not-null field is given as null. False means: look closer.

    ``in_file`` are the fields a file may give (the reader sets the others); ``not_null``
    those it may leave out but not give as null. A field was given by every record when
    required, by none when the reader sets it, by the records not at its default, and by no
    other when that default is ``UNSET`` (no JSON value decodes to it); a not-null field
    holding None, as left out. Which other records at a default gave a top-level field is
    :func:`_given`, or a decode of just those fields (:func:`_presence`); in a nested record
    none is counted (low). A default holds no colon (else not counted): a file lacks none.
    """
    records = columns.records
    if not records:
        return True
    # an escaped colon holds a backslash: one memchr pass over most files
    if b"\\" in data and ESCAPED_COLON.search(data) is not None:
        return False
    cls, unsure = type(records[0]), list[FieldInfo]()

    def top_level(f: FieldInfo, place: Place) -> int:
        if f not in in_file:
            return 0
        values = columns[(f.name,)]
        if f.name in not_null:
            return len(values) - values.count(None)
        given = _not_at_default(f, values)
        if given == len(values) or _default(f) is msgspec.UNSET:
            return given
        told = _given(data, cls, f.encode_name, given)
        if told is None:  # as given by all; those that left it out come off below
            unsure.append(f)
        return len(values) if told is None else told

    try:
        expected = _record_colons(cls, (), columns, top_level)
    except _Uncountable:
        return False
    if unsure:
        given_or_not = _presence(tuple((f.name, f.encode_name) for f in unsure)).decode_lines(data)
        for f in unsure:
            absent = list(map(attrgetter(f.name), given_or_not)).count(msgspec.UNSET)
            expected -= absent * (1 + f.encode_name.count(":"))
    return data.count(b":") == expected


def _record_colons(
    cls: Any, place: Place, columns: Columns, given: Callable[[FieldInfo, Place], int] | None
) -> int:
    """The colons of the records at ``place``: a key for each field given (``given`` counts
    the records that gave a field with a default; None: those not at it) and those in the
    values (skipped for a field given by none: at its default, or the count is low already)."""
    if cls.__struct_config__.array_like:
        raise _Uncountable(cls)
    colons = 0
    for f in msgspec.structs.fields(cls):
        if f.required:
            count = len(columns[place])
        elif _default(f) is not msgspec.UNSET and b":" in msgspec.json.encode(_default(f)):
            raise _Uncountable(f)
        elif given is None:
            count = _not_at_default(f, columns[(*place, f.name)])
        else:
            count = given(f, place)
        if count:
            key = count * (1 + f.encode_name.count(":"))
            colons += key + _colons(f.type, (*place, f.name), columns)
    return colons


def _not_at_default(f: FieldInfo, values: list[Any]) -> int:
    return len(values) - values.count(_default(f))


def _default(f: FieldInfo) -> Any:
    return f.default_factory() if f.default is msgspec.NODEFAULT else f.default


def _base(type_: Any) -> Any:
    while get_origin(type_) is Annotated:
        type_ = get_args(type_)[0]
    return type_


def _colons(type_: Any, place: Place, columns: Columns) -> int:
    """The colons inside the values at ``place``, of type ``type_``: in their strings, and
    the keys of their dicts and records."""
    base = _base(type_)
    origin, args = get_origin(base), get_args(base)
    if base is str:
        rules = getattr(type_, "__metadata__", ())
        if any(isinstance(rule, Pattern) and rule.colon_free for rule in rules):
            return 0
        return "".join(columns[place]).count(":")
    if base in _SCALARS or (origin is Literal and not any(":" in str(a) for a in args)):
        return 0
    if origin in (Union, types.UnionType):
        members = [t for t in args if t not in (type(None), msgspec.UnsetType)]
        if len(members) == 1:  # X | None, X | Unset: the values given
            return _colons(members[0], (*place, GIVEN), columns)
        if all(t in _SCALARS for t in members):
            return 0
    elif origin is list or (origin is tuple and args[1:] == (Ellipsis,)):
        return _colons(args[0], (*place, ITEM), columns)
    elif origin is dict:
        at_key, at_value = (*place, KEY), (*place, VALUE)
        keys = len(columns[at_key]) + _colons(args[0], at_key, columns)
        return keys + _colons(args[1], at_value, columns)
    elif isinstance(base, type) and issubclass(base, msgspec.Struct):
        return _record_colons(base, place, columns, None)
    raise _Uncountable(type_)


def _given(data: bytes, cls: Any, name: str, at_least: int) -> int | None:
    """How many records of ``data`` (one a line, of type ``cls``) gave the top-level key
    ``name``, known to be at least ``at_least``: exactly, or low; None: not told here.

    The text ``"name":`` is each key written plainly. Seen no more than ``at_least`` times,
    ``at_least`` is the count (exact unless a key is written with an escape or a space
    before its colon, which the colons then show). Where every ``"name":`` is this field's
    key (:func:`_plain_key`), a line holding it twice repeats it; the lines holding it gave it.
    """
    key = b'"' + name.encode() + b'":'
    written = data.count(key)
    if written <= at_least:
        return at_least
    if not _plain_key(cls, name):
        return None
    # then a key ending in name on the line (another field's too: low); in re's cache
    twice = re.escape(key) + rb".*" + re.escape(key[1:])
    return at_least if re.search(twice, data) is not None else written


@functools.cache
def _plain_key(cls: Any, name: str) -> bool:
    """Whether every ``"name":`` in a valid file of ``cls`` records is their top-level key.

    In valid JSON a ``"`` right after a letter, digit, ``_`` or ``-`` closes a string (one
    opening a string follows white space or one of ``{[,:``), and a string right before a
    ``:`` is a key. The ``"`` before ``name`` is then the key's first (the key is ``name``)
    or an escaped one inside it (the key holds a ``"``), not one closing a string, after
    which no letter comes. When every record in the tree refuses unknown fields and no dict
    or ``Any`` is there, every key is a field's name; none holds a ``"``, and only the
    top-level record has a field ``name``: that one.
    """
    records, todo = [cls], [f.type for f in msgspec.structs.fields(cls)]
    while todo:
        base = _base(todo.pop())
        origin = get_origin(base)
        if origin in (Union, types.UnionType, tuple, list):
            todo += [t for t in get_args(base) if t is not Ellipsis]
        elif isinstance(base, type) and issubclass(base, msgspec.Struct):
            if base not in records:
                records.append(base)
                todo += [f.type for f in msgspec.structs.fields(base)]
        elif not (base is str or base in _SCALARS or origin is Literal):
            return False  # a dict's keys, or Any's, may be anything
    names = [[f.encode_name for f in msgspec.structs.fields(c)] for c in records]
    return (
        _WORD.match(name) is not None
        and all(c.__struct_config__.forbid_unknown_fields for c in records)
        and not any('"' in n for n in chain.from_iterable(names))
        and name not in chain.from_iterable(names[1:])
    )


@functools.cache
def _presence(names: tuple[tuple[str, str], ...]) -> msgspec.json.Decoder[Any]:
    """A decoder of records that keeps only whether each of these fields was given."""
    given = msgspec.Raw | msgspec.UnsetType
    fields = [(name, given, msgspec.field(default=msgspec.UNSET, name=key)) for name, key in names]
    return msgspec.json.Decoder(msgspec.defstruct("Given", fields, gc=False))
