"""An independent reference for the suite-file readers: plain ``json`` and hand-written checks.

This is the reader flightdeck had before its records became msgspec Structs, kept only as a
test oracle: field by field, in plain Python, stopping at the first problem. The property
test in ``tests/unit/test_formats.py`` holds the schema-driven readers to it on inputs near
valid records, message for message. Four deliberate differences from that old reader: on one
line a record's own problems are named before the rules between records (a duplicate id), an
unpaired surrogate anywhere in a record is refused (it could not be written back as UTF-8), and
a key given twice in one object is refused (json keeps the last without a word; #25). A fourth
(#23): in a list of strings, each item is checked whole (a string, not blank, then its own
rule: a glob, a uri) before the next, as the record reads, where the old reader checked every
item for blankness first. It reads lines with plain ``json`` itself, not through flightdeck's
strict decoder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.files.jsonl import canonical_json, read_bytes, sha256_bytes
from flightdeck.suite.records import Answer, Key, Label, Question, Source
from flightdeck.suite.repos import glob_regex

KINDS = ("decision-why", "blocker", "what-changed", "how-to", "who-owns")
CANARY = re.compile(r"FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-[0-9a-f]{32}\Z")
COMMIT = re.compile(r"[0-9a-fA-F]{40}\Z")
SHA256 = re.compile(r"[0-9a-fA-F]{64}\Z")
OPAQUE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
REPO_URI = re.compile(r"[^/#\s]+/[^#]+?(?:#L([1-9]\d*)(?:-L([1-9]\d*))?)?\Z")
SURROGATE = "holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode"


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line with plain ``json``; a key given twice in one object is refused."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        for i, key in enumerate(keys):
            if key in keys[:i]:
                raise InputError(path, number, f"duplicate key {key!r} in one object; {ONE_KEY}")
        return dict(pairs)

    for number, raw in enumerate(read_bytes(path).split(b"\n"), start=1):
        if not raw.strip():
            continue
        if raw.startswith(b"\xef\xbb\xbf"):
            raise InputError(path, number, "starts with a byte-order mark; " + NO_BOM)
        try:
            obj = json.loads(raw.decode("utf-8"), object_pairs_hook=unique)
        except UnicodeDecodeError as exc:
            raise InputError(path, number, f"not UTF-8 (byte {exc.start + 1}); " + UTF8) from None
        except json.JSONDecodeError as exc:
            where = f"{exc.msg} at column {exc.colno}"
            raise InputError(
                path, number, f"not JSON ({where}); write one object per line"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(path, number, "expected a JSON object")
        yield number, obj


ONE_KEY = "keep one (JSON readers disagree on which of two equal keys wins)"
NO_BOM = "save the file as UTF-8 without BOM"
UTF8 = "save the file as UTF-8"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _real_time(value: str) -> bool:
    """A real ISO 8601 date or time, as Python reads one (``2026-13-45`` is none)."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _glob_ok(pattern: str) -> bool:
    """Glob syntax belongs to the repositories module; the reference asks it directly."""
    try:
        glob_regex(pattern)
    except re.error:
        return False
    return True


class Record:
    def __init__(self, path: Path, line: int, obj: dict[str, Any], allowed: tuple[str, ...]):
        self.path, self.line, self.obj = path, line, obj
        unknown = sorted(set(obj) - set(allowed))
        if unknown:
            self.fail(f"unknown field {unknown[0]!r}; allowed fields are {', '.join(allowed)}")

    def fail(self, message: str) -> None:
        raise InputError(self.path, self.line, message)

    def get(self, name: str) -> Any:
        if name not in self.obj:
            self.fail(f"missing field {name!r}; add it")
        return self.obj[name]

    def string(self, name: str, *, non_empty: bool = True) -> str:
        value = self.get(name)
        if not isinstance(value, str):
            self.fail(f"{name} must be a string, got {_show(value)}")
        if not _encodable(value):
            self.fail(f"{name} {SURROGATE}")
        if non_empty and not value.strip():
            self.fail(f"{name} is empty; give a non-empty string")
        return value  # type: ignore[no-any-return]

    def strings(
        self,
        name: str,
        *,
        non_empty: bool,
        default: list[str] | None = None,
        each: Callable[[str], None] | None = None,
    ) -> list[str]:
        value = self.obj.get(name, default) if default is not None else self.get(name)
        if not isinstance(value, list):
            self.fail(f"{name} must be a list of strings, got {_show(value)}")
        if non_empty and not value:
            self.fail(f"{name} is empty; list at least one")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                self.fail(f"{name} must hold non-empty strings, got {_show(item)}")
            if not _encodable(item):
                self.fail(f"{name} {SURROGATE}")
            if each is not None:  # each item whole before the next (#23)
                each(item)
        return value  # type: ignore[no-any-return]

    def uri(self, uri: object, what: str) -> None:
        if not isinstance(uri, str) or not uri.strip():
            self.fail(f"{what} must be a non-empty string, got {_show(uri)}")
        assert isinstance(uri, str)
        if OPAQUE.match(uri):
            return
        match = REPO_URI.match(uri)
        if not match:
            self.fail(f"{what} {uri!r} is not <repo>/<path>[#L<a>[-L<b>]] nor a scheme: uri")
        assert match is not None
        if match[2] is not None and int(match[2]) < int(match[1]):
            self.fail(f"{what} {uri!r} has a span that ends before it starts")

    def glob(self, pattern: str) -> None:
        if not _glob_ok(pattern):
            self.fail(f"scope pattern {pattern!r} is not a valid glob; fix its [...] class")

    def unsupported_entry(self, uri: str) -> None:
        self.uri(uri, "unsupported entry")

    def sources(
        self, name: str, *, non_empty: bool, unhashed_ok: bool = False
    ) -> tuple[Source, ...]:
        value = self.get(name)
        if not isinstance(value, list):
            self.fail(f"{name} must be a list of {{uri, sha256}} objects, got {_show(value)}")
        if non_empty and not value:
            self.fail(f"{name} is empty; list at least one source")
        result = []
        for item in value:
            if unhashed_ok and isinstance(item, dict) and set(item) == {"uri"}:
                self.uri(item["uri"], f"{name} uri")  # (#15) seal computes the hash
                result.append(Source(item["uri"], ""))
                continue
            if not isinstance(item, dict) or set(item) != {"uri", "sha256"}:
                self.fail(f"each entry of {name} must be {{uri, sha256}}, got {_show(item)}")
            uri, digest = item["uri"], item["sha256"]
            self.uri(uri, f"{name} uri")
            if not isinstance(digest, str) or not SHA256.match(digest):
                self.fail(f"{name} sha256 of {uri!r} must be 64 hex digits, got {_show(digest)}")
            result.append(Source(uri, digest.lower()))
        return tuple(result)

    def whole_record_encodable(self) -> None:
        try:
            canonical_json(self.obj)
        except UnicodeEncodeError:
            self.fail(SURROGATE)


def _once(path: Path, line: int, seen: dict[Any, int], key: Any, what: str, fix: str) -> None:
    if key in seen:
        raise InputError(path, line, f"duplicate {what} (first on line {seen[key]}); {fix}")
    seen[key] = line


def questions(path: Path) -> list[Question]:
    out, seen = [], {}  # type: ignore[var-annotated]
    for line, obj in _lines(path):
        r = Record(path, line, obj, ("id", "question", "kind", "as_of", "scope"))
        qid, text, kind = r.string("id"), r.string("question"), r.string("kind")
        if kind not in KINDS:
            r.fail(f"kind {kind!r} is unknown; use one of {', '.join(KINDS)}")
        as_of = r.get("as_of")
        if not isinstance(as_of, dict) or not as_of:
            r.fail("as_of must be an object mapping repository names to 40-hex commits")
        for repo, commit in as_of.items():
            if not repo or "/" in repo:
                r.fail(f"as_of repository name {repo!r} must be non-empty and contain no '/'")
            if not isinstance(commit, str) or not COMMIT.match(commit):
                r.fail(
                    f"as_of commit for {repo!r} must be a full 40-hex commit, got {_show(commit)}"
                )
        scope = r.strings("scope", non_empty=False, each=r.glob)
        r.whole_record_encodable()
        _once(path, line, seen, qid, f"id {qid!r}", "make ids unique")
        commits = {repo: commit.lower() for repo, commit in as_of.items()}
        out.append(Question(qid, text, kind, commits, tuple(scope), line))  # type: ignore[arg-type]
    if not out:
        raise InputError(path, None, "no questions; write one JSON object per line")
    return out


def keys(path: Path, sealed: bool | None = None) -> list[Key]:
    out, seen, canaries = [], {}, {}  # type: ignore[var-annotated]
    fields = ("id", "answer_key", "required_facts", "valid_sources", "canary")
    for line, obj in _lines(path):
        r = Record(path, line, obj, fields)
        kid, answer_key = r.string("id"), r.string("answer_key")
        facts = r.strings("required_facts", non_empty=True)
        sources = r.sources("valid_sources", non_empty=True, unhashed_ok=sealed is not True)
        canary = obj.get("canary")
        if canary is not None and (not isinstance(canary, str) or not CANARY.match(canary)):
            r.fail(
                "canary must be FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-<32 hex>; "
                "leave it out and let seal write it"
            )
        unhashed = [src.uri for src in sources if not src.sha256]
        if canary is not None and unhashed and isinstance(canary, str) and CANARY.match(canary):
            r.fail(
                f"valid source {unhashed[0]!r} has no sha256, but the key has a canary: a sealed "
                "key carries every hash; restore it from git, or seal a new suite version"
            )
        r.whole_record_encodable()
        _once(path, line, seen, kid, f"id {kid!r}", "make ids unique")
        if canary is not None:
            _once(path, line, canaries, canary, "canary", "remove the canaries and seal again")
        if sealed is True and canary is None:
            r.fail("missing canary; this suite was not sealed by `flightdeck knowledge seal`")
        if sealed is False and canary is not None:
            r.fail("has a canary before sealing; remove it, `knowledge seal` writes canaries")
        out.append(Key(kid, answer_key, tuple(facts), sources, canary, line))
    if not out:
        raise InputError(path, None, "no keys; write one JSON object per line")
    return out


def _known(r: Record, known: set[str], qid: str) -> None:
    if qid not in known:
        r.fail(f"id {qid!r} is not a question of this suite; remove the line or fix the id")


def answers(path: Path, question_ids: Iterable[str]) -> list[Answer]:
    known, out, seen = set(question_ids), [], {}  # type: ignore[var-annotated]
    for line, obj in _lines(path):
        r = Record(path, line, obj, ("id", "answer", "citations"))
        aid, text = r.string("id"), r.string("answer", non_empty=False)
        citations = r.sources("citations", non_empty=False)
        r.whole_record_encodable()
        _known(r, known, aid)
        what, fix = f"answer for id {aid!r}", "keep one answer per question"
        _once(path, line, seen, aid, what, fix)
        out.append(Answer(aid, text, citations, sha256_bytes(canonical_json(obj)), line))
    return out


def labels(path: Path, question_ids: Iterable[str]) -> list[Label]:
    known, out, seen = set(question_ids), [], {}  # type: ignore[var-annotated]
    fields = ("id", "rater", "correct", "unsupported", "answer_sha256", "time", "facts")
    for line, obj in _lines(path):
        r = Record(path, line, obj, fields)
        lid, rater = r.string("id"), r.string("rater")
        correct = r.get("correct")
        if not isinstance(correct, bool):
            r.fail(f"correct must be true or false, got {_show(correct)}")
        unsupported = r.strings(
            "unsupported",
            non_empty=False,
            default=[],
            each=r.unsupported_entry,
        )
        bound = obj.get("answer_sha256")
        if bound is not None and (not isinstance(bound, str) or not SHA256.match(bound)):
            r.fail(f"answer_sha256 must be 64 hex digits, got {_show(bound)}")
        if "time" in obj and not isinstance(obj["time"], str):
            r.fail(f"time must be a string, got {_show(obj['time'])}")
        if "time" in obj and _encodable(obj["time"]) and not _real_time(obj["time"]):
            r.fail(
                f"time {_show(obj['time'])} is not a date or time; write an ISO 8601 time "
                "such as 2026-12-01T14:25:28Z, or leave time out"
            )
        facts = obj.get("facts")
        if "facts" in obj and (
            not isinstance(facts, list) or not all(isinstance(f, bool) for f in facts)
        ):
            r.fail(
                "facts must be a list of true or false, one per required fact in the key's "
                f"order, got {_show(facts)}"
            )
        r.whole_record_encodable()
        _known(r, known, lid)
        what = f"label by rater {rater!r} on id {lid!r}"
        fix = "remove one of the two (each rater labels an answer once)"
        _once(path, line, seen, (rater, lid), what, fix)
        bound = bound and bound.lower()
        ticks = None if facts is None else tuple(facts)
        out.append(
            Label(lid, rater, correct, tuple(unsupported), bound, line, obj.get("time"), ticks)
        )
    return out
