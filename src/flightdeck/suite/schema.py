"""The suite's records, one msgspec Struct each: the one place their rules are written.

A field's type is its rule (a non-blank string, one of the kinds, a 40-hex commit, a
repository or scheme uri). What msgspec checks cheaply in C (a type, a length, a
``Literal``) is a ``Meta`` constraint it checks as it decodes; a string's pattern, which
would cost msgspec a regex call per string, rides on the type as a
:class:`~flightdeck.suite.columns.Pattern`, and the rules a regex cannot hold (a glob's
syntax, a span's order, a real date) as a :class:`~flightdeck.suite.columns.Check`: the
reader runs both over each place of a whole file at once (:mod:`flightdeck.suite.columns`),
and on one value to say where a line fails (:mod:`flightdeck.suite.problems`).
``explanations.py`` gives the words for what a type refuses, the readers in ``records.py``
the rules between records. So a Struct here is decoded only by those readers: msgspec alone
(``msgspec.convert(obj, Label)``) checks the ``Meta`` constraints but not the patterns and
checks (``tests/unit/test_readers_are_the_entry.py`` holds ``src/`` to that).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

import msgspec
from msgspec import Meta, Struct

from flightdeck.suite.citations import URI_PATTERN, span_in_order, spans_in_order
from flightdeck.suite.columns import NON_BLANK, Check, Spelled, searched
from flightdeck.suite.decoding import AT_LEAST_ONE, Computed, Line, NonBlank
from flightdeck.suite.repos import glob_regex

CANARY_PREFIX = "FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-"

Kind = Literal["decision-why", "blocker", "what-changed", "how-to", "who-owns"]
KINDS: tuple[str, ...] = get_args(Kind)
Runner = Literal["person", "harness"]
RUNNERS: tuple[str, ...] = get_args(Runner)

# Hex of a fixed length, and a canary: msgspec checks the length, the reader the characters
# (over a whole file's values joined: a character class holds for a concatenation exactly
# when it holds for each part).
COMMIT = Spelled("[0-9a-fA-F]", 40)
SHA256 = Spelled("[0-9a-fA-F]", 64)
CANARY = Spelled("[0-9a-f]", 32, prefix=CANARY_PREFIX)
REPO_NAME = Spelled("[^/]")  # one or more characters, none a "/"
COMMIT_RE = re.compile(COMMIT.pattern.pattern)
SHA256_RE = re.compile(SHA256.pattern.pattern)
CANARY_RE = re.compile(CANARY.pattern.pattern)

Commit = Annotated[str, COMMIT.pattern, COMMIT.size]
Digest = Annotated[str, SHA256.pattern, SHA256.size]
KeyCanary = Annotated[str, CANARY.pattern, CANARY.size]
RepoName = Annotated[str, REPO_NAME.pattern, REPO_NAME.size]
# The same rules for msgspec to search string by string, for a Struct it decodes on its own,
# outside the suite readers (the holdouts manifest).
Sha256 = Annotated[str, Meta(pattern=SHA256.pattern.pattern)]
Canary = Annotated[str, Meta(pattern=CANARY.pattern.pattern)]


def glob_ok(pattern: str) -> bool:
    """Whether a scope pattern compiles (a class such as [z-a] does not)."""
    try:
        glob_regex(pattern)
    except re.error:
        return False
    return True


def iso_date(value: str) -> bool:
    """Whether ``value`` is a real ISO 8601 date or time (``2024-13-45`` is not)."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def iso_dates(values: list[str]) -> bool:
    """:func:`iso_date` over many values at once: one C call each, no Python frame."""
    try:
        deque(map(datetime.fromisoformat, values), maxlen=0)
    except ValueError:
        return False
    return True


def _globs_ok(patterns: list[str]) -> bool:
    return all(map(glob_ok, set(patterns)))  # each distinct pattern compiled once


# A uri's span ends after it starts; a scope pattern compiles; a date exists (regexes cannot).
Uri = Annotated[str, searched(URI_PATTERN), Check(span_in_order, spans_in_order)]
Glob = Annotated[str, NON_BLANK, Check(glob_ok, _globs_ok)]
Date = Annotated[str, NON_BLANK, Check(iso_date, iso_dates)]
SealedName = Annotated[str, searched(r"\A(?:questions|keys)\.jsonl\Z")]
BOTH_SEALED = Meta(min_length=2, max_length=2)  # two names of the two: both files


class Source(Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """A cited or valid source: a uri and the hex SHA-256 of its bytes."""

    uri: Uri
    sha256: Digest


class Question(Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    id: NonBlank
    question: NonBlank
    kind: Kind
    as_of: Annotated[dict[RepoName, Commit], AT_LEAST_ONE]
    scope: tuple[Glob, ...]
    line: Line = 0


class Key(Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    id: NonBlank
    answer_key: NonBlank
    required_facts: Annotated[tuple[NonBlank, ...], AT_LEAST_ONE]
    valid_sources: Annotated[tuple[Source, ...], AT_LEAST_ONE]
    canary: KeyCanary | None = None
    line: Line = 0

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


class Answer(Struct, frozen=True, forbid_unknown_fields=True, gc=False, omit_defaults=True):
    id: NonBlank
    answer: str
    citations: tuple[Source, ...]
    sha256: Computed = ""  # of the record as canonical JSON: what a label binds to
    line: Line = 0


class Label(Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    id: NonBlank
    rater: NonBlank
    correct: bool
    unsupported: tuple[Uri, ...] = ()
    answer_sha256: Digest | None = None
    line: Line = 0
    time: Date | None = None  # when the rating tool recorded it; a file may not give null
    # (#21) the required facts the rater ticked, in the key's order; a file may leave it out
    facts: tuple[bool, ...] | None = None


class LedgerRecord(Struct, frozen=True, gc=False):
    """One line of the scores ledger (``scores.jsonl``), as ``knowledge score`` appends it.

    Fields a newer writer adds are let through, as they always were; a record written by
    hand or by an older version may leave out all but the arm and its answers' hash.
    """

    arm: NonBlank
    answers_sha256: Digest  # the answers scored: an arm's answers never change after
    labels_sha256: str = ""
    scored_at: str = "?"  # when, as recorded ("?" when the record has no time)
    flightdeck_version: str = ""
    line: Line = 0


class Manifest(Struct, frozen=True, forbid_unknown_fields=True):
    suite: NonBlank
    sealed_at: NonBlank
    files: Annotated[dict[SealedName, Digest], BOTH_SEALED] = msgspec.field(name="sha256")
    flightdeck_version: NonBlank
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


class MetaFile(Struct, frozen=True):
    """The fields an arm's meta file must have; any others are kept as provenance."""

    runner: Runner
    by: NonBlank
    date: Date
    model: NonBlank
    knowledge_snapshot: Any


@dataclass(frozen=True, slots=True)
class ArmMeta:
    runner: Runner
    fields: dict[str, Any]
