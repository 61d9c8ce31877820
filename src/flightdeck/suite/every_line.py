"""The gold files read for ``knowledge check``: every bad line listed, the good ones kept.

The readers stop at a file's first bad line, which is right for every command that uses a
suite; ``check`` must list every problem of every line in one run (#21: a kind typo on one
line hid every problem after it). So when a file does not read whole, each line is read on
its own by the same reader (the same Struct, the same messages), the bad ones are listed
and blanked, and the reader runs once more over the rest for the rules between records
(unique ids, unique canaries), blanking each line it refuses in turn. The ids of the bad
lines are kept, so the cross-file checks do not also call their partners orphans.

A short ``as_of`` commit gets the full hash it names in the repository at hand (#21), so
the message says what to write.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_bytes
from flightdeck.suite.checks import Problem
from flightdeck.suite.records import Canaries, Key, Question, read_keys, read_questions
from flightdeck.suite.repos import RepoSet

T = TypeVar("T")
SHORT_COMMIT = re.compile(r"[0-9a-fA-F]{4,39}\Z")


@dataclass(frozen=True, slots=True)
class LinesRead(Generic[T]):
    """One file read line by line: the records of the lines that read, and the others."""

    records: list[T]
    problems: list[Problem]  # a problem per line that did not read
    broken_ids: set[str]  # the ids of those lines, where they can be read


@dataclass(frozen=True)
class GoldLines:
    """What the questions and keys files hold, line by line."""

    questions: list[Question]
    keys: list[Key]
    problems: list[Problem]  # every bad line, in no particular order (the caller sorts)
    broken_ids: frozenset[str]  # the ids of lines that did not read


def read_gold_lines(questions_path: Path, keys_path: Path, repos: RepoSet) -> GoldLines:
    """Both files, every bad line a problem; short commits named in full where possible."""
    questions = every_line(questions_path, lambda path, data: read_questions(path, data=data))
    keys = every_line(
        keys_path, lambda path, data: read_keys(path, canaries=Canaries.EITHER, data=data)
    )
    problems = [_with_full_commit(p, questions_path, repos) for p in questions.problems]
    return GoldLines(
        questions.records,
        keys.records,
        problems + keys.problems,
        frozenset(questions.broken_ids | keys.broken_ids),
    )


def every_line(path: Path, read: Callable[[Path, bytes], list[T]]) -> LinesRead[T]:
    """``read``'s records of the lines that read, a problem per line that does not, their ids."""
    data = read_bytes(path)
    try:
        return LinesRead(read(path, data), [], set())
    except InputError as exc:
        if exc.line is None:  # the file as a whole (empty, say): nothing line by line
            return LinesRead([], [Problem(exc.path or str(path), 0, exc.message)], set())
    lines = data.split(b"\n")
    problems: list[Problem] = []
    broken: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            read(path, raw)  # the line on its own: the record's own rules
        except InputError as exc:
            problems.append(Problem(str(path), number, exc.message))
            broken |= _id_of(raw)
            lines[number - 1] = b""
    while True:  # the rules between records, over the lines that read
        try:
            records = read(path, b"\n".join(lines))
        except InputError as between:
            if between.line is None:  # every line was bad: "no questions" adds nothing
                return LinesRead([], problems, broken)
            problems.append(Problem(str(path), between.line, between.message))
            lines[between.line - 1] = b""
            continue
        return LinesRead(records, problems, broken)


ID_TEXT = re.compile(rb'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _id_of(raw: bytes) -> set[str]:
    """The id a bad line gives, if any can be read (from its text, when it is not JSON)."""
    try:
        obj: Any = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's limit
        found = ID_TEXT.search(raw)  # only to keep its partner from being called an orphan
        if found is None:
            return set()
        try:
            obj = {"id": json.loads(b'"' + found[1] + b'"')}
        except ValueError:
            return set()
    value = obj.get("id") if isinstance(obj, dict) else None
    return {value} if isinstance(value, str) else set()


def _with_full_commit(problem: Problem, path: Path, repos: RepoSet) -> Problem:
    """A short ``as_of`` commit's problem, with the full hash it names in its repository."""
    if "as_of commit for" not in problem.message or not problem.line:
        return problem
    raw = path.read_bytes().split(b"\n")[problem.line - 1]
    try:
        as_of = json.loads(raw).get("as_of")
    except (ValueError, AttributeError):
        return problem
    if not isinstance(as_of, dict):
        return problem
    from flightdeck.suite.scaffold import resolve_commit

    hints = []
    for name, commit in as_of.items():
        if not (isinstance(commit, str) and SHORT_COMMIT.match(commit)):
            continue
        if name not in repos.locations or f"for {name!r}" not in problem.message:
            continue
        try:
            full = resolve_commit(repos.get(name), commit)
        except InputError:
            continue  # not at hand, unknown or ambiguous: the message stands as it is
        hints.append(f"{commit!r} is {full} in {name!r}: write that")
    if not hints:
        return problem
    return Problem(problem.path, problem.line, f"{problem.message}; {'; '.join(hints)}")
