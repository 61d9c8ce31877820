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
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec
from msgspec import Meta

from flightdeck.files.strict_json import ESCAPED_COLON, encoder

Place = tuple[str, ...]
# The steps from a record to a place: a field's name, or one of these.
ITEM, KEY, VALUE, GIVEN = "[]", "{key}", "{value}", "?"


@dataclass(frozen=True, eq=False)
class Pattern:
    """A regex a string must match, searched as ``Meta(pattern=...)`` would be.

    ``column`` is the same rule over many strings at once: true exactly when the pattern
    matches each of them (``tests/unit/test_columns.py`` holds every rule to that).
    """

    pattern: str
    column: Callable[[list[str]], bool]

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
        return Pattern(rf"\A{re.escape(self.prefix)}{self.chars}{count}\Z", self._column)

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

    @functools.cached_property
    def encoded(self) -> bytes:
        """The records encoded again as JSON, in one call (for :func:`colons_agree`)."""
        lines: bytes = encoder().encode_lines(self.records)
        return lines


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


# --- a key given twice, told from the records already decoded -----------------------------


def colons_agree(
    data: bytes,
    columns: Columns,
    *,
    in_file: tuple[msgspec.structs.FieldInfo, ...],
    not_null: tuple[str, ...],
) -> bool:
    """Whether ``data``, a file msgspec took whole as ``columns.records``, has exactly the
    colons of their keys: then no key is given twice at any depth (msgspec keeps the last)
    and no not-null field is given as null. False means: look closer.

    Counted on the records already decoded: every key in the file ends with the one ``:``
    outside strings after it, and the records encoded again have one ``:`` per field, with
    the same ``:`` inside their strings (msgspec never escapes one). So the file has as
    many colons as the encoding less the fields it never gave (:func:`_absent_fields`), and
    one more for each key given twice or not-null field given as null (which the record
    holds as None, counted as left out). Every count of absent fields that is not exact
    errs high, so the counts can differ without a repeat, never agree with one.
    """
    if not columns.records:
        return True
    # an escaped colon holds a backslash: one memchr pass over most files
    if b"\\" in data and ESCAPED_COLON.search(data) is not None:
        return False
    absent = _absent_fields(data, columns, in_file, not_null)
    return data.count(b":") == columns.encoded.count(b":") - absent


def _absent_fields(
    data: bytes,
    columns: Columns,
    in_file: tuple[msgspec.structs.FieldInfo, ...],
    not_null: tuple[str, ...],
) -> int:
    """How many fields of ``columns.records`` the file ``data`` left out (or more, never less).

    A field the reader sets is never in a file; a not-null field holding None was left
    out (or given as null, which the colons then show); a record whose value is not the
    field's default gave the field. When ``data`` holds the key ``"name":`` no more often
    than that, the records at the default are counted as having left it out (if one gave
    it after all, the count is high); otherwise the file is decoded once more into a
    record of just those fields, as ``msgspec.Raw`` or unset, which says exactly which
    records gave each (a key written with escapes included).
    """
    records = columns.records
    cls = type(records[0])
    if cls.__struct_config__.omit_defaults:  # a field at its default is encoded as left out
        return 0
    absent = 0
    names_in_file = {f.name for f in in_file}
    unsure: list[msgspec.structs.FieldInfo] = []
    for f in msgspec.structs.fields(cls):
        if f.required:
            continue
        if f.name not in names_in_file:  # the reader sets it: never in a file, always encoded
            absent += len(records)
            continue
        values = columns[(f.name,)]
        if f.name in not_null:
            absent += values.count(None)
            continue
        given = len(values) - values.count(f.default)
        if given == len(values):
            continue
        if data.count(b'"' + f.encode_name.encode() + b'":') <= given:
            absent += len(values) - given
            continue
        unsure.append(f)
    if unsure:
        given_or_not = _presence(tuple((f.name, f.encode_name) for f in unsure)).decode_lines(data)
        for f in unsure:
            absent += list(map(attrgetter(f.name), given_or_not)).count(msgspec.UNSET)
    return absent


@functools.cache
def _presence(names: tuple[tuple[str, str], ...]) -> msgspec.json.Decoder[Any]:
    """A decoder of records that keeps only whether each of these fields was given."""
    given = msgspec.Raw | msgspec.UnsetType
    fields = [(name, given, msgspec.field(default=msgspec.UNSET, name=key)) for name, key in names]
    return msgspec.json.Decoder(msgspec.defstruct("Given", fields, gc=False))
