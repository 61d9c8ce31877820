"""Each record's Schema: its Struct, the words for what its types refuse in each field, and
the normalising that runs over all the decoded records at once.

A Struct (``schema.py``) says whether a line is valid, and msgspec says where it is not
(:mod:`flightdeck.suite.problems`: the place, the value there, what was expected). The
words here only turn such a :class:`~flightdeck.suite.problems.Problem` into the sentence a
user reads, choosing by where the place is and by the value found there; none of them
accepts or refuses a value (the rules the types carry for Python are found on the types
themselves, :mod:`flightdeck.suite.columns`). ``finish`` normalises all the records of a
file at once (lower-case hex, the answer's hash). The readers are ``records.py``.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import methodcaller
from typing import Annotated, Any

import msgspec

from flightdeck.suite.columns import GIVEN, ITEM, VALUE, Columns
from flightdeck.suite.decoding import AT_LEAST_ONE, SURROGATE, Line, NonBlank, Schema, Words, show
from flightdeck.suite.problems import Problem
from flightdeck.suite.schema import (
    CANARY_PREFIX,
    KINDS,
    Answer,
    Digest,
    Key,
    KeyCanary,
    Label,
    LedgerRecord,
    Manifest,
    MetaFile,
    Question,
    Source,
    Uri,
)

_UPPER_HEX = re.compile("[A-F]")
_CANONICAL = msgspec.json.Encoder(order="sorted")
_KINDS = ", ".join(KINDS)


# --- words: what msgspec refused, said by where it is and what is there -------------------


def _blank(value: Any) -> bool:
    """A value a user would call empty: not a string, or only white space."""
    return not isinstance(value, str) or not value.strip()


def text(name: str, *, unknown: Callable[[str], str] | None = None) -> Words:
    """A string field: a string, valid Unicode, not blank, then one of ``unknown``'s values."""

    def words(p: Problem) -> str | None:
        if not isinstance(p.value, str):
            return f"{name} must be a string, got {show(p.value)}"
        if p.surrogate:
            return f"{name} {SURROGATE}"
        if not p.value.strip():
            return f"{name} is empty; give a non-empty string"
        return unknown(p.value) if unknown is not None and p.kind == "enum" else None

    return words


def texts(name: str, *, item: Words | None = None) -> Words:
    """A list of non-blank strings; ``item`` says what else an item's type refuses."""

    def words(p: Problem) -> str | None:
        if not p.path:
            if p.kind == "length":
                return f"{name} is empty; list at least one"
            return f"{name} must be a list of strings, got {show(p.value)}"
        if _blank(p.value):
            return f"{name} must hold non-empty strings, got {show(p.value)}"
        if p.surrogate:
            return f"{name} {SURROGATE}"
        return item(p) if item is not None else None

    return words


def uri(what: str) -> Words:
    """A source uri: non-empty, of one of the two shapes, its span in order."""

    def words(p: Problem) -> str | None:
        if _blank(p.value):
            return f"{what} must be a non-empty string, got {show(p.value)}"
        if p.kind == "check":
            return f"{what} {p.value!r} has a span that ends before it starts"
        if p.kind:
            return f"{what} {p.value!r} is not <repo>/<path>[#L<a>[-L<b>]] nor a scheme: uri"
        return None  # only a surrogate: the record's

    return words


def sources(name: str) -> Words:
    """A list of ``{uri, sha256}`` objects."""
    uri_words = uri(f"{name} uri")

    def words(p: Problem) -> str | None:
        if not p.path:
            if p.kind == "length":
                return f"{name} is empty; list at least one source"
            return f"{name} must be a list of {{uri, sha256}} objects, got {show(p.value)}"
        entry = p.root[p.path[0]]
        if len(p.path) == 1:  # the entry itself: not an object, a field missing or unknown
            return f"each entry of {name} must be {{uri, sha256}}, got {show(entry)}"
        if p.path[1] == "uri":
            return uri_words(p)
        if p.kind:
            digest = show(p.value)
            return f"{name} sha256 of {entry['uri']!r} must be 64 hex digits, got {digest}"
        return None

    return words


def either(message: Callable[[Any], str]) -> Words:
    """A field said in one sentence whatever msgspec refused in it (given its whole value)."""
    return lambda p: message(p.root) if p.kind else None


def _as_of(p: Problem) -> str | None:
    if not p.path:
        return "as_of must be an object mapping repository names to 40-hex commits"
    repo = p.path[0]
    if not p.kind:
        return None  # only a surrogate: the record's
    if p.at_key:
        return f"as_of repository name {repo!r} must be non-empty and contain no '/'"
    return f"as_of commit for {repo!r} must be a full 40-hex commit, got {show(p.value)}"


def _glob(p: Problem) -> str | None:
    return f"scope pattern {p.value!r} is not a valid glob; fix its [...] class"


def _sealed_files(p: Problem) -> str | None:
    if not p.path or p.at_key:
        return (
            "sha256 must map questions.jsonl and keys.jsonl to their hashes; reseal as a new suite"
        )
    return f"sha256 of {p.path[0]} must be 64 hex digits; {RESTORE}" if p.kind else None


# A sealed suite's manifest is written by seal and never edited: every fix is the same.
RESTORE = "restore the file from git; a sealed suite is never edited (a change is a new version)"


# The scores ledger is appended by score: a bad record is restored, not rewritten by hand.
RESTORE_LEDGER = "restore the file from git (knowledge score appends it)"


def _written(name: str, fix: str = RESTORE) -> Words:
    """A string field of a file flightdeck wrote: what is wrong with it, and the one ``fix``."""

    def words(p: Problem) -> str | None:
        if not isinstance(p.value, str):
            return f"{name} must be a string, got {show(p.value)}; {fix}"
        if p.surrogate:
            return f"{name} holds an unpaired surrogate escape (\\ud800-\\udfff); {fix}"
        return f"{name} is empty; {fix}" if not p.value.strip() else None

    return words


def _date(p: Problem) -> str | None:
    if p.kind == "check":
        return f"date {show(p.value)} is not a date; use YYYY-MM-DD or an ISO 8601 time"
    return text("date")(p)


def _time(p: Problem) -> str | None:
    if not isinstance(p.value, str):
        return f"time must be a string, got {show(p.value)}"
    if p.kind:  # blank, or no real date or time
        return (
            f"time {show(p.value)} is not a date or time; write an ISO 8601 time such as "
            "2026-12-01T14:25:28Z, or leave time out"
        )
    return None  # only a surrogate: the record's


# --- normalising, over all records at once ------------------------------------------------


def _upper(digests: list[str]) -> bool:
    """Whether any of these hex digests (checked, so ASCII) holds an upper-case letter."""
    joined = "".join(digests)
    return joined.lower() != joined  # one copy and one comparison, both in C


def _lower_sources(sources: Iterable[Source]) -> None:
    for source in sources:
        if _UPPER_HEX.search(source.sha256):
            msgspec.structs.force_setattr(source, "sha256", source.sha256.lower())


def _finish_questions(columns: Columns) -> None:
    if _upper(columns[("as_of", VALUE)]):
        for q in columns.records:
            as_of = {repo: commit.lower() for repo, commit in q.as_of.items()}
            msgspec.structs.force_setattr(q, "as_of", as_of)


def _finish_keys(columns: Columns) -> None:
    if _upper(columns[("valid_sources", ITEM, "sha256")]):
        _lower_sources(columns[("valid_sources", ITEM)])


def _finish_answers(columns: Columns) -> None:
    # Canonical JSON (sorted keys, "," and ":", non-ASCII kept, as json.dumps writes it) of
    # the record as the file holds it: before lower-casing, and without the reader's fields
    # (they are still at their defaults, which omit_defaults leaves out). All records are
    # encoded in one call, one line each (a JSON text holds no raw newline); the hashes
    # are made and set by map, with no Python frame a record.
    answers = columns.records
    texts = _CANONICAL.encode_lines(answers).split(b"\n")  # and one more, empty
    digests = map(methodcaller("hexdigest"), map(hashlib.sha256, texts[: len(answers)]))
    deque(map(msgspec.structs.force_setattr, answers, repeat("sha256"), digests), maxlen=0)
    if _upper(columns[("citations", ITEM, "sha256")]):
        _lower_sources(columns[("citations", ITEM)])


def _finish_labels(columns: Columns) -> None:
    if _upper(columns[("answer_sha256", GIVEN)]):
        for label in columns.records:
            if label.answer_sha256 is not None:
                msgspec.structs.force_setattr(label, "answer_sha256", label.answer_sha256.lower())


QUESTION = Schema(
    Question,
    {
        "id": text("id"),
        "question": text("question"),
        "kind": text(
            "kind", unknown=lambda k: f"kind {k!r} is unknown; use one of {', '.join(KINDS)}"
        ),
        "as_of": _as_of,
        "scope": texts("scope", item=_glob),
    },
    finish=_finish_questions,
)
KEY = Schema(
    Key,
    {
        "id": text("id"),
        "answer_key": text("answer_key"),
        "required_facts": texts("required_facts"),
        "valid_sources": sources("valid_sources"),
        "canary": either(
            lambda _: f"canary must be {CANARY_PREFIX}<32 hex>; leave it out and let seal write it"
        ),
    },
    finish=_finish_keys,
)
ANSWER = Schema(
    Answer,
    {
        "id": text("id"),
        "answer": text("answer"),
        "citations": sources("citations"),
    },
    finish=_finish_answers,
)
LABEL = Schema(
    Label,
    {
        "id": text("id"),
        "rater": text("rater"),
        "correct": either(lambda v: f"correct must be true or false, got {show(v)}"),
        "unsupported": texts("unsupported", item=uri("unsupported entry")),
        "answer_sha256": either(lambda v: f"answer_sha256 must be 64 hex digits, got {show(v)}"),
        "time": _time,
        "facts": either(
            lambda v: (
                "facts must be a list of true or false, one per required fact in the "
                f"key's order, got {show(v)}"
            )
        ),
    },
    finish=_finish_labels,
    not_null=("time", "facts"),
)
MANIFEST = Schema(
    Manifest,
    {  # in the order the fields were always checked
        "suite": _written("suite"),
        "sealed_at": _written("sealed_at"),
        "flightdeck_version": _written("flightdeck_version"),
        "files": _sealed_files,
        "unchecked_repos": either(
            lambda _: f"unchecked_repos must be a list of repository names; {RESTORE}"
        ),
    },
    missing={
        name: f"missing field {key!r}; {RESTORE}"
        for name, key in (
            ("suite", "suite"),
            ("sealed_at", "sealed_at"),
            ("files", "sha256"),
            ("flightdeck_version", "flightdeck_version"),
        )
    },
)
_NEEDS = f"ledger record needs arm and answers_sha256; {RESTORE_LEDGER}"
LEDGER = Schema(
    LedgerRecord,
    {
        "arm": _written("arm", RESTORE_LEDGER),
        "answers_sha256": either(
            lambda v: f"answers_sha256 must be 64 hex digits, got {show(v)}; {RESTORE_LEDGER}"
        ),
        "labels_sha256": _written("labels_sha256", RESTORE_LEDGER),
        "scored_at": _written("scored_at", RESTORE_LEDGER),
        "flightdeck_version": _written("flightdeck_version", RESTORE_LEDGER),
    },
    missing={"arm": _NEEDS, "answers_sha256": _NEEDS},
)
META = Schema(
    MetaFile,
    {
        "runner": text(
            "runner", unknown=lambda r: f"runner {r!r} is unknown; use person or harness"
        ),
        "by": text("by"),
        "date": _date,
        "model": text("model"),
        "knowledge_snapshot": lambda _: None,
    },
    missing={
        "knowledge_snapshot": "missing field 'knowledge_snapshot'; record what the arm could read"
    },
)


# --- (#15) before sealing, a valid source may leave its sha256 out: seal computes it -------


class _UnhashedSource(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    uri: Uri
    # left out, not null: an explicit null is refused as a bad hash, as before
    sha256: Digest | msgspec.UnsetType = msgspec.UNSET


class _UnsealedKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    id: NonBlank
    answer_key: NonBlank
    required_facts: Annotated[tuple[NonBlank, ...], AT_LEAST_ONE]
    valid_sources: Annotated[tuple[_UnhashedSource, ...], AT_LEAST_ONE]
    canary: KeyCanary | None = None
    line: Line = 0


UNSEALED_KEY = Schema(_UnsealedKey, KEY.words)
