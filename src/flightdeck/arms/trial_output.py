"""What a trial leaves behind: the result its harness wrote, and the trace flightdeck keeps.

The harness's out files are read outside the sandbox, so they are opened without following a
symlink, only when regular, and never past the output cap. The trace (a header, stdout,
stderr, the harness's result file and its own log, each at most the cap) is written
atomically under a file name any question id can have. Any output decodes to a result or a
one-line :class:`ProtocolError`: invalid UTF-8, an integer too long for Python's int
conversion, a lone surrogate, a nesting too deep.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import IO, TYPE_CHECKING

from flightdeck.arms import sandbox
from flightdeck.arms.protocol import (
    ENV_RESULT,
    ENV_TRACE,
    HarnessResult,
    check_result,
    decode_result,
)
from flightdeck.errors import ProtocolError
from flightdeck.files.clock import utc_now
from flightdeck.files.jsonl import atomic_writer
from flightdeck.suite.records import Question

if TYPE_CHECKING:
    from flightdeck.arms.workspace import Workspace

_LISTED = 20  # entries of a list the trace header shows before "and N more"


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


def _read_output(handle: IO[bytes], where: str, cap: int) -> str:
    handle.seek(0)
    data = handle.read(cap + 1)  # never more than the cap, whatever the file claims
    if len(data) > cap:
        raise ProtocolError(f"{where} is larger than {cap >> 20} MiB; print only the result")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"{where} is not UTF-8 (byte {exc.start + 1})") from None


def _open_out(path: Path, where: str) -> IO[bytes] | None:
    """A file the harness left in its out folder, or None when it wrote none.

    Opened without following a symlink and only when it is a regular file: the runner reads
    it outside the sandbox, so a harness that leaves ``trace.log -> .../keys.jsonl`` (or a
    FIFO that would block the runner) must not get that file copied into its trace.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        kind = "a symlink" if path.is_symlink() else (exc.strerror or str(exc))
        raise ProtocolError(f"{where} is {kind}, not a file; write the file itself") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ProtocolError(f"{where} is not a regular file; write the file itself")
    return os.fdopen(fd, "rb")


def check_out(out: Path) -> str | None:
    """Why the harness's out files may not be read (a symlink, a FIFO), else None."""
    for name, where in (("result.json", ENV_RESULT), ("trace.log", ENV_TRACE)):
        try:
            handle = _open_out(out / name, where)
        except ProtocolError as exc:
            return str(exc)
        if handle is not None:
            handle.close()
    return None


def collect_result(question: Question, out: Path, stdout: IO[bytes], cap: int) -> HarnessResult:
    """The result from FLIGHTDECK_RESULT when the harness wrote it, else from stdout."""
    where = "FLIGHTDECK_RESULT"
    result = _open_out(out / "result.json", where)
    if result is None:
        text = _read_output(stdout, "stdout", cap)
        where = "stdout"
    else:
        with result:
            text = _read_output(result, where, cap)
        if not text:
            text, where = _read_output(stdout, "stdout", cap), "stdout"
    return check_result(decode_result(text, where), question)


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:_LISTED])
    return shown + (f" and {len(items) - _LISTED} more" if len(items) > _LISTED else "")


def trace_header(
    question: Question,
    *,
    command: str,
    policy: sandbox.SandboxPolicy,
    workspace: Workspace | None,
    result: HarnessResult | None,
    exit_code: int | None,
    reason: str | None,
    seconds: float,
) -> str:
    """What happened, briefly: status, sandbox, the workspace's omissions, what was read."""
    if policy.mode == "bwrap":
        confined = "bwrap, network " + policy.network_words
        confined += ", env " + (" ".join(policy.pass_env) if policy.pass_env else "none passed")
    else:
        confined = sandbox.NO_SANDBOX_NOTE
    lines = [
        f"flightdeck trial {json.dumps(question.id, ensure_ascii=False)}",
        f"command: {command}",
        f"status: {'ok' if reason is None else 'failed: ' + reason}",
        f"exit: {exit_code}  seconds: {seconds:.3f}  finished: {utc_now()}",
        f"sandbox: {confined}",
    ]
    if workspace is not None:
        lines.append(f"workspace: {workspace.files} files ({workspace.label})")
        if workspace.omitted:
            counts = Counter(why for _, why in workspace.omitted)
            summary = ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))
            lines.append(f"left out: {len(workspace.omitted)} ({summary})")
            lines.append("  " + _listed([f"{uri} ({why})" for uri, why in workspace.omitted]))
    if result is not None:
        if result.read is None:
            lines.append("read: not reported by the harness")
        else:
            lines.append(f"read: {len(result.read)} files: {_listed(list(result.read))}")
    return "\n".join(lines) + "\n"


def _copy(source: IO[bytes], target: IO[bytes], cap: int) -> None:
    """Copy at most ``cap`` bytes: nothing past the output cap reaches a trace."""
    left = cap
    while left > 0:
        block = source.read(min(left, 1 << 20))
        if not block:
            break
        target.write(block)
        left -= len(block)


def write_trace(
    path: Path, *, header: str, out: Path, outputs: tuple[IO[bytes], IO[bytes]], cap: int
) -> None:
    """Write the trial's trace atomically: header, stdout, stderr, result file, own log."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as handle:
        handle.write(header.encode())
        for title, output in zip(("stdout", "stderr"), outputs, strict=True):
            handle.write(f"==> {title} <==\n".encode())
            output.seek(0)
            _copy(output, handle, cap)
            handle.write(b"\n")
        for name, where in (("result.json", ENV_RESULT), ("trace.log", ENV_TRACE)):
            handle.write(f"==> {where} <==\n".encode())
            try:
                log = _open_out(out / name, where)
            except ProtocolError as exc:
                handle.write(f"(not copied: {exc})".encode())
            else:
                if log is not None:
                    with log:
                        _copy(log, handle, cap)
            handle.write(b"\n")
