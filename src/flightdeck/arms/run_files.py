"""The files a run writes as it goes: answers and the runs ledger, durable record by record.

Each record is flushed and fsynced as it lands, so a killed run loses no finished trial; a
torn last line is repaired on the next run, one run of an arm holds the lock at a time, and a
scored arm's answers change only when a rerun gives the same bytes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from flightdeck.errors import InputError, JSONProblem
from flightdeck.files.jsonl import atomic_write, dumps_line, writing_to
from flightdeck.files.strict_json import loads_strict
from flightdeck.project.suite_folder import SuiteFolder

if TYPE_CHECKING:
    from flightdeck.arms.trial import TrialOutcome


# What a line cut short by a kill reads as: bad syntax, a character cut in two, an open nest.
_TORN = frozenset({"syntax", "encoding", "depth"})


def repair_torn_line(path: Path) -> str | None:
    """Drop a last line cut short by a killed append; return what was done, if anything."""
    if not path.is_file():
        return None
    with path.open("rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return None
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            complete = isinstance(loads_strict(tail), dict)
        except JSONProblem as exc:  # a whole line the readers name (a key twice, a big number)
            complete = exc.kind not in _TORN
        if complete:
            handle.write(b"\n")
            message = "added the missing newline at the end"
        else:
            handle.truncate(cut)
            message = f"dropped a torn last line ({len(tail)} bytes) left by an interrupted run"
        handle.flush()
        os.fsync(handle.fileno())
    return message


class Appender:
    """A JSONL file held open for a run; each record is flushed and fsynced as it lands.

    (``jsonl.append_jsonl`` without reopening the file per record.) A last line left without
    its newline by a killed run gets one first, so it never swallows the next record.
    """

    def __init__(self, path: Path) -> None:
        with writing_to(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] = path.open("ab+")
        size = self._handle.seek(0, os.SEEK_END)
        if size:
            self._handle.seek(size - 1)
            if self._handle.read(1) != b"\n":
                self._handle.write(b"\n")

    def append(self, record: Any) -> None:
        """Write one record whole; on failure (a full disk) cut the file back to before it."""
        data = (dumps_line(record) + "\n").encode()
        size = self._handle.seek(0, os.SEEK_END)
        try:
            self._handle.write(data)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError:
            self._handle = _reopened(self._handle, size)
            raise

    def close(self) -> None:
        self._handle.close()


def _reopened(handle: IO[bytes], size: int) -> IO[bytes]:
    """The file reopened and truncated to ``size``: a torn record must not join the next one."""
    name = handle.name
    with contextlib.suppress(OSError):
        handle.close()  # the buffered rest of the record is dropped with the handle
    fresh: IO[bytes] = open(name, "ab+")  # noqa: SIM115 - Appender.close closes it
    fresh.truncate(size)
    return fresh


class RunLock:
    """An exclusive lock on the runs ledger: one run of an arm at a time."""

    def __init__(self, path: Path) -> None:
        with writing_to(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] = path.open("ab")
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise InputError(
                path, None, "another run of this arm is in progress; wait for it to finish"
            ) from None

    def release(self) -> None:
        self._handle.close()


def answers_for_scored_arm(suite: SuiteFolder, arm: str, *, scored: bool) -> Path:
    """Where this run writes: the answers file, or a rerun file when the arm was scored.

    The ledger forbids changing a scored arm's answers. A scored arm with trials left to run
    is refused (once the pending trials are known); one whose answers file is gone
    (``dvc repro -f`` removes stage outputs) is run again into ``answers/.<arm>.rerun.jsonl``
    (:meth:`SuiteFolder.rerun_answers`) and kept only if it gives the scored bytes.
    """
    answers_path = suite.answers(arm)
    if not scored or answers_path.is_file():
        return answers_path
    return suite.rerun_answers(arm)


def settle_rerun(suite: SuiteFolder, arm: str, rerun: Path, answers_path: Path) -> None:
    """Keep a scored arm's rerun only when it reproduces the scored answers byte for byte."""
    from flightdeck.files.jsonl import sha256_file

    scored = suite.read_ledger()[arm]
    if rerun.is_file() and sha256_file(rerun) == scored.answers_sha256:
        os.replace(rerun, answers_path)
        return
    raise InputError(
        answers_path,
        None,
        f"arm {arm!r} was scored on {scored.scored_at}; this run's answers differ from the scored "
        f"ones (this run's are in {rerun}, to compare; {answers_path.name} is left as "
        "it was): its answers cannot change, so run them under a new arm name",
    )


def previous_meta_date(meta_path: Path) -> str | None:
    """The ``date`` of a scored arm's meta: the file's, else its last committed version's.

    A rerun that reproduces a scored arm's answers byte for byte keeps the date they were
    first produced (#21); ``dvc repro -f`` removes the meta too, so git has it.
    """
    text: str | None = None
    if meta_path.is_file():
        text = meta_path.read_text(encoding="utf-8")
    else:
        import subprocess

        proc = subprocess.run(
            ["git", "-C", str(meta_path.parent), "show", f"HEAD:./{meta_path.name}"],
            capture_output=True,
            text=True,
            check=False,
        )
        text = proc.stdout if proc.returncode == 0 else None
    try:
        date = json.loads(text)["date"] if text else None
    except (ValueError, KeyError, TypeError):
        return None
    return date if isinstance(date, str) else None


def sort_answers(path: Path, order: list[str]) -> None:
    """Rewrite the answers in the suite's order (atomically), for stable diffs; bytes kept."""
    rank = {qid: i for i, qid in enumerate(order)}
    lines = [line for line in path.read_bytes().splitlines(keepends=True) if line.strip()]
    keyed = sorted(lines, key=lambda line: rank.get(json.loads(line).get("id"), len(rank)))
    if keyed != lines:
        atomic_write(path, b"".join(keyed))


def record_outcome(
    outcome: TrialOutcome, answers: Appender, ledger: Appender, run: str
) -> TrialOutcome:
    """Record a trial: the answer, then the ledger entry.

    A failed write (a full disk) fails that trial alone.
    """
    if outcome.record is not None:
        try:
            answers.append(outcome.record)
        except OSError as exc:
            reason = f"could not record its answer: {exc.strerror or exc}"
            outcome = dataclasses.replace(outcome, ok=False, reason=reason, record=None)
    with contextlib.suppress(OSError):  # the ledger is a log; the answer is what counts
        ledger.append({"run": run, **outcome.ledger_entry()})
    return outcome
