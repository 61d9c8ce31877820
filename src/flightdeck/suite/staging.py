"""Several files of one folder replaced as one step: all of them appear, or none.

An arm's answers and its meta are two files (``answers/<arm>.jsonl`` and
``answers/<arm>.meta.json``); an import killed between writing the one and the other would
leave answers without the meta that says who gave them. :func:`write_together` writes every
file into a staging folder beside them, and commits with one rename of that folder (the
journal); the files then move into place one by one. A kill before the commit leaves only
the staging folder, which :func:`finish_pending` removes (the old files are untouched); a
kill after it leaves a committed folder, whose remaining files :func:`finish_pending` moves
into place. Every command that opens a suite calls :func:`finish_pending` on its answers
folder first (``SuiteFolder.opened``), so no command ever sees the half-done state.

Both hold the folder's lock (:func:`flightdeck.files.jsonl.locked_folder`), so a command opening the
suite never takes a staging folder that another process is still writing for its own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path

from flightdeck.files.jsonl import locked_folder, writing_to

_PREFIX = ".together-"
_PENDING = ".pending"  # being written: removed if found (the step never happened)
_COMMITTED = ".committed"  # renamed from pending: its files move into place if found


def write_together(folder: Path, files: Mapping[str, bytes]) -> None:
    """Replace ``folder/<name>`` with each ``files[name]`` as one step (see the module doc)."""
    with locked_folder(folder):
        _finish(folder)
        token = secrets.token_hex(8)
        pending = folder / f"{_PREFIX}{token}{_PENDING}"
        committed = folder / f"{_PREFIX}{token}{_COMMITTED}"
        with writing_to(folder):
            pending.mkdir()
        try:
            for name, data in files.items():
                _write_durably(pending / name, data, mode_of=folder / name)
            _fsync_folder(pending)
            os.rename(pending, committed)  # the commit: from here on the step completes
        except BaseException:
            shutil.rmtree(pending, ignore_errors=True)
            raise
        _fsync_folder(folder)
        _move_into_place(committed, folder)


def finish_pending(folder: Path) -> None:
    """Complete a committed step, or drop an uncommitted one, that a kill left in ``folder``."""
    if not folder.is_dir() or not any(p.name.startswith(_PREFIX) for p in _entries(folder)):
        return
    with locked_folder(folder):
        _finish(folder)


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:  # unreadable: the command's own reads will say so
        return []


def _finish(folder: Path) -> None:
    for entry in sorted(_entries(folder)):
        if not entry.name.startswith(_PREFIX) or not entry.is_dir():
            continue
        if entry.name.endswith(_COMMITTED):
            _move_into_place(entry, folder)
        elif entry.name.endswith(_PENDING):
            shutil.rmtree(entry)


def _move_into_place(committed: Path, folder: Path) -> None:
    for staged in sorted(committed.iterdir()):
        os.replace(staged, folder / staged.name)
    _fsync_folder(folder)
    os.rmdir(committed)


def _write_durably(path: Path, data: bytes, *, mode_of: Path) -> None:
    try:
        mode = mode_of.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchmod(fd, mode)  # the replaced file's mode, or what a plain write makes
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):  # some file systems cannot fsync a folder
            os.fsync(fd)
    finally:
        os.close(fd)
