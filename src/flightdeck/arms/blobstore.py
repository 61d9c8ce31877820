"""A content-addressed store of git blobs: each written once, trees made of hard links to it.

A workspace tree of 12,000 files at 8 commits that each change 30 files costs 12,000 + 210
written files here, not 96,000: every tree links the same store files. Blobs are read with
one long-lived ``git cat-file --batch`` per repository (``suite.repos.BlobReader.fetch``,
which streams them so git never waits for a round trip). A blob that holds a sealed-key
canary is never written; a blob git cannot find is reported as missing. Without a sandbox
store files are created read-only (0444, 0555 when git marks them executable), so a link
to one is read-only too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from flightdeck.suite.records import CANARY_PREFIX
from flightdeck.suite.repos import BlobReader, Repository

BLOCK = 4096  # what a file or folder costs on disk at least, for the cache's accounting
CANARY = CANARY_PREFIX.encode()
CANARY_HELD = "holds a sealed-key canary"
MISSING = "blob missing from the repository"


def disk_size(size: int) -> int:
    """Bytes a file of ``size`` bytes takes on disk (whole blocks; an empty file none)."""
    return -(-size // BLOCK) * BLOCK


class BlobStore:
    """Blob files under ``folder``, named by blob id (``.x`` for executables); thread-safe."""

    def __init__(self, folder: Path, *, read_only: bool = True) -> None:
        self.folder = folder
        # Without a sandbox, file modes are the only guard. Inside one the mount is
        # read-only, and writable modes make a write fail with EROFS (the mount's doing),
        # not EACCES, even for root.
        self._modes = (0o444, 0o555) if read_only else (0o644, 0o755)
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._readers: dict[str, tuple[BlobReader, threading.Lock]] = {}
        self._sizes: dict[str, int] = {}  # store name -> disk bytes, for what is written
        self._refused: dict[str, str] = {}  # blob id -> why it is never written
        self.disk = 0

    @staticmethod
    def name(oid: str, executable: bool) -> str:
        return oid + (".x" if executable else "")

    def path(self, name: str) -> Path:
        return self.folder / name[:2] / name

    def has(self, name: str) -> bool:
        with self._lock:
            return name in self._sizes

    def refused(self, oid: str) -> str | None:
        """Why this blob is left out of every tree (a canary, missing), or None."""
        with self._lock:
            return self._refused.get(oid)

    def ensure(self, repository: Repository, wanted: Iterable[tuple[str, bool]]) -> None:
        """Write each ``(oid, executable)`` not stored yet; note the ones that must not be."""
        with self._lock:
            todo: dict[str, list[bool]] = {}
            for oid, executable in wanted:
                if oid in self._refused or self.name(oid, executable) in self._sizes:
                    continue
                modes = todo.setdefault(oid, [])
                if executable not in modes:
                    modes.append(executable)
            held = self._readers.get(repository.name)
            if held is None and todo:
                held = BlobReader(repository.git_dir), threading.Lock()
                self._readers[repository.name] = held
        if not todo:
            return
        assert held is not None
        reader, lock = held
        with lock:
            for oid, data in reader.fetch(list(todo)):
                if data is None:
                    self._refuse(oid, MISSING)
                elif CANARY in data:
                    self._refuse(oid, CANARY_HELD)
                else:
                    for executable in todo[oid]:
                        self._write(self.name(oid, executable), data, executable)

    def _refuse(self, oid: str, why: str) -> None:
        with self._lock:
            self._refused[oid] = why

    def _write(self, name: str, data: bytes, executable: bool) -> None:
        path = self.path(name)
        path.parent.mkdir(exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, self._modes[executable])
        except FileExistsError:  # another thread wrote it first
            return
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            path.unlink()
            raise
        os.close(fd)
        with self._lock:
            self._sizes[name] = disk_size(len(data))
            self.disk += self._sizes[name]

    def forget(self, name: str) -> None:
        """Drop a store file that was changed through a link; the next tree gets a fresh one."""
        with self._lock:
            self.disk -= self._sizes.pop(name, 0)
        with contextlib.suppress(FileNotFoundError):
            self.path(name).unlink()

    def evict_unlinked(self) -> int:
        """Remove store files no tree links to (link count 1); return the bytes freed."""
        with self._lock:
            names = list(self._sizes)
        freed = 0
        for name in names:
            try:
                links = os.stat(self.path(name)).st_nlink
            except FileNotFoundError:
                links = 1
            if links == 1:
                with self._lock:
                    size = self._sizes.pop(name, 0)
                    self.disk -= size
                with contextlib.suppress(FileNotFoundError):
                    self.path(name).unlink()
                freed += size
        return freed

    def close(self) -> None:
        with self._lock:
            readers, self._readers = list(self._readers.values()), {}
        for reader, _ in readers:
            reader.close()
