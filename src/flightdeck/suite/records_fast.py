"""A fast path for the readers in formats.py, for files of 100,000 lines.

msgspec decodes every line straight into typed structs (unknown fields, missing fields and
wrong types are rejected in C); the checks that need Python (regexes, uniqueness, ids known
to the suite) run in tight loops. The fast path only ever *accepts*: when anything is off it
returns None and the exact readers run instead, which stop at the first bad line and say how
to fix it. A property test holds the two paths to the same results.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any, Literal, ParamSpec, TypeVar, get_args

import msgspec

from flightdeck.perf import gc_paused
from flightdeck.suite.records import (
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
    glob_ok,
)

Kind = Literal["decision-why", "blocker", "what-changed", "how-to", "who-owns"]


class _S(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    uri: str
    sha256: str


class _Q(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    question: str
    kind: Kind
    as_of: dict[str, str]
    scope: list[str]


class _K(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    answer_key: str
    required_facts: list[str]
    valid_sources: list[_S]
    canary: str | None = None


class _A(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    answer: str
    citations: list[_S]


class _L(msgspec.Struct, forbid_unknown_fields=True, gc=False):
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
    if _SURROGATE_ESCAPE.search(data):
        return None  # the exact readers say which escape is unpaired
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


_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")

# One regex for both uri forms; the span order (#La-Lb with b >= a) is checked apart.
_URI_RE = re.compile(rf"(?:{OPAQUE_RE.pattern}.*|{SOURCE_URI_RE.pattern})", re.DOTALL)


def _texts(values: Iterable[str]) -> bool:
    """Every string has a non-space character (as ``str.strip`` sees it)."""
    return all(map(str.strip, values))


def _uris(uris: list[str]) -> bool:
    matches = list(map(_URI_RE.match, uris))
    if not all(matches):
        return False
    spans = [(m["start"], m["end"]) for m in matches if m and m["end"] is not None]
    return all(int(end) >= int(start) for start, end in spans)


def _sources(groups: Iterable[list[Any]]) -> bool:
    flat = [s for group in groups for s in group]
    return _uris([s.uri for s in flat]) and all(map(SHA256_RE.match, [s.sha256 for s in flat]))


def _unique(keys: list[str]) -> bool:
    return len(set(keys)) == len(keys)


P = ParamSpec("P")
R = TypeVar("R")


def _no_gc(func: Callable[P, R]) -> Callable[P, R]:
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return func(*args, **kwargs)

    return wrapper


@_no_gc
def questions(data: bytes) -> list[Question] | None:
    got = _decode(data, "q")
    if got is None:
        return None
    records, lines = got
    ids = [r.id for r in records]
    if not (_texts(ids) and _texts(r.question for r in records) and _unique(ids)):
        return None
    if not (all(r.as_of for r in records) and _texts(x for r in records for x in r.scope)):
        return None
    if not all(map(glob_ok, {x for r in records for x in r.scope})):
        return None
    repos = [repo for r in records for repo in r.as_of]
    if not all(repos) or any("/" in repo for repo in repos):
        return None
    if not all(map(COMMIT_RE.match, [c for r in records for c in r.as_of.values()])):
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


@_no_gc
def keys(data: bytes, sealed: bool | None) -> list[Key] | None:
    got = _decode(data, "k")
    if got is None:
        return None
    records, lines = got
    ids = [r.id for r in records]
    if not (_texts(ids) and _unique(ids) and _texts(r.answer_key for r in records)):
        return None
    if not all(r.required_facts and r.valid_sources for r in records):
        return None
    facts = (f for r in records for f in r.required_facts)
    if not (_texts(facts) and _sources(r.valid_sources for r in records)):
        return None
    canaries = [r.canary for r in records if r.canary is not None]
    if not all(map(CANARY_RE.match, canaries)) or not _unique(canaries):
        return None
    if (sealed is True and len(canaries) < len(records)) or (sealed is False and canaries):
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


@_no_gc
def answers(data: bytes, known: set[str]) -> list[Answer] | None:
    got = _decode(data, "a")
    if got is None:
        return None
    records, lines = got
    ids = [r.id for r in records]
    if not (_texts(ids) and known.issuperset(ids) and _unique(ids)):
        return None
    if not _sources(r.citations for r in records):
        return None
    encode = msgspec.json.Encoder(order="sorted").encode
    sha256 = hashlib.sha256
    out = []
    for r, line in zip(records, lines, strict=True):
        try:  # canonical JSON: sorted keys, "," and ":", non-ASCII kept (as json.dumps)
            digest = sha256(encode(r)).hexdigest()
        except (msgspec.EncodeError, UnicodeError):
            return None
        citations = tuple(Source(s.uri, s.sha256.lower()) for s in r.citations)
        out.append(Answer(r.id, r.answer, citations, digest, line))
    return out


@_no_gc
def labels(data: bytes, known: set[str]) -> list[Label] | None:
    got = _decode(data, "l")
    if got is None:
        return None
    records, lines = got
    ids = [r.id for r in records]
    if not (_texts(ids) and known.issuperset(ids) and _texts(r.rater for r in records)):
        return None
    if not _uris([u for r in records for u in r.unsupported]):
        return None
    bound = [r.answer_sha256 for r in records if r.answer_sha256 is not None]
    if not all(map(SHA256_RE.match, bound)):
        return None
    if not _unique([f"{r.rater}\0{r.id}" for r in records]):
        return None
    return [
        Label(
            r.id,
            r.rater,
            r.correct,
            tuple(r.unsupported),
            r.answer_sha256.lower() if r.answer_sha256 else None,
            line,
            None if r.time is msgspec.UNSET else r.time,
        )
        for r, line in zip(records, lines, strict=True)
    ]
