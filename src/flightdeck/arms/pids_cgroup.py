"""A process cap that holds for root too: one pids cgroup per trial, where one can be made.

``RLIMIT_NPROC`` (:mod:`flightdeck.arms.limits`) counts a user's processes, and the kernel
exempts real root (uid 0) from it, so a runner started as root (as CI often is) has no
process cap from it at all. A cgroup's ``pids.max`` counts every process and thread in the
group, whoever owns them: a ``fork`` or ``clone`` past it fails with ``EAGAIN``, for root as
for anyone, and ``pids.events`` counts each refusal.

Where a group can be made is probed once per process (:func:`controller`): under the
runner's own cgroup, in the unified (v2) hierarchy when its ``pids`` controller is enabled
for the children there, else in the v1 ``pids`` hierarchy. Making one needs write access
there: root has it, an ordinary user only in a delegated subtree (a systemd user session
with ``Delegate=``). Where no group can be made the cap falls back to ``RLIMIT_NPROC``
alone, and the arm's meta says so.

A trial's group (:class:`TrialGroup`) is made before the harness starts; the harness enters
it before anything else runs, through a shell that writes its own pid to ``cgroup.procs``
and then execs the command (so no process of the trial ever runs outside it). After the
trial every process still in the group is killed, however it left the trial's session, and
the group is removed.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from flightdeck.arms.trees import pid_alive

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "flightdeck-"
ENTER = 'echo $$ > "$0" && exec "$@"'  # sh -c ENTER PROCS_FILE ARGV...: join, then run
SANDBOX_PROCESSES = 2  # bubblewrap's own: the parent that waits, and the namespace's init
_KILL_ROUNDS = 50
_names = itertools.count()
_names_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Controller:
    """Where trial groups are made: ``parent`` in cgroup ``version`` 1 or 2."""

    parent: Path
    version: int

    def describe(self) -> str:
        return f"a pids cgroup per trial (cgroup v{self.version}, under {self.parent})"


@functools.cache
def controller() -> Controller | None:
    """The place to make trial groups in, probed once; None where none can be made."""
    own = _own_cgroups()
    mounts = _mounts()
    candidates = []
    if "" in own and "cgroup2" in mounts:
        candidates.append(Controller(_join(mounts["cgroup2"], own[""]), 2))
    if "pids" in own and "pids" in mounts:
        candidates.append(Controller(_join(mounts["pids"], own["pids"]), 1))
    for found in candidates:
        if _usable(found.parent):
            _remove_stale(found.parent)
            return found
    return None


class TrialGroup:
    """One trial's pids cgroup: at most ``limit`` processes and threads at any moment."""

    def __init__(self, where: Controller, limit: int) -> None:
        with _names_lock:
            number = next(_names)
        self.path = where.parent / f"{PREFIX}{os.getpid()}-{number}"
        self.limit = limit
        self.path.mkdir()
        try:
            (self.path / "pids.max").write_text(f"{limit}\n")
        except OSError:
            self.path.rmdir()
            raise

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the group: a shell joins it, then execs ``argv``."""
        return ["/bin/sh", "-c", ENTER, str(self.path / "cgroup.procs"), *argv]

    def refused(self) -> int:
        """How many forks the limit refused (``pids.events``)."""
        try:
            text = (self.path / "pids.events").read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return 0

    def close(self) -> None:
        """Kill whatever still runs in the group, then remove it."""
        _empty_and_remove(self.path)


def trial_group(processes: int, *, sandboxed: bool) -> TrialGroup | None:
    """A group for one trial whose harness may run ``processes`` processes, or None where
    none can be made here (:func:`controller`). Raises OSError when making it fails."""
    where = controller()
    if where is None:
        return None
    return TrialGroup(where, processes + (SANDBOX_PROCESSES if sandboxed else 0))


def _empty_and_remove(group: Path) -> None:
    """SIGKILL every process in ``group`` until none is left, then remove it (a group that
    stays busy is left for a later run to sweep)."""
    for _ in range(_KILL_ROUNDS):
        for pid in _pids(group):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            group.rmdir()
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return  # gone already, or not ours to remove
        time.sleep(0.02)  # the kernel frees a group a moment after its last process


def _own_cgroups() -> dict[str, str]:
    """Controller -> this process's cgroup path (``""`` is the unified hierarchy)."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            found[name.removeprefix("name=")] = path
    return found


def _mounts() -> dict[str, Path]:
    """``cgroup2`` -> the unified mount; each v1 controller -> its hierarchy's mount."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        point = Path(fields[4].replace("\\040", " "))
        if tail[0] == "cgroup2":
            found.setdefault("cgroup2", point)
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                found.setdefault(option, point)
    return found


def _join(mount: Path, path: str) -> Path:
    return mount / path.lstrip("/")


def _usable(parent: Path) -> bool:
    """Whether a child group with a ``pids.max`` can be made (and removed) in ``parent``."""
    probe = parent / f"{PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        (probe / "pids.max").write_text("max\n")
        return True
    except OSError:  # v2 without the pids controller enabled for children: no such file
        return False
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _remove_stale(parent: Path) -> None:
    """Empty and remove the groups of runners that died (killed) before removing their own."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            owner = entry.name.removeprefix(PREFIX).split("-")[0]
            if entry.name.startswith(PREFIX) and owner.isdigit() and not pid_alive(int(owner)):
                _empty_and_remove(entry)


def _pids(group: Path) -> list[int]:
    try:
        text = (group / "cgroup.procs").read_text()
    except OSError:
        return []
    return [int(word) for word in text.split() if word.isdigit()]
