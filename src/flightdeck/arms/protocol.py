"""The harness protocol: what a trial gives a harness and what it must give back.

A harness is any command. For each question ``flightdeck experiment run`` starts it with:

- the question record ``{id, question, kind, as_of, scope}`` as JSON on stdin and in
  ``FLIGHTDECK_TASK`` (never the key);
- ``FLIGHTDECK_WORKSPACE``: a read-only folder holding ``<repo>/<path>`` for every file the
  question may read (its ``as_of`` commits, filtered by its ``scope``);
- ``FLIGHTDECK_RESULT``: a file path the harness may write its result to;
- ``FLIGHTDECK_TRACE``: a file path for the harness's own log (kept in the trial's trace).

It answers with one JSON object, in ``FLIGHTDECK_RESULT`` or on stdout (the whole of stdout,
or its last non-blank line)::

    {"answer": "...", "citations": [{"uri": "sdlc/docs/adr/0002.md#L3-L9", "sha256": "<hex>"}]}

``sha256`` is the hex SHA-256 of the bytes of the whole cited file as the harness read it.
A citation must name a repository of the question's ``as_of`` (or be an absolute URL such as
``https://...``), and its path may not hold ``..``, ``.`` or empty segments.

Two optional fields are not part of the answer; the runner keeps them beside it:

- ``usage``: token counts of the trial, names to non-negative integers (a model harness
  reports ``input_tokens``, ``cached_tokens``, ``output_tokens``); the runs ledger records them
  and ``experiment run`` prints them per question;
- ``provenance``: a JSON object describing how the harness ran that is the same for every
  trial of an arm (its model, the documents it was given as ``knowledge_snapshot``, a prompt
  hash); the runner writes it into the arm's meta, and a trial whose provenance differs from
  the arm's earlier answers fails, so one arm never mixes two configurations.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from flightdeck.clock import utc_now
from flightdeck.errors import FlightdeckError
from flightdeck.jsonl import atomic_writer
from flightdeck.suite.records import OPAQUE_RE, SHA256_RE, Question, parse_source_uri

ENV_TASK = "FLIGHTDECK_TASK"
ENV_WORKSPACE = "FLIGHTDECK_WORKSPACE"
ENV_RESULT = "FLIGHTDECK_RESULT"
ENV_TRACE = "FLIGHTDECK_TRACE"

_MAX_QUOTED = 80
_MAX_USAGE_FIELDS = 32
_MAX_PROVENANCE_BYTES = 16 << 10


class ProtocolError(Exception):
    """A harness's output breaks the protocol; the message says how, in one line."""


@dataclass(frozen=True)
class HarnessResult:
    answer: str
    citations: tuple[tuple[str, str], ...]  # (uri, sha256)
    usage: dict[str, int] | None = None  # token counts, for the ledger and the summary
    provenance: dict[str, Any] | None = None  # the same for every trial; goes into the meta

    def record(self, question_id: str) -> dict[str, Any]:
        """The answers-file record for this result."""
        return {
            "id": question_id,
            "answer": self.answer,
            "citations": [{"uri": uri, "sha256": sha} for uri, sha in self.citations],
        }


def task_record(question: Question) -> dict[str, Any]:
    """What a harness is told about a question: the question file's fields, nothing more."""
    return {
        "id": question.id,
        "question": question.question,
        "kind": question.kind,
        "as_of": dict(question.as_of),
        "scope": list(question.scope),
    }


def _quote(text: str) -> str:
    text = text.strip()
    shown = text if len(text) <= _MAX_QUOTED else text[: _MAX_QUOTED - 3] + "..."
    return repr(shown)


def decode_output(text: str, where: str) -> Any:
    """The JSON value of a harness's output: the whole text, else its last non-blank line."""
    stripped = text.strip()
    if not stripped:
        raise ProtocolError(f"{where} is empty; print the result JSON or write FLIGHTDECK_RESULT")
    try:
        return json.loads(stripped)
    except (json.JSONDecodeError, RecursionError) as whole_error:
        last = stripped.splitlines()[-1].strip()
        if last != stripped:
            try:
                return json.loads(last)
            except (json.JSONDecodeError, RecursionError):
                pass
        reason = getattr(whole_error, "msg", "too deeply nested")
        raise ProtocolError(
            f"{where} is not the result JSON ({reason}): {_quote(stripped.splitlines()[-1])}"
        ) from None


def check_result(value: Any, question: Question) -> HarnessResult:
    """Validate a decoded result against the protocol and the question's ``as_of``."""
    if not isinstance(value, dict):
        raise ProtocolError(f"result must be a JSON object, got {type(value).__name__}")
    if not isinstance(value.get("answer"), str):
        raise ProtocolError("result needs an 'answer' string")
    citations = value.get("citations", [])
    if not isinstance(citations, list):
        raise ProtocolError("result 'citations' must be a list of {uri, sha256}")
    checked = []
    for item in citations:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise ProtocolError(f"each citation must be {{uri, sha256}}, got {_quote(repr(item))}")
        uri, digest = item["uri"], item.get("sha256")
        check_citation_uri(uri, question)
        if not isinstance(digest, str) or not SHA256_RE.match(digest):
            raise ProtocolError(f"citation {_quote(uri)} needs a sha256 of 64 hex digits")
        checked.append((uri, digest.lower()))
    usage = _check_usage(value.get("usage"))
    provenance = _check_provenance(value.get("provenance"))
    return HarnessResult(value["answer"], tuple(checked), usage, provenance)


def _check_usage(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > _MAX_USAGE_FIELDS:
        raise ProtocolError(
            f"result 'usage' must be an object of at most {_MAX_USAGE_FIELDS} counts"
        )
    for name, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ProtocolError(f"usage {_quote(name)} must be a non-negative integer")
    return dict(value)


def _check_provenance(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ProtocolError("result 'provenance' must be a JSON object")
    if len(json.dumps(value)) > _MAX_PROVENANCE_BYTES:
        raise ProtocolError(f"result 'provenance' is over {_MAX_PROVENANCE_BYTES >> 10} KiB")
    return value


def is_url(uri: str) -> bool:
    """An opaque citation (``scheme:...``, e.g. an https page), not a repository file."""
    return bool(OPAQUE_RE.match(uri))


def check_citation_uri(uri: str, question: Question) -> None:
    """A repository uri within the question's ``as_of``, or an opaque one."""
    if is_url(uri):
        return
    parsed = parse_source_uri(uri)
    if parsed is None:
        raise ProtocolError(f"citation {_quote(uri)} is not <repo>/<path>[#L<a>[-L<b>]]")
    repo, path = parsed.repo, parsed.path
    if repo not in question.as_of:
        allowed = ", ".join(sorted(question.as_of))
        raise ProtocolError(
            f"citation {_quote(uri)} names repository {repo!r}, outside the question's "
            f"as_of ({allowed})"
        )
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise ProtocolError(f"citation {_quote(uri)} has '..', '.' or an empty segment in its path")
    if parsed.start is not None and parsed.end is not None and parsed.end < parsed.start:
        raise ProtocolError(f"citation {_quote(uri)} has a span that ends before it starts")


# --- running one trial --------------------------------------------------------------------

KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when a trial times out
_READ_LIMIT = 64 << 20  # a result larger than this is not read


@dataclass(frozen=True)
class TrialSpec:
    """How every trial of a run is started."""

    argv: list[str]
    command: str
    timeout: float | None
    traces_dir: Path
    root: Path
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # set on top of os.environ


@dataclass(frozen=True)
class TrialOutcome:
    """One trial: its answer record when it succeeded, else the reason it failed."""

    id: str
    ok: bool
    reason: str | None
    exit_code: int | None
    seconds: float
    trace: Path
    record: dict[str, Any] | None = None
    usage: dict[str, int] | None = None
    provenance: dict[str, Any] | None = None

    def ledger_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.id,
            "status": "ok" if self.ok else "failed",
            "reason": self.reason,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "trace": self.trace.as_posix(),
            "finished": utc_now(),
        }
        if self.usage is not None:
            entry["usage"] = self.usage
        return entry


class TrialControl:
    """Shared by a run's trials: a stop flag and the process groups running now."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._groups: set[int] = set()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def kill_all(self) -> None:
        self.stop.set()
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def trace_file_name(question_id: str) -> str:
    """A file name for any id: percent-escaped, so distinct ids never share a trace.

    A name too long for a file system (over 200 bytes) keeps its start and gets a hash of
    the whole id.
    """
    name = urllib.parse.quote(question_id, safe="")
    if name.startswith("."):
        name = "%2E" + name[1:]
    if len(name) > 200:
        digest = hashlib.sha256(question_id.encode("utf-8", "surrogatepass")).hexdigest()
        name = f"{name[:150]}-{digest[:16]}"
    return name + ".log"


def _tail_line(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    handle.seek(max(0, handle.tell() - 4096))
    lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    if not lines:
        return ""
    last = lines[-1].strip()
    return last if len(last) <= 160 else last[:157] + "..."


def _read_output(handle: IO[bytes], where: str) -> str:
    handle.seek(0, os.SEEK_END)
    if handle.tell() > _READ_LIMIT:
        raise ProtocolError(f"{where} is larger than {_READ_LIMIT >> 20} MB; print only the result")
    handle.seek(0)
    try:
        return handle.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"{where} is not UTF-8 (byte {exc.start + 1})") from None


def _collect(question: Question, scratch: Path, stdout: IO[bytes]) -> HarnessResult:
    """The result from FLIGHTDECK_RESULT when the harness wrote it, else stdout."""
    where = "FLIGHTDECK_RESULT"
    try:
        result = (scratch / "result.json").open("rb")
    except OSError:
        text = _read_output(stdout, "stdout")
        where = "stdout"
    else:
        with result:
            text = _read_output(result, where)
        if not text:
            text, where = _read_output(stdout, "stdout"), "stdout"
    return check_result(decode_output(text, where), question)


def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait for the harness; on timeout SIGTERM its group, SIGKILL after a grace. True if so."""
    done, fired = threading.Event(), threading.Event()

    def expire() -> None:
        fired.set()
        _signal_group(proc.pid, signal.SIGTERM)
        if not done.wait(KILL_GRACE):
            _signal_group(proc.pid, signal.SIGKILL)

    timer = None
    if timeout is not None:
        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
    try:
        proc.wait()
    finally:
        done.set()
        if timer is not None:
            timer.cancel()
    return fired.is_set()


def run_trial(
    question: Question,
    workspace_for: Callable[[Question], Path],
    scratch_parent: Path,
    spec: TrialSpec,
    control: TrialControl,
    verify: Callable[[Question, Path], str | None] | None = None,
) -> TrialOutcome:
    """Run the harness on one question in a fresh scratch folder; never raises for its faults.

    ``workspace_for`` builds (or reuses) the question's read-only workspace; a failure to
    build it is the trial's failure. ``verify`` says what the harness changed in the
    workspace, if anything: a harness that changes it fails, whatever it answered.
    """
    started = time.monotonic()
    trace = spec.traces_dir / trace_file_name(question.id)
    shown_trace = trace.relative_to(spec.root) if trace.is_relative_to(spec.root) else trace
    scratch = Path(tempfile.mkdtemp(dir=scratch_parent, prefix="trial-"))
    exit_code: int | None = None
    result: HarnessResult | None = None
    try:
        # Unnamed files (O_TMPFILE): creating named ones is what costs most on a slow disk.
        with (
            tempfile.TemporaryFile(dir=scratch) as stdout,
            tempfile.TemporaryFile(dir=scratch) as stderr,
        ):
            try:
                workspace = workspace_for(question)
            except (FlightdeckError, OSError) as exc:
                reason: str | None = f"could not build the workspace: {exc}"
            else:
                exit_code, reason = _start_and_wait(
                    question, workspace, scratch, spec, control, stdout, stderr
                )
                if reason is None:
                    try:
                        result = _collect(question, scratch, stdout)
                    except ProtocolError as exc:
                        reason = str(exc)
                changed = verify(question, workspace) if verify is not None else None
                if changed is not None:
                    result = None
                    reason = (
                        f"changed its read-only workspace ({changed}); "
                        "later trials get a fresh copy"
                    )
            seconds = time.monotonic() - started
            _write_trace(
                trace, question, spec, scratch, (stdout, stderr), exit_code, reason, seconds
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ok = reason is None
    if result is None:
        return TrialOutcome(question.id, ok, reason, exit_code, seconds, shown_trace)
    return TrialOutcome(
        question.id,
        ok,
        reason,
        exit_code,
        seconds,
        shown_trace,
        result.record(question.id),
        result.usage,
        result.provenance,
    )


def _stdin_for(task: bytes) -> IO[bytes]:
    """The task on a pipe (it fits in the pipe's buffer), else in an unnamed file."""
    if len(task) < 65536:
        read_end, write_end = os.pipe()
        try:
            os.write(write_end, task)
        finally:
            os.close(write_end)
        return os.fdopen(read_end, "rb")
    handle = tempfile.TemporaryFile()  # noqa: SIM115 - the caller closes it
    handle.write(task)
    handle.seek(0)
    return handle


def _start_and_wait(
    question: Question,
    workspace: Path,
    scratch: Path,
    spec: TrialSpec,
    control: TrialControl,
    stdout: IO[bytes],
    stderr: IO[bytes],
) -> tuple[int | None, str | None]:
    task = json.dumps(task_record(question), ensure_ascii=False)
    env = dict(os.environ)
    env.update(spec.env)
    env.update(
        {
            ENV_TASK: task,
            ENV_WORKSPACE: str(workspace.resolve()),
            ENV_RESULT: str((scratch / "result.json").resolve()),
            ENV_TRACE: str((scratch / "trace.log").resolve()),
        }
    )
    if control.stop.is_set():
        return None, "not run: the run was interrupted"
    with _stdin_for(task.encode()) as stdin:
        try:
            proc = subprocess.Popen(
                spec.argv,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=spec.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            return None, f"could not start the harness: {exc.strerror or exc}"
    control.add(proc.pid)
    try:
        timed_out = _wait(proc, spec.timeout)
    finally:
        _signal_group(proc.pid, signal.SIGKILL)  # whatever it left running
        control.discard(proc.pid)
    code = proc.returncode
    if timed_out:
        return code, f"timed out after {spec.timeout:g} s; its process group was killed"
    if control.stop.is_set():
        return code, "killed: the run was interrupted"
    if code != 0:
        what = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        last = _tail_line(stderr)
        return code, what + (f" (stderr: {last})" if last else "")
    return code, None


def _write_trace(
    path: Path,
    question: Question,
    spec: TrialSpec,
    scratch: Path,
    outputs: tuple[IO[bytes], IO[bytes]],
    exit_code: int | None,
    reason: str | None,
    seconds: float,
) -> None:
    """Write the trial's trace atomically: a header, stdout, stderr, the harness's own log."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"flightdeck trial {json.dumps(question.id, ensure_ascii=False)}\n"
        f"command: {spec.command}\n"
        f"status: {'ok' if reason is None else 'failed: ' + reason}\n"
        f"exit: {exit_code}  seconds: {seconds:.3f}  finished: {utc_now()}\n"
    )
    with atomic_writer(path) as out:
        out.write(header.encode())
        for title, handle in zip(("stdout", "stderr"), outputs, strict=True):
            out.write(f"==> {title} <==\n".encode())
            handle.seek(0)
            shutil.copyfileobj(handle, out)
            out.write(b"\n")
        out.write(b"==> FLIGHTDECK_TRACE <==\n")
        with contextlib.suppress(FileNotFoundError), (scratch / "trace.log").open("rb") as log:
            shutil.copyfileobj(log, out)
        out.write(b"\n")
