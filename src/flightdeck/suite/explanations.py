"""Each record's Schema: its Struct, the message for each way a field can be bad, and what
runs over all the decoded records at once.

A Struct (``schema.py``) says whether a line is valid; the explanations here only say why
one is not, rung by rung (see ``decoding.py``), so a rule lives in one place and the message
beside it. ``check`` holds what no type can (a glob's syntax, a span's order) and ``finish``
normalises (lower-case hex, the answer's hash). The readers are ``records.py``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any

import msgspec

from flightdeck.suite.citations import span_in_order
from flightdeck.suite.decoding import (
    AT_LEAST_ONE,
    Explain,
    Line,
    NonBlank,
    Schema,
    either,
    fails,
    flag,
    show,
    text,
    texts,
)
from flightdeck.suite.repos import glob_regex
from flightdeck.suite.schema import (
    BOTH_SEALED,
    CANARY_PREFIX,
    KINDS,
    Answer,
    Canary,
    Commit,
    Key,
    Kind,
    Label,
    Manifest,
    MetaFile,
    Question,
    RepoName,
    Runner,
    SealedName,
    Sha256,
    Source,
    Uri,
)

_UPPER_HEX = re.compile("[A-F]")


def glob_ok(pattern: str) -> bool:
    """Whether a scope pattern compiles (a class such as [z-a] does not)."""
    try:
        glob_regex(pattern)
    except re.error:
        return False
    return True


# --- explanations: the first rung a bad value fails picks the message ----------------------


def _uri(what: str) -> Explain:
    def explain(value: Any) -> str | None:
        if fails(value, NonBlank):
            return f"{what} must be a non-empty string, got {show(value)}"
        if fails(value, Uri):
            return f"{what} {value!r} is not <repo>/<path>[#L<a>[-L<b>]] nor a scheme: uri"
        if not span_in_order(value):
            return f"{what} {value!r} has a span that ends before it starts"
        return None

    return explain


_SOURCE_FIELDS = {f.encode_name for f in msgspec.structs.fields(Source)}


def _sources(name: str, *, at_least_one: bool) -> Explain:
    uri = _uri(f"{name} uri")

    def explain(value: Any) -> str | None:
        if fails(value, list[Any]):
            return f"{name} must be a list of {{uri, sha256}} objects, got {show(value)}"
        if at_least_one and fails(value, Annotated[list[Any], AT_LEAST_ONE]):
            return f"{name} is empty; list at least one source"
        for item in value:
            if not isinstance(item, dict) or set(item) != _SOURCE_FIELDS:
                return f"each entry of {name} must be {{uri, sha256}}, got {show(item)}"
            message = uri(item["uri"])
            if message is not None:
                return message
            if fails(item["sha256"], Sha256):
                digest = show(item["sha256"])
                return f"{name} sha256 of {item['uri']!r} must be 64 hex digits, got {digest}"
        return None

    return explain


def _as_of(value: Any) -> str | None:
    if fails(value, Annotated[dict[str, Any], AT_LEAST_ONE]):
        return "as_of must be an object mapping repository names to 40-hex commits"
    for repo, commit in value.items():
        if fails(repo, RepoName):
            return f"as_of repository name {repo!r} must be non-empty and contain no '/'"
        if fails(commit, Commit):
            return f"as_of commit for {repo!r} must be a full 40-hex commit, got {show(commit)}"
    return None


def _sealed_files(value: Any) -> str | None:
    if fails(value, Annotated[dict[SealedName, Any], BOTH_SEALED]):
        return (
            "sha256 must map questions.jsonl and keys.jsonl to their hashes; reseal as a new suite"
        )
    for name, digest in value.items():
        if fails(digest, Sha256):
            return f"sha256 of {name} must be 64 hex digits"
    return None


def iso_date(value: str) -> bool:
    """Whether ``value`` is a real ISO 8601 date or time (``2024-13-45`` is not)."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _date(value: Any) -> str | None:
    message = text("date")(value)
    if message is None and not iso_date(value):
        return f"date {show(value)} is not a date; use YYYY-MM-DD or an ISO 8601 time"
    return message


def _glob(pattern: str) -> str | None:
    if glob_ok(pattern):
        return None
    return f"scope pattern {pattern!r} is not a valid glob; fix its [...] class"


# --- what a type cannot hold, and normalising: over all records at once --------------------


def _lower(digests: Iterable[str]) -> bool:
    """Whether any hex digest needs lower-casing (one search over all of them)."""
    return _UPPER_HEX.search("".join(digests)) is not None


def _lower_sources(sources: Iterable[Source]) -> None:
    for source in sources:
        if _UPPER_HEX.search(source.sha256):
            msgspec.structs.force_setattr(source, "sha256", source.sha256.lower())


def _finish_questions(questions: list[Question]) -> None:
    if _lower(c for q in questions for c in q.as_of.values()):
        for q in questions:
            as_of = {repo: commit.lower() for repo, commit in q.as_of.items()}
            msgspec.structs.force_setattr(q, "as_of", as_of)


def _finish_keys(keys: list[Key]) -> None:
    if _lower(s.sha256 for k in keys for s in k.valid_sources):
        _lower_sources(s for k in keys for s in k.valid_sources)


def _finish_answers(answers: list[Answer]) -> None:
    # Canonical JSON (sorted keys, "," and ":", non-ASCII kept, as json.dumps writes it) of
    # the record as the file holds it: before lower-casing, and without the reader's fields
    # (they are still at their defaults, which omit_defaults leaves out).
    encode = msgspec.json.Encoder(order="sorted").encode
    sha256, set_ = hashlib.sha256, msgspec.structs.force_setattr
    for answer in answers:
        set_(answer, "sha256", sha256(encode(answer)).hexdigest())
    if _lower(s.sha256 for a in answers for s in a.citations):
        _lower_sources(s for a in answers for s in a.citations)


def _finish_labels(labels: list[Label]) -> None:
    if _lower(label.answer_sha256 or "" for label in labels):
        for label in labels:
            if label.answer_sha256 is not None:
                msgspec.structs.force_setattr(label, "answer_sha256", label.answer_sha256.lower())


QUESTION = Schema(
    Question,
    {
        "id": text("id"),
        "question": text("question"),
        "kind": text(
            "kind",
            then=(Kind, lambda k: f"kind {k!r} is unknown; use one of {', '.join(KINDS)}"),
        ),
        "as_of": _as_of,
        "scope": texts("scope", at_least_one=False, each=_glob),
    },
    check=lambda qs: all(map(glob_ok, {p for q in qs for p in q.scope})),
    finish=_finish_questions,
)
KEY = Schema(
    Key,
    {
        "id": text("id"),
        "answer_key": text("answer_key"),
        "required_facts": texts("required_facts", at_least_one=True),
        "valid_sources": _sources("valid_sources", at_least_one=True),
        "canary": either(
            Canary | None,
            lambda _: f"canary must be {CANARY_PREFIX}<32 hex>; leave it out and let seal write it",
        ),
    },
    check=lambda ks: all(map(span_in_order, [s.uri for k in ks for s in k.valid_sources])),
    finish=_finish_keys,
)
ANSWER = Schema(
    Answer,
    {
        "id": text("id"),
        "answer": text("answer", blank_ok=True),
        "citations": _sources("citations", at_least_one=False),
    },
    check=lambda ans: all(map(span_in_order, [s.uri for a in ans for s in a.citations])),
    finish=_finish_answers,
)
LABEL = Schema(
    Label,
    {
        "id": text("id"),
        "rater": text("rater"),
        "correct": flag("correct"),
        "unsupported": texts("unsupported", at_least_one=False, each=_uri("unsupported entry")),
        "answer_sha256": either(
            Sha256 | None, lambda v: f"answer_sha256 must be 64 hex digits, got {show(v)}"
        ),
        "time": either(str, lambda v: f"time must be a string, got {show(v)}"),
        "facts": either(
            tuple[bool, ...],
            lambda v: (
                "facts must be a list of true or false, one per required fact in the "
                f"key's order, got {show(v)}"
            ),
        ),
    },
    check=lambda ls: all(map(span_in_order, [u for label in ls for u in label.unsupported])),
    finish=_finish_labels,
    not_null=("time", "facts"),
)
MANIFEST = Schema(
    Manifest,
    {  # in the order the fields were always checked
        "suite": text("suite"),
        "sealed_at": text("sealed_at"),
        "flightdeck_version": text("flightdeck_version"),
        "files": _sealed_files,
        "unchecked_repos": either(
            list[str], lambda _: "unchecked_repos must be a list of repository names"
        ),
    },
)
META = Schema(
    MetaFile,
    {
        "runner": text(
            "runner", then=(Runner, lambda r: f"runner {r!r} is unknown; use person or harness")
        ),
        "by": text("by"),
        "date": _date,
        "model": text("model"),
        "knowledge_snapshot": lambda _: None,
    },
    check=lambda metas: all(iso_date(m.date) for m in metas),
    missing={
        "knowledge_snapshot": "missing field 'knowledge_snapshot'; record what the arm could read"
    },
)


# --- (#15) before sealing, a valid source may leave its sha256 out: seal computes it -------


class _UnhashedSource(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    uri: Uri
    # left out, not null: an explicit null is refused as a bad hash, as before
    sha256: Sha256 | msgspec.UnsetType = msgspec.UNSET


class _UnsealedKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    id: NonBlank
    answer_key: NonBlank
    required_facts: Annotated[tuple[NonBlank, ...], AT_LEAST_ONE]
    valid_sources: Annotated[tuple[_UnhashedSource, ...], AT_LEAST_ONE]
    canary: Canary | None = None
    line: Line = 0


def _unhashed_sources(value: Any) -> str | None:
    """As for sealed keys, except that an entry may be ``{uri}`` alone."""
    if isinstance(value, list):
        value = [
            {**item, "sha256": "0" * 64}
            if isinstance(item, dict) and set(item) == {"uri"}
            else item
            for item in value
        ]
    return KEY.explain["valid_sources"](value)


UNSEALED_KEY = Schema(
    _UnsealedKey,
    {**KEY.explain, "valid_sources": _unhashed_sources},
    check=lambda ks: all(map(span_in_order, [s.uri for k in ks for s in k.valid_sources])),
)
