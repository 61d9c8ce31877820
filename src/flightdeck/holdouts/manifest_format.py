"""The holdouts manifest as a record: its msgspec Structs, their decode, the words for a bad one.

The file (``DIR/manifest.json``, see :mod:`flightdeck.holdouts.manifest`) decodes straight
into :class:`Manifest`: the Structs are the rule. Only bytes the Structs refuse, or that
might hide what msgspec lets through (a key given twice, a lone surrogate, an escaped
colon), are read again with the strict reader (:func:`flightdeck.files.jsonl.read_json`),
whose value the same Structs then check entry by entry to say which one is wrong
(:func:`problem`): a malformed manifest is one ``error: <file>: ...`` line, never a
traceback.

A history event or a suite entry may carry fields this version does not know (a newer
writer's): each event's JSON is kept as read (:attr:`Manifest.history_json`) and written
back unchanged, and a suite entry's unknown fields survive a rewrite of that entry. A
canary's entry holds only its suite and question id.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from flightdeck.errors import InternalError
from flightdeck.files.strict_json import texts_repeat_a_key
from flightdeck.suite.columns import Columns, accepts, places
from flightdeck.suite.decoding import Refusal
from flightdeck.suite.problems import Problem, problems, refusal
from flightdeck.suite.schema import CANARY_PREFIX, Canary, Date, Sha256

FORMAT = 1


class Evidence(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What voided a suite: the first hit of its canaries and how many there were."""

    canary: str
    question_id: str
    file: str
    line: int
    count: int
    at: str | None = None  # when the scan that found it ran (UTC)


class SuiteEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One registered suite: the seal it was registered with, and whether it is void."""

    manifest_sha256: Sha256
    status: Literal["sealed", "void"]
    registered_at: Date | None = None  # a real date or time (a Check, run by decode)
    evidence: Evidence | None = None  # present exactly when void


class CanaryOwner(msgspec.Struct, frozen=True):
    """The question a registered canary belongs to."""

    suite: str
    question_id: str


class ScanOfSuite(msgspec.Struct, frozen=True):
    """What one scan read under a suite's own folder (``traces/<suite>/...``)."""

    files: int
    bytes: int
    hits: int


class Event(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One history event (``registered``, ``void``, ``unvoid``; ``scan`` before scans.jsonl).

    The fields named here must have these types; an event may carry others, which
    :attr:`Manifest.history_json` keeps.
    """

    event: str
    at: str
    suite: str | None = None
    canaries: int | None = None  # registered: how many
    evidence: Evidence | None = None  # void, unvoid
    by: str | None = None  # unvoid: who
    why: str | None = None  # unvoid: why
    paths: list[str] | None = None  # scan: what it was asked to read
    files: int | None = None
    bytes: int | None = None
    hits: int | None = None
    suites: dict[str, ScanOfSuite] | None = None  # scan: what it read of each suite


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    """The holdouts manifest: the registered canaries and suites, and the history.

    Change it with :func:`msgspec.structs.replace`; the history only grows.
    ``history_json`` holds the JSON text of the first events as read, with any field this
    version does not know; events past its end are written from their Struct.
    ``suites_json`` likewise holds each suite entry as read.
    """

    canaries: dict[str, CanaryOwner]
    suites: dict[str, SuiteEntry]
    history: tuple[Event, ...]
    history_json: tuple[bytes, ...] = ()
    suites_json: dict[str, bytes] = {}
    format: int = FORMAT


EMPTY = Manifest(canaries={}, suites={}, history=())


def decode(data: bytes) -> Manifest | None:
    """``data`` as a :class:`Manifest`, or None when the strict reader must look at it.

    None means: the Structs refuse it, or the bytes hold what msgspec would let through
    silently (a key given twice, a lone surrogate, an escaped colon), or a rule between
    entries is broken; :func:`problem` on the strict reader's value then says which.
    """
    try:
        stored = _decoder(_Stored).decode(data)
        suites = {name: _decoder(SuiteEntry).decode(raw) for name, raw in stored.suites.items()}
        history = tuple(_decoder(Event).decode(raw) for raw in stored.history)
    except msgspec.DecodeError:  # ValidationError included
        return None
    if _DOUBT.search(data) or not all_canaries(stored.canaries):
        return None
    if not accepts(_SUITE_RULES, Columns(list(suites.values()))):  # registered_at: a real time
        return None
    # every key of a JSON text is followed by one colon; msgspec keeps one of two equal keys,
    # so encoded again the value has fewer (the kept texts are checked on their own)
    if _encoder().encode(stored).count(b":") != data.count(b":"):
        return None
    kept = [bytes(raw) for raw in stored.history]
    suites_json = {name: bytes(raw) for name, raw in stored.suites.items()}
    if texts_repeat_a_key([*suites_json.values(), *kept]):
        return None
    manifest = Manifest(
        canaries=stored.canaries,
        suites=suites,
        history=history,
        history_json=tuple(kept),
        suites_json=suites_json,
    )
    return None if _between_entries(manifest) else manifest


def from_value(value: dict[str, Any]) -> Manifest:
    """A manifest the strict reader read and :func:`problem` passed, as its Struct."""
    checked = msgspec.convert(value, _File)
    return Manifest(
        canaries=dict(checked.canaries),
        suites=checked.suites,
        history=tuple(checked.history),
        history_json=tuple(encode_line(event).encode() for event in value["history"]),
        suites_json={name: encode_line(entry).encode() for name, entry in value["suites"].items()},
    )


def encode_line(value: Any) -> str:
    """One entry on one line, keys sorted (the file's own form)."""
    line: str = _json_encoder().encode(value)
    return line


def suite_line(name: str, manifest: Manifest) -> str:
    """A suite entry on one line, with the fields this version does not know as read."""
    entry: dict[str, Any] = msgspec.to_builtins(manifest.suites[name])
    read = manifest.suites_json.get(name)
    if read is not None:
        known = set(SuiteEntry.__struct_fields__)
        old = msgspec.json.decode(read)
        entry = {k: v for k, v in old.items() if k not in known} | entry
    return encode_line(entry)


def event_line(number: int, manifest: Manifest) -> str:
    """History event ``number`` on one line: every field as read when it was (in the file's
    form: one line, keys sorted), else from its Struct."""
    if number < len(manifest.history_json):
        return encode_line(msgspec.json.decode(manifest.history_json[number]))
    return encode_line(msgspec.to_builtins(manifest.history[number]))


class _Stored(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The file as decoded first: suites and events kept as their JSON text (see Manifest)."""

    format: Literal[1]
    canaries: dict[str, CanaryOwner]
    suites: dict[str, msgspec.Raw]
    history: list[msgspec.Raw]


class _File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The file's whole rule, for the strict reader's value (each canary's pattern too)."""

    format: Literal[1]
    canaries: dict[Canary, CanaryOwner]
    suites: dict[str, SuiteEntry]
    history: list[Event]


_SUITE_RULES = places(SuiteEntry)
# a lone surrogate escape (msgspec passes it; it cannot be written back) or an escaped colon
_DOUBT = re.compile(rb"\\u(?:[dD][89a-fA-F]|003[aA])")


def all_canaries(keys: Iterable[str]) -> bool:
    """Whether every key is a canary (``CANARY_RE``), without a regex call per key.

    Every key has the canary's length and starts with its prefix, and deleting the lowercase
    hex digits from all the keys joined leaves exactly the prefixes: the prefix holds no
    digit and no lowercase letter, so what is left besides them is a tail's character that
    is not a lowercase hex digit.
    """
    keys = list(keys)
    if not keys:
        return True
    if set(map(len, keys)) != {_CANARY_SIZE}:
        return False
    if not all(map(str.startswith, keys, itertools.repeat(CANARY_PREFIX))):
        return False
    left = "".join(keys).encode().translate(None, b"0123456789abcdef")
    return left == _PREFIX_BYTES * len(keys)


_CANARY_SIZE = len(CANARY_PREFIX) + 32
_PREFIX_BYTES = CANARY_PREFIX.encode()


@functools.cache
def _decoder(type_: Any) -> Any:
    return msgspec.json.Decoder(type_)


@functools.cache
def _encoder() -> msgspec.json.Encoder:
    return msgspec.json.Encoder()


@functools.cache
def _json_encoder() -> json.JSONEncoder:
    return json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps makes one a call


def _between_entries(manifest: Manifest) -> Refusal | None:
    """The rules between entries: a void suite's evidence, each canary's suite."""
    for name, entry in manifest.suites.items():
        if entry.status == "void" and entry.evidence is None:
            what = f"suites.{_entry(name)} is void but its evidence is incomplete"
            return Refusal(what, ("suites", name))
    for canary, owner in manifest.canaries.items():
        if owner.suite not in manifest.suites:
            what = f"canaries.{_entry(canary)} names suite {owner.suite!r}, which is not in suites"
            return Refusal(what, ("canaries", canary))
    return None


def problem(value: dict[str, Any]) -> Refusal | None:
    """What is wrong with the strict reader's value and where, or None: its Struct first
    (the rules its types carry for Python too), then the rules between entries (a void
    suite's evidence, each canary's suite)."""
    try:
        checked = msgspec.convert(value, _File)
    except msgspec.ValidationError:
        return _where(value)
    if not accepts(_SUITE_RULES, Columns(list(checked.suites.values()))):
        return _where(value)
    return _between_entries(
        Manifest(canaries=dict(checked.canaries), suites=checked.suites, history=())
    )


def _where(manifest: dict[str, Any]) -> Refusal:
    """Which entry msgspec refused, named in the order a person reads the file.

    msgspec says where each part is refused (:func:`flightdeck.suite.problems.problems`,
    against the field's type in the Structs above); the words here only name the entry:
    the format, an unknown field, the three sections' types, then each suite, canary and
    history event in turn. A history event is said in msgspec's own words. The place is
    the refused entry's, or its field's when the entry has it.
    """
    types = {f.name: f.type for f in msgspec.structs.fields(_File)}
    found = {  # strict JSON holds no lone surrogate, so every problem is a refusal
        name: [p for p in problems(manifest.get(name), types[name]) if p.kind] for name in types
    }
    if found["format"]:
        return Refusal(f"format must be {FORMAT}, got {manifest.get('format')!r}", ("format",))
    extra = sorted(set(manifest) - set(types))
    if extra:
        return Refusal(f"unknown field {extra[0]!r}", (extra[0],))
    for name in ("suites", "canaries"):
        if any(not p.path for p in found[name]):
            return Refusal("suites and canaries must be objects", (name,))
    if any(not p.path for p in found["history"]):
        return Refusal("history must be a list", ("history",))
    for name in manifest["suites"]:
        refused = [p for p in found["suites"] if p.path[0] == name and not p.at_key]
        if refused:
            first = min(refused, key=_suite_field_order)
            entry, field = manifest["suites"][name], _suite_field(first)
            given = isinstance(entry, dict) and field in entry
            place = ("suites", name, *([field] if given else []))
            return Refusal(f"suites.{_entry(name)}" + _suite_words(first), place)
    for p in found["canaries"]:
        place = ("canaries", p.path[0])
        if p.at_key:
            return Refusal(f"canaries: {p.path[0]!r} is not a canary", place)
        what = f"canaries.{_entry(str(p.path[0]))} must be an object with a question_id and a suite"
        return Refusal(what, place)
    for p in found["history"]:
        number = p.path[0]
        what = f"history[{number}]: {refusal(manifest['history'][number], Event)}"
        return Refusal(what, ("history", number))
    raise InternalError("a rule of the holdouts manifest has no words")


_SUITE_FIELDS = list(SuiteEntry.__struct_fields__)


def _entry(name: str) -> str:
    """An entry's name as a message says it: as written, or quoted when it holds a character
    that is not printable (a control character or a line separator would break the line)."""
    return name if name.isprintable() else repr(name)


def _suite_field(p: Problem) -> str:
    """The field of a suite entry a problem is in (a missing one is named by msgspec)."""
    if len(p.path) > 1:
        return str(p.path[1])
    return p.detail.removeprefix("missing field ").strip("'") if p.kind == "shape" else ""


def _suite_field_order(p: Problem) -> int:
    field = _suite_field(p)
    return _SUITE_FIELDS.index(field) if field in _SUITE_FIELDS else -1


def _suite_words(p: Problem) -> str:
    field = _suite_field(p)
    if field == "manifest_sha256":
        return ".manifest_sha256 must be 64 hex digits"
    if field == "status":
        status = p.value if len(p.path) > 1 else None
        return f".status must be sealed or void, got {status!r}"
    if field == "evidence":
        return " is void but its evidence is incomplete"
    if field == "registered_at":
        return ".registered_at must be a UTC time such as 2026-12-01T14:25:28Z"
    return " must be an object"
