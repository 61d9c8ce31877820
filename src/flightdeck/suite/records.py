"""Typed records for every suite file, and readers that validate each one.

Readers stop at the first problem with an :class:`InputError` naming the file and line
and saying how to fix it. Unknown fields are rejected (a typo in a field name would
otherwise silently drop data), except in meta files, which are free-form provenance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from flightdeck.errors import InputError
from flightdeck.jsonl import read_bytes, read_json, read_jsonl

KINDS = ("decision-why", "blocker", "what-changed", "how-to", "who-owns")
RUNNERS = ("person", "harness")
CANARY_PREFIX = "FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-"
CANARY_RE = re.compile(re.escape(CANARY_PREFIX) + r"[0-9a-f]{32}\Z")
COMMIT_RE = re.compile(r"[0-9a-fA-F]{40}\Z")
SHA256_RE = re.compile(r"[0-9a-fA-F]{64}\Z")
OPAQUE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
SOURCE_URI_RE = re.compile(
    r"(?P<repo>[^/#\s]+)/(?P<path>[^#]+?)(?:#L(?P<start>[1-9]\d*)(?:-L(?P<end>[1-9]\d*))?)?\Z"
)


@dataclass(frozen=True, slots=True)
class Source:
    """A cited or valid source: a uri and the hex SHA-256 of its bytes."""

    uri: str
    sha256: str


@dataclass(frozen=True, slots=True)
class SourceUri:
    """A repository uri taken apart: ``<repo>/<path>[#L<start>[-L<end>]]``."""

    repo: str
    path: str
    start: int | None
    end: int | None  # equals start for a one-line span


def parse_source_uri(uri: str) -> SourceUri | None:
    """The parts of a repository uri; None for an opaque (``scheme:``) or malformed one.

    The one place that decides what is opaque: anything that starts with a scheme and a
    colon, as the spec's ``https://`` example.
    """
    if OPAQUE_RE.match(uri):
        return None
    match = SOURCE_URI_RE.match(uri)
    if match is None:
        return None
    start = int(match["start"]) if match["start"] else None
    end = int(match["end"]) if match["end"] else start
    return SourceUri(match["repo"], match["path"], start, end)


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    kind: str
    as_of: dict[str, str]
    scope: tuple[str, ...]
    line: int = 0


@dataclass(frozen=True, slots=True)
class Key:
    id: str
    answer_key: str
    required_facts: tuple[str, ...]
    valid_sources: tuple[Source, ...]
    canary: str | None
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": self.id,
            "answer_key": self.answer_key,
            "required_facts": list(self.required_facts),
            "valid_sources": [{"uri": s.uri, "sha256": s.sha256} for s in self.valid_sources],
        }
        if self.canary is not None:
            record["canary"] = self.canary
        return record


@dataclass(frozen=True, slots=True)
class Answer:
    id: str
    answer: str
    citations: tuple[Source, ...]
    sha256: str  # of the record as canonical JSON: what a label binds to
    line: int = 0


@dataclass(frozen=True, slots=True)
class Label:
    id: str
    rater: str
    correct: bool
    unsupported: tuple[str, ...]
    answer_sha256: str | None
    line: int = 0
    time: str | None = None  # when the rating tool recorded it


@dataclass(frozen=True, slots=True)
class ArmMeta:
    runner: Literal["person", "harness"]
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Manifest:
    suite: str
    sealed_at: str
    files: dict[str, str]  # file name -> sha256
    flightdeck_version: str
    # repositories sealed with --unchecked: their sources were never checked at as_of
    unchecked_repos: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """manifest.json as written (``files`` is stored under ``sha256``)."""
        out: dict[str, Any] = {
            "suite": self.suite,
            "sealed_at": self.sealed_at,
            "sha256": dict(self.files),
            "flightdeck_version": self.flightdeck_version,
        }
        if self.unchecked_repos:
            out["unchecked_repos"] = list(self.unchecked_repos)
        return out


class _Record:
    """Field access for one JSON object that raises located, fixable errors."""

    def __init__(self, path: Path, line: int | None, obj: dict[str, Any], allowed: Iterable[str]):
        self.path, self.line, self.obj = path, line, obj
        unknown = sorted(set(obj) - set(allowed))
        if unknown:
            self.fail(f"unknown field {unknown[0]!r}; allowed fields are {', '.join(allowed)}")

    def fail(self, message: str) -> None:
        raise InputError(self.path, self.line, message)

    def _get(self, name: str) -> Any:
        if name not in self.obj:
            self.fail(f"missing field {name!r}; add it")
        return self.obj[name]

    def string(self, name: str, *, non_empty: bool = True) -> str:
        value = self._get(name)
        if not isinstance(value, str):
            self.fail(f"{name} must be a string, got {_show(value)}")
        _check_encodable(self, name, value)
        if non_empty and not value.strip():
            self.fail(f"{name} is empty; give a non-empty string")
        return value  # type: ignore[no-any-return]

    def boolean(self, name: str) -> bool:
        value = self._get(name)
        if not isinstance(value, bool):
            self.fail(f"{name} must be true or false, got {_show(value)}")
        return value  # type: ignore[no-any-return]

    def strings(self, name: str, *, non_empty: bool, default: list[str] | None = None) -> list[str]:
        value = self.obj.get(name, default) if default is not None else self._get(name)
        if not isinstance(value, list):
            self.fail(f"{name} must be a list of strings, got {_show(value)}")
        if non_empty and not value:
            self.fail(f"{name} is empty; list at least one")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                self.fail(f"{name} must hold non-empty strings, got {_show(item)}")
            _check_encodable(self, name, item)
        return value  # type: ignore[no-any-return]

    def sources(self, name: str, *, non_empty: bool) -> tuple[Source, ...]:
        value = self._get(name)
        if not isinstance(value, list):
            self.fail(f"{name} must be a list of {{uri, sha256}} objects, got {_show(value)}")
        if non_empty and not value:
            self.fail(f"{name} is empty; list at least one source")
        result = []
        for item in value:
            if not isinstance(item, dict) or set(item) != {"uri", "sha256"}:
                self.fail(f"each entry of {name} must be {{uri, sha256}}, got {_show(item)}")
            uri, digest = item["uri"], item["sha256"]
            check_uri(self, uri, f"{name} uri")
            if not isinstance(digest, str) or not SHA256_RE.match(digest):
                self.fail(f"{name} sha256 of {uri!r} must be 64 hex digits, got {_show(digest)}")
            result.append(Source(uri, digest.lower()))
        return tuple(result)


def _check_encodable(record: _Record, name: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        record.fail(
            f"{name} holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode"
        )


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_uri(record: _Record, uri: object, what: str) -> None:
    """A uri is ``<repo>/<path>[#L<a>[-L<b>]]`` or an opaque ``scheme:...`` string."""
    if not isinstance(uri, str) or not uri.strip():
        record.fail(f"{what} must be a non-empty string, got {_show(uri)}")
    assert isinstance(uri, str)
    if OPAQUE_RE.match(uri):
        return
    match = SOURCE_URI_RE.match(uri)
    if not match:
        record.fail(f"{what} {uri!r} is not <repo>/<path>[#L<a>[-L<b>]] nor a scheme: uri")
    assert match is not None
    start, end = match["start"], match["end"]
    if end is not None and int(end) < int(start):
        record.fail(f"{what} {uri!r} has a span that ends before it starts")


def glob_ok(pattern: str) -> bool:
    """Whether a scope pattern compiles (a class such as [z-a] does not)."""
    from flightdeck.suite.repos import glob_regex

    try:
        glob_regex(pattern)
    except re.error:
        return False
    return True


def _check_unique(
    path: Path, line: int, seen: dict[str, int], key: str, what: str, fix: str = "make ids unique"
) -> None:
    if key in seen:
        raise InputError(path, line, f"duplicate {what} (first on line {seen[key]}); {fix}")
    seen[key] = line


def read_questions(path: Path) -> list[Question]:
    from flightdeck.suite import records_fast as formats_fast

    data = read_bytes(path)
    fast = formats_fast.questions(data)
    if fast is not None:
        return fast
    fields = ("id", "question", "kind", "as_of", "scope")
    questions, seen = [], {}  # type: ignore[var-annotated]
    for line, obj in read_jsonl(path, data):
        r = _Record(path, line, obj, fields)
        qid = r.string("id")
        _check_unique(path, line, seen, qid, f"id {qid!r}")
        text = r.string("question")
        kind = r.string("kind")
        if kind not in KINDS:
            r.fail(f"kind {kind!r} is unknown; use one of {', '.join(KINDS)}")
        as_of = r._get("as_of")
        if not isinstance(as_of, dict) or not as_of:
            r.fail("as_of must be an object mapping repository names to 40-hex commits")
        for repo, commit in as_of.items():
            if not repo or "/" in repo:
                r.fail(f"as_of repository name {repo!r} must be non-empty and contain no '/'")
            if not isinstance(commit, str) or not COMMIT_RE.match(commit):
                r.fail(
                    f"as_of commit for {repo!r} must be a full 40-hex commit, got {_show(commit)}"
                )
        scope = r.strings("scope", non_empty=False)
        for pattern in scope:
            if not glob_ok(pattern):
                r.fail(f"scope pattern {pattern!r} is not a valid glob; fix its [...] class")
        as_of = {repo: commit.lower() for repo, commit in as_of.items()}
        questions.append(Question(qid, text, kind, as_of, tuple(scope), line))
    if not questions:
        raise InputError(path, None, "no questions; write one JSON object per line")
    return questions


def read_keys(path: Path, *, sealed: bool | None = None) -> list[Key]:
    """Read keys; ``sealed=True`` requires canaries, ``False`` forbids them, None allows both."""
    from flightdeck.suite import records_fast as formats_fast

    data = read_bytes(path)
    fast = formats_fast.keys(data, sealed)
    if fast is not None:
        return fast
    fields = ("id", "answer_key", "required_facts", "valid_sources", "canary")
    keys, seen = [], {}  # type: ignore[var-annotated]
    canaries: dict[str, int] = {}
    for line, obj in read_jsonl(path, data):
        r = _Record(path, line, obj, fields)
        kid = r.string("id")
        _check_unique(path, line, seen, kid, f"id {kid!r}")
        answer_key = r.string("answer_key")
        facts = r.strings("required_facts", non_empty=True)
        sources = r.sources("valid_sources", non_empty=True)
        canary = obj.get("canary")
        if canary is not None and (not isinstance(canary, str) or not CANARY_RE.match(canary)):
            r.fail(f"canary must be {CANARY_PREFIX}<32 hex>; leave it out and let seal write it")
        if canary is not None:
            _check_unique(
                path, line, canaries, canary, "canary", "remove the canaries and seal again"
            )
        if sealed is True and canary is None:
            r.fail("missing canary; this suite was not sealed by `flightdeck knowledge seal`")
        if sealed is False and canary is not None:
            r.fail("has a canary before sealing; remove it, `knowledge seal` writes canaries")
        keys.append(Key(kid, answer_key, tuple(facts), sources, canary, line))
    if not keys:
        raise InputError(path, None, "no keys; write one JSON object per line")
    return keys


def read_answers(
    path: Path, question_ids: Iterable[str], *, data: bytes | None = None
) -> list[Answer]:
    """Answers of one arm; ``data`` is the file's bytes when the caller has read them."""
    from flightdeck.jsonl import canonical_json, sha256_bytes
    from flightdeck.suite import records_fast as formats_fast

    known = set(question_ids)
    data = read_bytes(path) if data is None else data
    fast = formats_fast.answers(data, known)
    if fast is not None:
        return fast
    answers, seen = [], {}  # type: ignore[var-annotated]
    for line, obj in read_jsonl(path, data):
        r = _Record(path, line, obj, ("id", "answer", "citations"))
        aid = r.string("id")
        if aid not in known:
            r.fail(f"id {aid!r} is not a question of this suite; remove the line or fix the id")
        _check_unique(
            path, line, seen, aid, f"answer for id {aid!r}", "keep one answer per question"
        )
        text = r.string("answer", non_empty=False)
        citations = r.sources("citations", non_empty=False)
        try:
            digest = sha256_bytes(canonical_json(obj))
        except UnicodeEncodeError:
            r.fail("holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode")
        answers.append(Answer(aid, text, citations, digest, line))
    return answers


def read_labels(
    path: Path, question_ids: Iterable[str], *, data: bytes | None = None
) -> list[Label]:
    """Labels of one arm; ``data`` is the file's bytes when the caller has read them."""
    from flightdeck.suite import records_fast as formats_fast

    known = set(question_ids)
    data = read_bytes(path) if data is None else data
    fast = formats_fast.labels(data, known)
    if fast is not None:
        return fast
    fields = ("id", "rater", "correct", "unsupported", "answer_sha256", "time")
    labels, seen = [], {}  # type: ignore[var-annotated]
    for line, obj in read_jsonl(path, data):
        r = _Record(path, line, obj, fields)
        lid = r.string("id")
        if lid not in known:
            r.fail(f"id {lid!r} is not a question of this suite; remove the line or fix the id")
        rater = r.string("rater")
        _check_unique(
            path,
            line,
            seen,
            f"{rater}\0{lid}",
            f"label by rater {rater!r} on id {lid!r}",
            "remove one of the two (each rater labels an answer once)",
        )
        correct = r.boolean("correct")
        unsupported = r.strings("unsupported", non_empty=False, default=[])
        for uri in unsupported:
            check_uri(r, uri, "unsupported entry")
        bound = obj.get("answer_sha256")
        if bound is not None and (not isinstance(bound, str) or not SHA256_RE.match(bound)):
            r.fail(f"answer_sha256 must be 64 hex digits, got {_show(bound)}")
        if "time" in obj and not isinstance(obj["time"], str):
            r.fail(f"time must be a string, got {_show(obj['time'])}")
        time = obj.get("time")
        labels.append(
            Label(lid, rater, correct, tuple(unsupported), bound and bound.lower(), line, time)
        )
    return labels


def read_meta(path: Path) -> ArmMeta:
    obj = read_json(path)
    r = _Record(path, None, obj, list(obj))
    runner = r.string("runner")
    if runner not in RUNNERS:
        r.fail(f"runner {runner!r} is unknown; use person or harness")
    for name in ("by", "date", "model"):
        r.string(name)
    if "knowledge_snapshot" not in obj:
        r.fail("missing field 'knowledge_snapshot'; record what the arm could read")
    return ArmMeta(runner, dict(obj))  # type: ignore[arg-type]


def read_manifest(path: Path) -> Manifest:
    obj = read_json(path)
    r = _Record(
        path, None, obj, ("suite", "sealed_at", "sha256", "flightdeck_version", "unchecked_repos")
    )
    suite, sealed_at, version = (
        r.string("suite"),
        r.string("sealed_at"),
        r.string("flightdeck_version"),
    )
    files = r._get("sha256")
    if not isinstance(files, dict) or set(files) != {"questions.jsonl", "keys.jsonl"}:
        r.fail(
            "sha256 must map questions.jsonl and keys.jsonl to their hashes; reseal as a new suite"
        )
    for name, digest in files.items():
        if not isinstance(digest, str) or not SHA256_RE.match(digest):
            r.fail(f"sha256 of {name} must be 64 hex digits")
    unchecked = obj.get("unchecked_repos", [])
    if not isinstance(unchecked, list) or not all(isinstance(u, str) for u in unchecked):
        r.fail("unchecked_repos must be a list of repository names")
    return Manifest(suite, sealed_at, dict(files), version, tuple(unchecked))
