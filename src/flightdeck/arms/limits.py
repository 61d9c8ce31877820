"""What one trial may consume: output, private /tmp and $HOME, memory, processes.

The caps are kernel-enforced where the kernel offers an unprivileged knob:

- every file the harness writes (its result, its ``FLIGHTDECK_TRACE`` log, its stdout and
  stderr, which are files, any file in /tmp) stops at ``output_mb``: ``RLIMIT_FSIZE``, which
  also refuses a sparse file's size (seek or ``truncate`` past the cap), so a 3 GiB sparse
  log cannot even exist;
- the out folder as a whole is measured while the trial runs (:func:`folder_usage`, apparent
  size or allocated blocks, whichever is larger) and the trial is killed past ``output_mb``;
- the private ``/tmp``, ``$HOME`` and ``/dev/shm`` are tmpfs mounts of ``tmp_mb`` each
  (bubblewrap's ``--size``);
- ``RLIMIT_AS`` caps each process's address space at ``memory_mb``;
- a trial's processes and threads are capped at ``processes`` by a pids cgroup of its own
  where one can be made (:mod:`flightdeck.arms.pids_cgroup`: root can, which the kernel
  exempts from ``RLIMIT_NPROC``), and by ``RLIMIT_NPROC`` inside the sandbox in any case.
  That count is per user namespace, so it is set inside the sandbox (by ``prlimit``, after
  bubblewrap made the namespace). :func:`processes_enforced` says in the meta which holds.

Memory stays a per-process ``RLIMIT_AS``: a memory cgroup would cap a trial's total, which
root could make here too, but that is not done yet.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.arms.pids_cgroup import controller
from flightdeck.errors import InputError

MIB = 1 << 20
_MEMORY_WORDS = ("MemoryError", "Cannot allocate memory", "out of memory", "bad_alloc")
_PROCESS_WORDS = ("Resource temporarily unavailable", "Cannot fork", "can't start new thread")
_SPACE_WORDS = ("No space left on device",)
_SIZE_WORDS = ("File too large", "SIGXFSZ")


@dataclass(frozen=True)
class Limits:
    """The caps of every trial of a run, in MiB (and a count of processes)."""

    output_mb: int = 64
    tmp_mb: int = 256
    memory_mb: int = 8192
    processes: int = 1024

    def check(self) -> Limits:
        for option, value in (
            ("--max-output-mb", self.output_mb),
            ("--max-tmp-mb", self.tmp_mb),
            ("--max-memory-mb", self.memory_mb),
            ("--max-processes", self.processes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(option, None, f"must be 1 or more, not {value!r}")
        return self

    @property
    def output_bytes(self) -> int:
        return self.output_mb * MIB

    def meta(self, *, sandboxed: bool) -> dict[str, Any]:
        """What the arm's meta says of the caps, and how each is enforced."""
        processes = processes_enforced(sandboxed=sandboxed)
        found: dict[str, Any] = {
            "output_mb": self.output_mb,
            "output": "each file a trial writes (RLIMIT_FSIZE) and its out folder in all",
            "memory_mb": self.memory_mb,
            "memory": "address space per process (RLIMIT_AS)",
            "processes": self.processes,
            "processes_enforced": processes,
        }
        if sandboxed:
            found["tmp_mb"] = self.tmp_mb
            found["tmp"] = "/tmp, $HOME and /dev/shm: private tmpfs mounts of this size each"
        return found


def processes_enforced(*, sandboxed: bool) -> str:
    """Whether the process cap holds here, and how, in words."""
    where = controller()
    if where is not None:
        return f"yes: {where.describe()}, which holds for root too"
    if not sandboxed:
        return (
            "no: no pids cgroup can be made here, and without a sandbox RLIMIT_NPROC would "
            "count every process of the user"
        )
    if os.getuid() == 0:
        return (
            "no: flightdeck runs as root (uid 0), whom the kernel exempts from RLIMIT_NPROC, "
            "and no pids cgroup can be made here; run it as another user for this cap to hold"
        )
    return "yes: RLIMIT_NPROC inside the sandbox's user namespace"


def processes_over(refused: int, limits: Limits) -> str:
    """The reason of a trial whose forks the pids cgroup refused."""
    return (
        f"it tried to run more than {limits.processes} processes and threads at once (the "
        f"process cap, --max-processes); {refused} fork{'s were' if refused != 1 else ' was'} "
        "refused"
    )


def prlimit_argv(prlimit: str, limits: Limits, *, processes: bool) -> list[str]:
    """``prlimit --fsize=... --as=... [--nproc=...] --``: soft and hard, so they cannot rise."""
    argv = [prlimit, f"--fsize={limits.output_bytes}", f"--as={limits.memory_mb * MIB}"]
    if processes:
        argv.append(f"--nproc={limits.processes}")
    return [*argv, "--"]


def folder_usage(folder: Path, stop_above: int) -> int:
    """Bytes a folder holds (apparent size or blocks, whichever is larger), never following
    a symlink; counting stops once past ``stop_above``."""
    total = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += max(info.st_size, info.st_blocks * 512) if stat.S_ISREG(info.st_mode) else 0
            total += 4096  # an entry costs space too: a million empty files fill a disk
            if stat.S_ISDIR(info.st_mode):
                stack.append(Path(entry.path))
            if total > stop_above:
                return total
    return total


def file_over(size: int, limits: Limits, what: str) -> str | None:
    """The reason when a file the harness wrote reached the output cap, else None."""
    if size >= limits.output_bytes:
        return (
            f"{what} reached the {limits.output_mb} MiB output cap (--max-output-mb); "
            "nothing past the cap was kept"
        )
    return None


def out_folder_over(limits: Limits) -> str:
    return (
        f"its out folder grew past the {limits.output_mb} MiB output cap (--max-output-mb); "
        "the trial was killed"
    )


def limit_hint(stderr_tail: str, limits: Limits, *, sandboxed: bool) -> str:
    """The cap a failure's stderr points at, as `` (...)``, or nothing."""
    if any(word in stderr_tail for word in _MEMORY_WORDS):
        return f" (the memory cap is {limits.memory_mb} MiB per process: --max-memory-mb)"
    if any(word in stderr_tail for word in _PROCESS_WORDS):
        return f" (the process cap is {limits.processes}: --max-processes)"
    if sandboxed and any(word in stderr_tail for word in _SPACE_WORDS):
        return f" (the private /tmp and $HOME hold {limits.tmp_mb} MiB each: --max-tmp-mb)"
    if any(word in stderr_tail for word in _SIZE_WORDS):
        return f" (each file it writes is capped at {limits.output_mb} MiB: --max-output-mb)"
    return ""


def escape_control(text: str) -> str:
    """``text`` with control and format characters escaped, so none reaches a terminal."""
    out = []
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
            code = ord(char)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            else:
                out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
    return "".join(out)
