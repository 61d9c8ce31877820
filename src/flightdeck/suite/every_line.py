"""The gold files read for ``knowledge check``: every bad line listed, the good ones kept.

The readers stop at a file's first bad line, which is right for every command that uses a
suite; ``check`` must list every problem of every line in one run (#21: a kind typo on one
line hid every problem after it). So when a file does not read whole, each line is read on
its own by the same reader (the same Struct, the same messages), the bad ones are listed
and blanked, and the reader runs once more over the rest for the rules between records
(unique ids, unique canaries), blanking each line it refuses in turn. The ids of the bad
lines are kept, so the cross-file checks do not also call their partners orphans: one fault,
one line. A bad line whose id cannot be read (not an object, nested too deeply) or is
another line's (a duplicate id) may be any id's partner, so the other file's ids missing from
this one are not called orphans while there are no more of them than such lines (nor any
when the file did not read at all, empty say); more of them are all listed, since some are
then missing whichever they are.

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


@dataclass(frozen=True)
class GoldLines:
    """What the questions and keys files hold, line by line."""

    questions: list[Question]
    keys: list[Key]
    problems: list[Problem]  # every bad line, in no particular order (the caller sorts)
    broken_ids: frozenset[str]  # ids whose partner may be a line that did not read


def read_gold_lines(questions_path: Path, keys_path: Path, repos: RepoSet) -> GoldLines:
    """Both files, every bad line a problem; short commits named in full where possible."""
    questions = every_line(questions_path, lambda path, data: read_questions(path, data=data))
    keys = every_line(
        keys_path, lambda path, data: read_keys(path, canaries=Canaries.EITHER, data=data)
    )
    question_ids = {q.id for q in questions.records}
    key_ids = {k.id for k in keys.records}
    problems = [_with_full_commit(p, questions_path, repos) for p in questions.problems]
    broken = _partners(questions, question_ids, key_ids) | _partners(keys, key_ids, question_ids)
    return GoldLines(questions.records, keys.records, problems + keys.problems, frozenset(broken))


@dataclass(frozen=True)
class FileLines(Generic[T]):
    """One file read line by line: the records of the lines that read, and the rest."""

    records: list[T]
    problems: list[Problem]  # one per bad line, or one for the whole file
    bad_lines: list[bytes]  # each line refused, as written
    read_whole: bool  # False: the file as a whole was refused (empty, say), no line blamed


def every_line(path: Path, read: Callable[[Path, bytes], list[T]]) -> FileLines[T]:
    """``read``'s records of the lines that read, a problem per line that does not."""
    data = read_bytes(path)
    try:
        return FileLines(read(path, data), [], [], read_whole=True)
    except InputError as exc:
        if exc.line is None:  # the file as a whole (empty, say): nothing line by line
            return FileLines([], [Problem(exc.path or str(path), 0, exc.message)], [], False)
    lines = data.split(b"\n")
    problems: list[Problem] = []
    bad: list[bytes] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            read(path, raw)  # the line on its own: the record's own rules
        except InputError as exc:
            problems.append(Problem(str(path), number, exc.message))
            bad.append(raw)
            lines[number - 1] = b""
    while True:  # the rules between records, over the lines that read
        try:
            records = read(path, b"\n".join(lines))
        except InputError as between:
            if between.line is None:  # every line was bad: "no questions" adds nothing
                return FileLines([], problems, bad, read_whole=True)
            problems.append(Problem(str(path), between.line, between.message))
            bad.append(lines[between.line - 1])
            lines[between.line - 1] = b""
            continue
        return FileLines(records, problems, bad, read_whole=True)


def _partners(file: FileLines[Any], ids: set[str], other_ids: set[str]) -> set[str]:
    """The ids of the other file that one of ``file``'s bad lines may be the partner of.

    A bad line's id is its own when it can be read and neither a line that read nor a bad
    line before it has it; the other bad lines may be anyone's partner (see the module's
    docstring).
    """
    named: set[str] = set()
    unnamed = 0
    for raw in file.bad_lines:
        found = _id_of(raw)
        if found and not found & (ids | named):
            named |= found
        else:
            unnamed += 1
    missing = other_ids - ids - named
    if not file.read_whole or len(missing) <= unnamed:
        return named | missing
    return named


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
