"""One trial: one harness process on one question, in its sandbox, under its timeout.

:func:`run_trial` never raises for the harness's faults: a crash, a timeout, output that is
not the result JSON, a workspace that could not be built are all a failed
:class:`TrialOutcome` with a one-line reason. Every trial leaves a trace: a short header
(status, sandbox, what the workspace held and left out, what the harness says it read),
then its stdout, stderr and ``FLIGHTDECK_TRACE`` log, for the canary scan.
What the harness left is read, and the trace written, by :mod:`flightdeck.arms.trial_output`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from flightdeck.arms import net_relay, sandbox
from flightdeck.arms.limits import (
    escape_control,
    file_over,
    folder_usage,
    limit_hint,
    out_folder_over,
    prlimit_argv,
    processes_over,
)
from flightdeck.arms.pids_cgroup import trial_group
from flightdeck.arms.protocol import (
    ENV_RESULT,
    ENV_TASK,
    ENV_TRACE,
    ENV_WORKSPACE,
    HarnessResult,
    task_record,
)
from flightdeck.arms.trial_output import (
    check_out,
    collect_result,
    trace_file_name,
    trace_header,
    write_trace,
)
from flightdeck.errors import InputError, ProtocolError
from flightdeck.files.clock import utc_now
from flightdeck.suite.records import Question

if TYPE_CHECKING:
    from flightdeck.arms.workspace import Workspace

KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when a trial times out
POLL = 0.2  # seconds between two looks at the size of a running trial's out folder


@dataclass(frozen=True)
class TrialSpec:
    """How every trial of a run is started."""

    argv: list[str]
    command: str
    timeout: float | None
    traces_dir: Path
    root: Path
    path: str  # PATH for the harness
    policy: sandbox.SandboxPolicy
    cwd: Path | None = None


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


def _tail_line(handle: IO[bytes]) -> str:
    """The last line of a harness's stderr, short, with control characters escaped."""
    handle.seek(0, os.SEEK_END)
    handle.seek(max(0, handle.tell() - 4096))
    lines = handle.read(4096).decode("utf-8", "replace").strip().splitlines()
    if not lines:
        return ""
    last = escape_control(lines[-1].strip())
    return last if len(last) <= 160 else last[:157] + "..."


def _wait(proc: subprocess.Popen[bytes], timeout: float | None, out: Path, cap: int) -> str:
    """Wait for the harness: "" when it exited, "timeout" or "out" when it was killed.

    On timeout its group gets SIGTERM, then SIGKILL after a grace; an out folder that grows
    past ``cap`` bytes gets SIGKILL at once (it is looked at every :data:`POLL` seconds).
    """
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
    over = False
    try:
        while True:
            try:
                proc.wait(POLL)
                break
            except subprocess.TimeoutExpired:
                if folder_usage(out, cap) > cap:
                    over = True
                    _signal_group(proc.pid, signal.SIGKILL)
    finally:
        done.set()
        if timer is not None:
            timer.cancel()
    if over or folder_usage(out, cap) > cap:
        return "out"
    return "timeout" if fired.is_set() else ""


def run_trial(
    question: Question,
    workspace_for: Callable[[Question], Workspace],
    scratch_parent: Path,
    spec: TrialSpec,
    control: TrialControl,
    verify: Callable[[Question, Workspace], str | None] | None = None,
) -> TrialOutcome:
    """Run the harness on one question in a fresh scratch folder; never raises for its faults.

    ``workspace_for`` builds (or reuses) the question's read-only workspace; a failure to
    build it is the trial's failure. ``verify`` says what the harness changed in the
    workspace, if anything (only needed without a sandbox, where file modes are all that
    protect it): a harness that changes it fails, whatever it answered.
    """
    started = time.monotonic()
    trace = spec.traces_dir / trace_file_name(question.id)
    shown_trace = trace.relative_to(spec.root) if trace.is_relative_to(spec.root) else trace
    scratch = Path(tempfile.mkdtemp(dir=scratch_parent, prefix="trial-"))
    out = scratch / "out"
    out.mkdir()
    exit_code: int | None = None
    result: HarnessResult | None = None
    workspace: Workspace | None = None
    try:
        # Unnamed files (O_TMPFILE): creating named ones is what costs most on a slow disk.
        with (
            tempfile.TemporaryFile(dir=scratch) as stdout,
            tempfile.TemporaryFile(dir=scratch) as stderr,
        ):
            try:
                workspace = workspace_for(question)
            except (InputError, OSError) as exc:
                reason: str | None = f"could not build the workspace: {exc}"
            else:
                exit_code, reason = _start_and_wait(
                    question, workspace, scratch, spec, control, stdout, stderr
                )
                capped = _over_cap(spec, out, stdout, stderr)
                if capped is not None:  # a stream or file at the cap explains any failure
                    reason = capped
                if reason is None:
                    reason = check_out(out)
                if reason is None:
                    try:
                        result = collect_result(
                            question, out, stdout, spec.policy.limits.output_bytes
                        )
                    except ProtocolError as exc:
                        reason = str(exc)
                changed = verify(question, workspace) if verify is not None else None
                if changed is not None:
                    result = None
                    reason = (
                        f"changed its read-only workspace ({changed}); "
                        "later trials get a fresh copy"
                    )
                if reason is not None and spec.policy.network_allow:
                    reason = net_relay.with_relay_failure(reason, scratch / "net")
            seconds = time.monotonic() - started
            header = trace_header(question, command=spec.command, policy=spec.policy,
                                  workspace=workspace, result=result, exit_code=exit_code,
                                  reason=reason, seconds=seconds)  # fmt: skip
            try:
                cap = spec.policy.limits.output_bytes
                write_trace(trace, header=header, out=out, outputs=(stdout, stderr), cap=cap)
            except OSError as exc:  # a full disk fails this trial, not the run
                result = None
                reason = f"could not write its trace {shown_trace}: {exc.strerror or exc}"
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


def _over_cap(spec: TrialSpec, out: Path, stdout: IO[bytes], stderr: IO[bytes]) -> str | None:
    """Why the trial broke an output cap (a stream or an out file at the cap), else None."""
    limits = spec.policy.limits
    for what, handle in (("stdout", stdout), ("stderr", stderr)):
        reason = file_over(os.fstat(handle.fileno()).st_size, limits, what)
        if reason is not None:
            return reason
    for name, what in (("result.json", "FLIGHTDECK_RESULT"), ("trace.log", "FLIGHTDECK_TRACE")):
        try:
            info = os.lstat(out / name)
        except OSError:
            continue
        reason = file_over(max(info.st_size, info.st_blocks * 512), limits, what)
        if reason is not None:
            return reason
    return None


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


def _command(
    workspace: Workspace, scratch: Path, spec: TrialSpec, task: str
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of one trial: inside bwrap, or bare without a sandbox."""
    policy = spec.policy
    out = scratch / "out"
    if policy.mode == "bwrap":
        where, out_shown, home, tmp = sandbox.WORKSPACE, sandbox.OUT, policy.home, "/tmp"
    else:
        assert workspace.path is not None
        where, out_shown = str(workspace.path.resolve()), str(out.resolve())
        home = tmp = str((scratch / "home").resolve())
        os.mkdir(home)
    protocol = {
        ENV_TASK: task,
        ENV_WORKSPACE: where,
        ENV_RESULT: f"{out_shown}/result.json",
        ENV_TRACE: f"{out_shown}/trace.log",
    }
    env = sandbox.harness_env(policy, path=spec.path, protocol=protocol, home=home, tmp=tmp)
    if policy.mode != "bwrap":
        return prlimit_argv(policy.prlimit, policy.limits, processes=False) + spec.argv, env
    cwd = (spec.cwd or Path.cwd()).resolve()
    argv = sandbox.bwrap_argv(policy, spec.argv, mounts=workspace.mounts, out_dir=out, cwd=cwd)
    return argv, env


def _start_and_wait(
    question: Question,
    workspace: Workspace,
    scratch: Path,
    spec: TrialSpec,
    control: TrialControl,
    stdout: IO[bytes],
    stderr: IO[bytes],
) -> tuple[int | None, str | None]:
    task = json.dumps(task_record(question), ensure_ascii=False)
    argv, env = _command(workspace, scratch, spec, task)
    if control.stop.is_set():
        return None, "not run: the run was interrupted"
    limits = spec.policy.limits
    try:
        processes = limits.processes + net_relay.own_processes(spec.policy.network_allow)
        group = trial_group(processes, sandboxed=spec.policy.mode == "bwrap")
    except OSError as exc:
        return None, f"could not make its process cgroup: {exc.strerror or exc}"
    try:
        with _stdin_for(task.encode()) as stdin:
            try:
                proc = subprocess.Popen(
                    group.wrap(argv) if group is not None else argv,
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
            killed = _wait(proc, spec.timeout, scratch / "out", limits.output_bytes)
        finally:
            _signal_group(proc.pid, signal.SIGKILL)  # whatever it left running
            control.discard(proc.pid)
        refused = group.refused() if group is not None else 0
    finally:
        if group is not None:
            group.close()  # kills what left the session, too
    code = proc.returncode
    if spec.policy.mode == "bwrap" and code is not None and code > 128:
        with contextlib.suppress(ValueError):  # bwrap exits 128 + N for a signal N
            signal.Signals(code - 128)
            code = 128 - code
    if killed == "out":
        return code, out_folder_over(limits)
    if killed == "timeout":
        return code, f"timed out after {spec.timeout:g} s; its process group was killed"
    if control.stop.is_set():
        return code, "killed: the run was interrupted"
    if refused:  # whatever it answered, it ran without the processes it asked for
        return code, processes_over(refused, limits)
    if code != 0:
        if code == -signal.SIGXFSZ:
            return code, file_over(limits.output_bytes, limits, "a file it wrote")
        what = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        last = _tail_line(stderr)
        hint = limit_hint(last, limits, sandboxed=spec.policy.mode == "bwrap")
        return code, what + (f" (stderr: {last})" if last else "") + hint
    return code, None
