"""A fast path for the readers in formats.py, for files of 100,000 lines.

msgspec decodes every line straight into typed structs (unknown fields, missing fields and
wrong types are rejected in C); the checks that need Python (regexes, uniqueness, ids known
to the suite) run in tight loops. The fast path only ever *accepts*: when anything is off it
returns None and the exact readers run instead, which stop at the first bad line and say how
to fix it. A property test holds the two paths to the same results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any, Literal, get_args

import msgspec

from flightdeck.formats import (
    CANARY_RE,
    COMMIT_RE,
    KINDS,
    OPAQUE_RE,
    SHA256_RE,
    SOURCE_URI_RE,
    Answer,
    Key,
    Label,
    Question,
    Source,
)

Kind = Literal["decision-why", "blocker", "what-changed", "how-to", "who-owns"]


class _S(msgspec.Struct, forbid_unknown_fields=True):
    uri: str
    sha256: str


class _Q(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    question: str
    kind: Kind
    as_of: dict[str, str]
    scope: list[str]


class _K(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    answer_key: str
    required_facts: list[str]
    valid_sources: list[_S]
    canary: str | None = None


class _A(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    answer: str
    citations: list[_S]


class _L(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    rater: str
    correct: bool
    unsupported: list[str] = []
    answer_sha256: str | None = None
    time: str | msgspec.UnsetType = msgspec.UNSET


assert get_args(Kind) == KINDS, "keep Kind in step with formats.KINDS"


@cache
def _decoders() -> dict[str, Any]:
    return {n: msgspec.json.Decoder(t) for n, t in {"q": _Q, "k": _K, "a": _A, "l": _L}.items()}


def _decode(data: bytes, which: str) -> tuple[list[Any], list[int]] | None:
    """Typed records and their line numbers, or None when any line is off."""
    lines = [n for n, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    if not lines:
        return None
    try:
        records = _decoders()[which].decode_lines(data)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeError):
        return None
    if len(records) != len(lines):
        return None
    return records, lines


def _text(value: str) -> bool:
    return bool(value.strip())


def _uri_ok(uri: str) -> bool:
    if not uri.strip():
        return False
    if OPAQUE_RE.match(uri):
        return True
    m = SOURCE_URI_RE.match(uri)
    return m is not None and (m["end"] is None or int(m["end"]) >= int(m["start"]))


def _sources_ok(items: list[Any]) -> bool:
    return all(_uri_ok(s.uri) and SHA256_RE.match(s.sha256) for s in items)


def _unique(keys: Iterable[str]) -> bool:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return False
        seen.add(key)
    return True


def questions(data: bytes) -> list[Question] | None:
    got = _decode(data, "q")
    if got is None:
        return None
    records, lines = got
    for r in records:
        if not (_text(r.id) and _text(r.question) and r.as_of and all(map(_text, r.scope))):
            return None
        for repo, commit in r.as_of.items():
            if not repo or "/" in repo or not COMMIT_RE.match(commit):
                return None
    if not _unique(r.id for r in records):
        return None
    return [
        Question(
            r.id,
            r.question,
            r.kind,
            {repo: c.lower() for repo, c in r.as_of.items()},
            tuple(r.scope),
            line,
        )
        for r, line in zip(records, lines, strict=True)
    ]


def keys(data: bytes, sealed: bool | None) -> list[Key] | None:
    got = _decode(data, "k")
    if got is None:
        return None
    records, lines = got
    for r in records:
        if not (_text(r.id) and _text(r.answer_key) and r.required_facts and r.valid_sources):
            return None
        if not (all(map(_text, r.required_facts)) and _sources_ok(r.valid_sources)):
            return None
        if r.canary is not None and not CANARY_RE.match(r.canary):
            return None
        if (sealed is True and r.canary is None) or (sealed is False and r.canary is not None):
            return None
    if not _unique(r.id for r in records):
        return None
    return [
        Key(
            r.id,
            r.answer_key,
            tuple(r.required_facts),
            tuple(Source(s.uri, s.sha256.lower()) for s in r.valid_sources),
            r.canary,
            line,
        )
        for r, line in zip(records, lines, strict=True)
    ]


def answers(data: bytes, known: set[str]) -> list[Answer] | None:
    got = _decode(data, "a")
    if got is None:
        return None
    records, lines = got
    for r in records:
        if not (_text(r.id) and r.id in known and _sources_ok(r.citations)):
            return None
    if not _unique(r.id for r in records):
        return None
    encode: Callable[..., bytes] = msgspec.json.encode
    out = []
    for r, line in zip(records, lines, strict=True):
        try:  # canonical JSON: sorted keys, "," and ":", non-ASCII kept (as json.dumps)
            digest = hashlib.sha256(encode(r, order="sorted")).hexdigest()
        except (msgspec.EncodeError, UnicodeError):
            return None
        citations = tuple(Source(s.uri, s.sha256.lower()) for s in r.citations)
        out.append(Answer(r.id, r.answer, citations, digest, line))
    return out


def labels(data: bytes, known: set[str]) -> list[Label] | None:
    got = _decode(data, "l")
    if got is None:
        return None
    records, lines = got
    for r in records:
        if not (_text(r.id) and r.id in known and _text(r.rater)):
            return None
        if not all(_uri_ok(u) for u in r.unsupported):
            return None
        if r.answer_sha256 is not None and not SHA256_RE.match(r.answer_sha256):
            return None
    if not _unique(f"{r.rater}\0{r.id}" for r in records):
        return None
    return [
        Label(
            r.id,
            r.rater,
            r.correct,
            tuple(r.unsupported),
            r.answer_sha256.lower() if r.answer_sha256 else None,
            line,
        )
        for r, line in zip(records, lines, strict=True)
    ]
