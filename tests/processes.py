"""The live processes of this machine, read from /proc (tests that check nothing outlived a kill)."""

from __future__ import annotations

import os
from pathlib import Path


def live_command_lines() -> dict[int, bytes]:
    """Every live process but this one, pid to its raw NUL-separated command line.

    Zombies (state Z or X) are not alive: they have exited and wait for their reaper.
    Processes of every pid namespace are seen, by their pid here.
    """
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):  # gone while we looked
            continue
        if state not in ("Z", "X"):
            found[int(entry.name)] = cmdline
    return found
