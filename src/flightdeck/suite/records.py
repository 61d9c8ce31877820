"""The readers of suite files: each line decoded against its record's Struct, then the
rules between records.

msgspec decodes and checks every line in C against the Structs of ``schema.py``. A bad
line is named with the file, the line and how to fix it, from the explanations below (see
``decoding.py``). The rules between records (unique ids, ids the suite knows, one label
per rater and answer) run once, after the lines decode. Unknown fields are refused (a typo
in a field name would otherwise drop data silently), except in meta files, which are
free-form provenance. The records and constants are re-exported here, where the rest of
flightdeck has always imported them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import Annotated, Any

import msgspec

from flightdeck.errors import InputError
from flightdeck.jsonl import read_bytes, read_json
from flightdeck.suite.decoding import (
    AT_LEAST_ONE,
    Explain,
    Line,
    NonBlank,
    Schema,
    decode_document,
    decode_lines,
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
    CANARY_RE,
    COMMIT_RE,
    KINDS,
    RUNNERS,
    SHA256_RE,
    Answer,
    ArmMeta,
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
from flightdeck.suite.uris import (
    OPAQUE_RE,
    SOURCE_URI_RE,
    SourceUri,
    parse_source_uri,
    span_in_order,
)

__all__ = [
    "CANARY_PREFIX",
    "CANARY_RE",
    "COMMIT_RE",
    "KINDS",
    "OPAQUE_RE",
    "RUNNERS",
    "SHA256_RE",
    "SOURCE_URI_RE",
    "Answer",
    "ArmMeta",
    "Key",
    "Label",
    "Manifest",
    "Question",
    "Source",
    "SourceUri",
    "glob_ok",
    "parse_source_uri",
    "read_answers",
    "read_keys",
    "read_labels",
    "read_manifest",
    "read_meta",
    "read_questions",
]

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
    },
    check=lambda ls: all(map(span_in_order, [u for label in ls for u in label.unsupported])),
    finish=_finish_labels,
    not_null=("time",),
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
        "date": text("date"),
        "model": text("model"),
        "knowledge_snapshot": lambda _: None,
    },
    missing={
        "knowledge_snapshot": "missing field 'knowledge_snapshot'; record what the arm could read"
    },
)


# --- readers: lines first, then the rules between records ----------------------------------


def _all_distinct(values: Iterable[Hashable]) -> bool:
    """Whether no value repeats: one set build, so the line-by-line search runs only on a fault."""
    listed = list(values)
    return len(set(listed)) == len(listed)


def _duplicate(path: Path, line: int, first: int, what: str, fix: str) -> InputError:
    return InputError(path, line, f"duplicate {what} (first on line {first}); {fix}")


def read_questions(path: Path) -> list[Question]:
    questions, error = decode_lines(path, read_bytes(path), QUESTION)
    seen: dict[str, int] = {}
    for q in questions if not _all_distinct(q.id for q in questions) else ():
        if seen.setdefault(q.id, q.line) != q.line:
            raise _duplicate(path, q.line, seen[q.id], f"id {q.id!r}", "make ids unique")
    if error is not None:
        raise error
    if not questions:
        raise InputError(path, None, "no questions; write one JSON object per line")
    return questions


def read_keys(path: Path, *, sealed: bool | None = None) -> list[Key]:
    """Read keys; ``sealed=True`` requires canaries, ``False`` forbids them, None allows both."""
    data = read_bytes(path)
    keys, error = decode_lines(path, data, KEY)
    if error is not None and sealed is not True:
        keys, error = _unsealed_keys(path, data)  # (#15) a source's sha256 may be left out
    seen: dict[str, int] = {}
    canaries: dict[str, int] = {}
    canaried = [k.canary for k in keys if k.canary is not None]
    clean = (
        _all_distinct(k.id for k in keys)
        and len(set(canaried)) == len(canaried)
        and (sealed is None or len(canaried) == (len(keys) if sealed else 0))
    )
    for k in keys if not clean else ():  # the first line at fault, when one is
        if seen.setdefault(k.id, k.line) != k.line:
            raise _duplicate(path, k.line, seen[k.id], f"id {k.id!r}", "make ids unique")
        if k.canary is not None and canaries.setdefault(k.canary, k.line) != k.line:
            fix = "remove the canaries and seal again"
            raise _duplicate(path, k.line, canaries[k.canary], "canary", fix)
        if sealed is True and k.canary is None:
            message = "missing canary; this suite was not sealed by `flightdeck knowledge seal`"
            raise InputError(path, k.line, message)
        if sealed is False and k.canary is not None:
            message = "has a canary before sealing; remove it, `knowledge seal` writes canaries"
            raise InputError(path, k.line, message)
    if error is not None:
        raise error
    if not keys:
        raise InputError(path, None, "no keys; write one JSON object per line")
    return keys


# --- (#15) before sealing, a valid source may leave its sha256 out: seal computes it -------

# The sha256 of a valid source an author left out; seal writes the computed one in its place.
UNHASHED = ""


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


def _unsealed_keys(path: Path, data: bytes) -> tuple[list[Key], InputError | None]:
    """Keys whose sources may lack sha256 (:data:`UNHASHED`), unless the key has a canary."""
    records, error = decode_lines(path, data, UNSEALED_KEY)
    keys: list[Key] = []
    for r in records:
        unhashed = [s.uri for s in r.valid_sources if s.sha256 is msgspec.UNSET]
        if r.canary is not None and unhashed:
            message = (
                f"valid source {unhashed[0]!r} has no sha256, but the key has a canary: a sealed "
                "key carries every hash; restore it from git, or seal a new suite version"
            )
            return keys, InputError(path, r.line, message)
        sources = tuple(
            Source(s.uri, UNHASHED if isinstance(s.sha256, msgspec.UnsetType) else s.sha256.lower())
            for s in r.valid_sources
        )
        key = Key(r.id, r.answer_key, r.required_facts, sources, r.canary)
        msgspec.structs.force_setattr(key, "line", r.line)
        keys.append(key)
    return keys, error


def _unknown_id(path: Path, line: int, qid: str) -> InputError:
    message = f"id {qid!r} is not a question of this suite; remove the line or fix the id"
    return InputError(path, line, message)


def read_answers(
    path: Path, question_ids: Iterable[str], *, data: bytes | None = None
) -> list[Answer]:
    """Answers of one arm; ``data`` is the file's bytes when the caller has read them."""
    known = set(question_ids)
    answers, error = decode_lines(path, read_bytes(path) if data is None else data, ANSWER)
    seen: dict[str, int] = {}
    ids = [a.id for a in answers]
    for a in answers if not (known.issuperset(ids) and _all_distinct(ids)) else ():
        if a.id not in known:
            raise _unknown_id(path, a.line, a.id)
        if seen.setdefault(a.id, a.line) != a.line:
            what, fix = f"answer for id {a.id!r}", "keep one answer per question"
            raise _duplicate(path, a.line, seen[a.id], what, fix)
    if error is not None:
        raise error
    return answers


def read_labels(
    path: Path, question_ids: Iterable[str], *, data: bytes | None = None
) -> list[Label]:
    """Labels of one arm; ``data`` is the file's bytes when the caller has read them."""
    known = set(question_ids)
    labels, error = decode_lines(path, read_bytes(path) if data is None else data, LABEL)
    seen: dict[tuple[str, str], int] = {}
    clean = known.issuperset([label.id for label in labels]) and _all_distinct(
        (label.rater, label.id) for label in labels
    )
    for label in labels if not clean else ():  # the first line at fault, when one is
        if label.id not in known:
            raise _unknown_id(path, label.line, label.id)
        first = seen.setdefault((label.rater, label.id), label.line)
        if first != label.line:
            what = f"label by rater {label.rater!r} on id {label.id!r}"
            fix = "remove one of the two (each rater labels an answer once)"
            raise _duplicate(path, label.line, first, what, fix)
    if error is not None:
        raise error
    return labels


def read_meta(path: Path) -> ArmMeta:
    obj = read_json(path)
    meta = decode_document(path, obj, META)
    return ArmMeta(meta.runner, dict(obj))


def read_manifest(path: Path) -> Manifest:
    return decode_document(path, read_json(path), MANIFEST)
