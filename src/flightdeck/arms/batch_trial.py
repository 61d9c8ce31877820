"""Many trials in one harness process: the built-in LLM agent's batches, each question a trial.

Importing inspect_ai and starting an eval costs seconds, more than a fast model takes to
answer; a process per question pays it for every question. For a harness that takes batches
(``experiment agent llm`` without ``--mcp``, :func:`flightdeck.arms.harness_needs.harness_needs`)
the runner starts one process for up to :data:`BATCH_SIZE` questions instead and still keeps
every question a trial of its own:

- each question's workspace is its own read-only folder, ``WORKSPACE/<n>`` in the sandbox,
  and the harness builds that question's tools over that folder only;
- the harness gets :data:`ENV_BATCH`, the path of ``batch.json``: ``{"jobs", "timeout",
  "trials": [{"task", "workspace", "out"}]}``, where ``task`` is the question record and
  ``out`` the question's own folder, in which it writes ``trace.log``, ``timing.json`` and
  then, atomically, ``result.json`` (the protocol's result) or ``failed.txt`` (one line: why);
- the runner collects each question as soon as its ``result.json`` or ``failed.txt``
  appears, checks and records it like any trial (answer appended and fsynced, ledger entry,
  trace ``traces/<suite>/<arm>/<id>.log``), so a kill loses no finished question and a rerun
  runs only the rest;
- ``--timeout`` is each question's: inspect's time limit on its sample, and a watchdog on the
  process (the timeout times the batch's rounds of ``--jobs`` questions, plus a grace);
  questions left when the process ends, is killed or times out fail with the reason, and the
  process's own stdout and stderr go to the trace of the last question collected.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from flightdeck.arms import net_relay, sandbox
from flightdeck.arms.limits import prlimit_argv, processes_over
from flightdeck.arms.pids_cgroup import TrialGroup, trial_group
from flightdeck.arms.protocol import ENV_WORKSPACE, HarnessResult, task_record
from flightdeck.arms.trial import TrialControl, TrialOutcome, TrialSpec
from flightdeck.arms.trial_output import (
    check_out,
    collect_result,
    trace_file_name,
    trace_header,
    write_trace,
)
from flightdeck.errors import InputError, ProtocolError
from flightdeck.suite.records import Question

if TYPE_CHECKING:
    from flightdeck.arms.workspace import Workspace, WorkspaceCache

ENV_BATCH = "FLIGHTDECK_BATCH"
BATCH_SIZE = 64  # questions per process: bounds the workspaces held at once
GRACE = 30.0  # seconds the watchdog allows beyond the questions' own time limits
_POLL = 0.02
_MAX_REASON = 400  # characters of a reason: the harness's error line, whole

Record = Callable[[TrialOutcome], None]  # what a batch calls with each trial it ends


def run_batches(
    questions: Sequence[Question],
    *,
    spec: TrialSpec,
    cache: WorkspaceCache,
    control: TrialControl,
    jobs: int,
    record: Callable[[TrialOutcome], TrialOutcome],
    on_trial: Callable[[TrialOutcome], None] | None = None,
    verify: Callable[[Question, Workspace], str | None] | None = None,
) -> list[TrialOutcome]:
    """Run ``questions`` in batches of :data:`BATCH_SIZE`; ``record`` each trial as it ends.

    ``record`` stores the outcome (and may replace it, e.g. for a provenance conflict);
    ``on_trial`` then hears it, from the calling thread.
    """
    outcomes: list[TrialOutcome] = []

    def collected(outcome: TrialOutcome) -> None:
        outcome = record(outcome)
        outcomes.append(outcome)
        if on_trial is not None:
            on_trial(outcome)

    for start in range(0, len(questions), BATCH_SIZE):
        if control.stop.is_set():
            break
        batch = _Batch(questions[start : start + BATCH_SIZE], spec, cache, control, jobs, verify)
        batch.run(collected)
    return outcomes


class _Batch:
    def __init__(
        self,
        questions: Sequence[Question],
        spec: TrialSpec,
        cache: WorkspaceCache,
        control: TrialControl,
        jobs: int,
        verify: Callable[[Question, Workspace], str | None] | None,
    ) -> None:
        self.questions, self.spec, self.cache, self.control = questions, spec, cache, control
        self.jobs, self.verify = jobs, verify
        self.started = time.monotonic()
        self.last_trace: Path | None = None
        self.etc = Path(os.devnull)

    def run(self, record: Record) -> None:
        scratch = Path(tempfile.mkdtemp(dir=self.cache.root, prefix="batch-"))
        self.etc = scratch / "net"  # the network relay's folder, when the arm has an allow-list
        out = scratch / "out"
        out.mkdir()
        held: dict[int, tuple[Question, Workspace]] = {}
        try:
            for n, question in enumerate(self.questions):
                try:
                    held[n] = (question, self.cache.acquire(question))
                except (InputError, OSError) as exc:
                    record(
                        self._outcome(question, None, None, f"could not build the workspace: {exc}")
                    )
                    continue
                (out / str(n)).mkdir()
            if held:
                self._start_and_collect(held, scratch, out, record)
        finally:
            for _, workspace in held.values():
                self.cache.release(workspace)
            shutil.rmtree(scratch, ignore_errors=True)

    def _start_and_collect(
        self,
        held: dict[int, tuple[Question, Workspace]],
        scratch: Path,
        out: Path,
        record: Record,
    ) -> None:
        argv, env = self._command(held, scratch, out)
        timeout = self.spec.timeout
        deadline = None
        if timeout is not None:
            rounds = math.ceil(len(held) / max(1, self.jobs))
            deadline = self.started + timeout * rounds + GRACE
        limits = self.spec.policy.limits
        try:
            processes = limits.processes + net_relay.own_processes(self.spec.policy.network_allow)
            group = trial_group(processes, sandboxed=self.spec.policy.mode == "bwrap")
        except OSError as exc:
            for question, workspace in held.values():
                why = f"could not make its process cgroup: {exc.strerror or exc}"
                record(self._outcome(question, workspace, None, why))
            return
        with (
            tempfile.TemporaryFile(dir=scratch) as stdout,
            tempfile.TemporaryFile(dir=scratch) as stderr,
            _closing(group),
        ):
            try:
                proc = subprocess.Popen(
                    group.wrap(argv) if group is not None else argv,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    env=env,
                    cwd=self.spec.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                for question, workspace in held.values():
                    why = f"could not start the harness: {exc.strerror or exc}"
                    record(self._outcome(question, workspace, None, why))
                return
            self.control.add(proc.pid)
            pending = dict(held)
            why_left = None
            try:
                while pending:
                    exited = proc.poll() is not None
                    self._sweep(pending, out, None, record)
                    if exited or not pending:
                        break
                    if self.control.stop.is_set():
                        why_left = "killed: the run was interrupted"
                        break
                    if deadline is not None and time.monotonic() > deadline:
                        why_left = f"timed out: the batch ran past {timeout:g} s a question"
                        break
                    time.sleep(_POLL)
            finally:
                _signal_group(proc.pid, signal.SIGKILL)  # whatever it left running
                proc.wait()
                self.control.discard(proc.pid)
            code = proc.returncode
            self._sweep(pending, out, code, record)
            refused = group.refused() if group is not None else 0
            if why_left is None and refused:
                why_left = processes_over(refused, limits)
            if why_left is None:
                last = _tail_line(stderr)
                why_left = f"the harness exited (status {code}) before answering" + (
                    f" (stderr: {last})" if last else ""
                )
            for n, (question, workspace) in sorted(pending.items()):
                record(
                    self._outcome(
                        question, workspace, code, why_left, out / str(n), (stdout, stderr)
                    )
                )
            if not pending and self.last_trace is not None and _size(stdout) + _size(stderr):
                _append_outputs(self.last_trace, (stdout, stderr))

    def _command(
        self, held: dict[int, tuple[Question, Workspace]], scratch: Path, out: Path
    ) -> tuple[list[str], dict[str, str]]:
        policy = self.spec.policy
        confined = policy.mode == "bwrap"
        trials, mounts = [], []
        for n, (question, workspace) in held.items():
            if confined:
                where, out_shown = f"{sandbox.WORKSPACE}/{n}", f"{sandbox.OUT}/{n}"
                mounts += [(f"{n}/{name}", tree) for name, tree in workspace.mounts]
            else:
                assert workspace.path is not None
                where, out_shown = str(workspace.path.resolve()), str((out / str(n)).resolve())
            trials.append({"task": task_record(question), "workspace": where, "out": out_shown})
        batch = {"jobs": self.jobs, "timeout": self.spec.timeout, "trials": trials}
        (out / "batch.json").write_text(json.dumps(batch, ensure_ascii=False), encoding="utf-8")
        if confined:
            home, tmp = policy.home, "/tmp"
            root, batch_path = sandbox.WORKSPACE, f"{sandbox.OUT}/batch.json"
        else:
            home = tmp = str((scratch / "home").resolve())
            os.mkdir(home)
            root, batch_path = str(out.resolve()), str((out / "batch.json").resolve())
        protocol = {ENV_BATCH: batch_path, ENV_WORKSPACE: root}
        env = sandbox.harness_env(
            policy, path=self.spec.path, protocol=protocol, home=home, tmp=tmp
        )
        if not confined:
            return prlimit_argv(
                policy.prlimit, policy.limits, processes=False
            ) + self.spec.argv, env
        cwd = (self.spec.cwd or Path.cwd()).resolve()
        return sandbox.bwrap_argv(policy, self.spec.argv, mounts=mounts, out_dir=out, cwd=cwd), env

    def _sweep(
        self,
        pending: dict[int, tuple[Question, Workspace]],
        out: Path,
        code: int | None,
        record: Record,
    ) -> None:
        """Collect every pending question whose result or failure is written."""
        for n in sorted(pending):
            folder = out / str(n)
            if (folder / "result.json").exists() or (folder / "failed.txt").exists():
                question, workspace = pending.pop(n)
                record(self._collect(question, workspace, folder, code))

    def _collect(
        self, question: Question, workspace: Workspace, folder: Path, code: int | None
    ) -> TrialOutcome:
        reason = check_out(folder)
        result: HarnessResult | None = None
        if reason is None and (folder / "failed.txt").exists():
            text = (folder / "failed.txt").read_bytes()[:_MAX_REASON].decode("utf-8", "replace")
            reason = " ".join(text.split()) or "the harness failed the question without a reason"
        elif reason is None:
            with tempfile.TemporaryFile() as nothing:
                try:
                    result = collect_result(
                        question, folder, nothing, self.spec.policy.limits.output_bytes
                    )
                except ProtocolError as exc:
                    reason = str(exc)
        changed = self.verify(question, workspace) if self.verify is not None else None
        if changed is not None:
            result = None
            reason = f"changed its read-only workspace ({changed}); later trials get a fresh copy"
        return self._outcome(question, workspace, code, reason, folder, None, result)

    def _outcome(
        self,
        question: Question,
        workspace: Workspace | None,
        code: int | None,
        reason: str | None,
        folder: Path | None = None,
        outputs: tuple[IO[bytes], IO[bytes]] | None = None,
        result: HarnessResult | None = None,
    ) -> TrialOutcome:
        spec = self.spec
        if reason is not None and spec.policy.network_allow:
            reason = net_relay.with_relay_failure(reason, self.etc)
        seconds = sample_seconds(folder) if folder is not None else None
        if seconds is None:
            seconds = time.monotonic() - self.started
        trace = spec.traces_dir / trace_file_name(question.id)
        header = trace_header(question, command=spec.command, policy=spec.policy,
                              workspace=workspace, result=result, exit_code=code,
                              reason=reason, seconds=seconds)  # fmt: skip
        with contextlib.ExitStack() as stack:
            if outputs is None:
                empty = stack.enter_context(tempfile.TemporaryFile())
                outputs = (empty, empty)
            cap = spec.policy.limits.output_bytes
            out = folder or Path(os.devnull)
            write_trace(trace, header=header, out=out, outputs=outputs, cap=cap)
        self.last_trace = trace
        shown = trace.relative_to(spec.root) if trace.is_relative_to(spec.root) else trace
        ok = reason is None and result is not None
        if result is None:
            return TrialOutcome(question.id, False, reason or "no result", code, seconds, shown)
        return TrialOutcome(
            question.id,
            ok,
            reason,
            code,
            seconds,
            shown,
            result.record(question.id),
            result.usage,
            result.provenance,
        )


def sample_seconds(folder: Path) -> float | None:
    """The question's own time, as the harness measured its sample (``timing.json``); None
    when the harness wrote none, or anything but a finite number of seconds (the file is
    the harness's: a 4,000-digit integer or JSON nested 2,000 deep is its fault, not ours)."""
    try:
        fd = os.open(folder / "timing.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            value = json.loads(handle.read(4096)).get("sample_seconds")
        except (ValueError, AttributeError, RecursionError):
            return None
    if not isinstance(value, (int, float)):
        return None
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@contextlib.contextmanager
def _closing(group: TrialGroup | None) -> Iterator[None]:
    """The batch's pids cgroup, emptied and removed when the batch ends."""
    try:
        yield
    finally:
        if group is not None:
            group.close()


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _size(handle: IO[bytes]) -> int:
    handle.seek(0, os.SEEK_END)
    return handle.tell()


def _tail_line(handle: IO[bytes]) -> str:
    handle.seek(max(0, _size(handle) - 4096))
    lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    last = lines[-1].strip() if lines else ""
    return last if len(last) <= _MAX_REASON else last[: _MAX_REASON - 3] + "..."


def _append_outputs(trace: Path, outputs: tuple[IO[bytes], IO[bytes]]) -> None:
    """The batch process's own stdout and stderr, after the last question's trace."""
    with open(trace, "ab") as handle:
        for title, output in zip(("batch stdout", "batch stderr"), outputs, strict=True):
            handle.write(f"==> {title} <==\n".encode())
            output.seek(0)
            shutil.copyfileobj(output, handle)
            handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())
