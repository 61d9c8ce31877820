"""The readers of suite files: each line decoded against its record's Schema, then the
rules between records.

msgspec decodes and checks every line in C against the Structs of ``schema.py``. A bad
line is named with the file, the line and how to fix it, in the words ``explanations.py``
gives for the place msgspec refuses (see ``decoding.py``). The rules between records
(unique ids, ids the suite knows, one label per rater and answer) run once, after the lines
decode. Unknown fields are refused (a typo in a field name would otherwise drop data
silently), except in meta files, which are free-form provenance. The records and constants
are re-exported here, where the rest of flightdeck has always imported them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import msgspec

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_bytes, read_json
from flightdeck.suite.citations import (
    OPAQUE_RE,
    SOURCE_URI_RE,
    SourceUri,
    parse_source_uri,
)
from flightdeck.suite.decoding import decode_columns, decode_document, decode_lines
from flightdeck.suite.explanations import (
    ANSWER,
    KEY,
    LABEL,
    LEDGER,
    MANIFEST,
    META,
    QUESTION,
    UNSEALED_KEY,
)
from flightdeck.suite.schema import (
    CANARY_PREFIX,
    CANARY_RE,
    COMMIT_RE,
    KINDS,
    RUNNERS,
    SHA256_RE,
    Answer,
    ArmMeta,
    Key,
    Label,
    LedgerRecord,
    Manifest,
    Question,
    Source,
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
    "Canaries",
    "Key",
    "Label",
    "LedgerRecord",
    "Manifest",
    "Question",
    "Source",
    "SourceUri",
    "parse_source_uri",
    "read_answers",
    "read_keys",
    "read_labels",
    "read_ledger",
    "read_manifest",
    "read_meta",
    "read_questions",
]


# --- readers: lines first, then the rules between records ----------------------------------


def _duplicate(path: Path, line: int, first: int, what: str, fix: str) -> InputError:
    return InputError(path, line, f"duplicate {what} (first on line {first}); {fix}")


def _all_distinct(values: list[Any]) -> bool:
    """Whether no value repeats: one set built in C; the caller walks the records only when
    one does, to name the first repeat and where it first was."""
    return len(set(values)) == len(values)


def _pairs_distinct(raters: list[str], ids: list[str]) -> bool:
    """Whether no (rater, id) pair repeats: each rater's ids, grouped in one pass, a set each
    (a few sets of strings instead of a tuple a label)."""
    by_rater: dict[str, list[str]] = {}
    for rater, qid in zip(raters, ids, strict=True):
        group = by_rater.get(rater)
        if group is None:
            group = by_rater[rater] = []
        group.append(qid)
    return all(map(_all_distinct, by_rater.values()))


def read_questions(path: Path, *, data: bytes | None = None) -> list[Question]:
    """Questions; ``data`` is the file's bytes when the caller has read them."""
    columns, error = decode_columns(path, read_bytes(path) if data is None else data, QUESTION)
    questions: list[Question] = columns.records
    if not _all_distinct(columns[("id",)]):
        seen: dict[str, int] = {}
        for q in questions:
            if seen.setdefault(q.id, q.line) != q.line:
                raise _duplicate(path, q.line, seen[q.id], f"id {q.id!r}", "make ids unique")
    if error is not None:
        raise error
    if not questions:
        raise InputError(path, None, "no questions; write one JSON object per line")
    return questions


class Canaries(enum.Enum):
    """What :func:`read_keys` asks of the keys' canaries."""

    REQUIRED = "required"  # a sealed suite: every key has its canary
    FORBIDDEN = "forbidden"  # before sealing: seal writes them
    EITHER = "either"  # sealed or not (``knowledge check`` reads both)


def read_keys(
    path: Path, *, canaries: Canaries = Canaries.EITHER, data: bytes | None = None
) -> list[Key]:
    """Read keys, every one with a canary, none, or either (:class:`Canaries`).

    ``data`` is the file's bytes when the caller has read them.
    """
    canaries = Canaries(canaries)  # a bool or None here is a bug, not a mode
    data = read_bytes(path) if data is None else data
    keys, error = decode_lines(path, data, KEY)
    if error is not None and canaries is not Canaries.REQUIRED:
        keys, error = _unsealed_keys(path, data)  # (#15) a source's sha256 may be left out
    given = [k.canary for k in keys if k.canary is not None]
    if (
        not _all_distinct([k.id for k in keys])
        or not _all_distinct(given)
        or (canaries is Canaries.REQUIRED and len(given) != len(keys))
        or (canaries is Canaries.FORBIDDEN and given)
    ):
        _check_keys_one_by_one(path, keys, canaries=canaries)
    if error is not None:
        raise error
    if not keys:
        raise InputError(path, None, "no keys; write one JSON object per line")
    return keys


def _check_keys_one_by_one(path: Path, keys: list[Key], *, canaries: Canaries) -> None:
    """The first key, in file order, that repeats an id or a canary or has the wrong canary."""
    seen: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for k in keys:
        if seen.setdefault(k.id, k.line) != k.line:
            raise _duplicate(path, k.line, seen[k.id], f"id {k.id!r}", "make ids unique")
        if k.canary is not None and first_line.setdefault(k.canary, k.line) != k.line:
            fix = "remove the canaries and seal again"
            raise _duplicate(path, k.line, first_line[k.canary], "canary", fix)
        if canaries is Canaries.REQUIRED and k.canary is None:
            message = "missing canary; this suite was not sealed by `flightdeck knowledge seal`"
            raise InputError(path, k.line, message)
        if canaries is Canaries.FORBIDDEN and k.canary is not None:
            message = "has a canary before sealing; remove it, `knowledge seal` writes canaries"
            raise InputError(path, k.line, message)


# --- (#15) before sealing, a valid source may leave its sha256 out: seal computes it -------

# The sha256 of a valid source an author left out; seal writes the computed one in its place.
UNHASHED = ""


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
    columns, error = decode_columns(path, read_bytes(path) if data is None else data, ANSWER)
    answers: list[Answer] = columns.records
    ids = columns[("id",)]
    if not known.issuperset(ids) or not _all_distinct(ids):
        seen: dict[str, int] = {}
        for a in answers:
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
    columns, error = decode_columns(path, read_bytes(path) if data is None else data, LABEL)
    labels: list[Label] = columns.records
    ids = columns[("id",)]
    if not known.issuperset(ids) or not _pairs_distinct(columns[("rater",)], ids):
        seen: dict[tuple[str, str], int] = {}
        for label in labels:
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
    data = read_bytes(path)
    obj = read_json(path, data)
    meta = decode_document(path, obj, META, data)
    return ArmMeta(meta.runner, dict(obj))


def read_ledger(path: Path) -> list[LedgerRecord]:
    """The records of a scores ledger, in order; the first bad line is an InputError."""
    records, error = decode_lines(path, read_bytes(path), LEDGER)
    if error is not None:
        raise error
    return records


def read_manifest(path: Path) -> Manifest:
    data = read_bytes(path)
    return decode_document(path, read_json(path, data), MANIFEST, data)


# --- the gold set: questions and keys together -----------------------------------------------


class GoldFiles(Protocol):
    """Where a suite's questions and keys are (a ``project.Suite``, which imports this module)."""

    @property
    def questions(self) -> Path: ...
    @property
    def keys(self) -> Path: ...


def load_suite_files(suite: GoldFiles, *, canaries: Canaries) -> tuple[list[Question], list[Key]]:
    """Questions and keys, with the cross-file checks: same ids, sources within ``as_of``."""
    questions = read_questions(suite.questions)
    keys = read_keys(suite.keys, canaries=canaries)
    by_id = {q.id: q for q in questions}
    key_ids = {k.id for k in keys}
    for key in keys:
        question = by_id.get(key.id)
        if question is None:
            raise InputError(
                suite.keys,
                key.line,
                f"id {key.id!r} has no question in questions.jsonl; "
                "the two files need the same ids",
            )
        for source in key.valid_sources:
            # A repository uri's repository is what comes before its first "/": when that
            # is in as_of, the source is within it (and an opaque uri passes either way).
            if source.uri.partition("/")[0] in question.as_of:
                continue
            parsed = parse_source_uri(source.uri)
            if parsed is None:  # opaque: matched as a whole string
                continue
            if parsed.repo not in question.as_of:
                raise InputError(
                    suite.keys,
                    key.line,
                    f"valid source {source.uri!r} names repository {parsed.repo!r}, which is "
                    f"not in the question's as_of ({', '.join(question.as_of)}); fix the uri",
                )
    for question in questions:
        if question.id not in key_ids:
            raise InputError(
                suite.questions,
                question.line,
                f"id {question.id!r} has no key in keys.jsonl; the two files need the same ids",
            )
    return questions, keys
