"""The cat-file reader: a fetch left half done never hangs and never poisons the next one.

Each test runs under a deadline (:func:`_within`), so a reader that waits forever fails the
test instead of hanging the run. The repository's blobs are each told apart by their bytes,
and fetches ask for far more names and reply bytes than a pipe holds (64 KiB on Linux).
"""

from __future__ import annotations

import errno
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests.gitrepo import make_git_repo

from flightdeck.arms.blobstore import BlobStore
from flightdeck.errors import InternalError
from flightdeck.suite.repos import BlobReader, Repository

T = TypeVar("T")
FILES = 60  # distinct blobs of 1-2 KB; asked for 3,000 times: 123 KB of names, ~4 MB of replies
DEADLINE = 30.0


def _within(action: Callable[[], T], seconds: float = DEADLINE) -> T:
    """``action()``, or a failure when it has not returned after ``seconds`` (a hang)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, action()))
        except BaseException as exc:  # handed back to the test below
            outcome.append((False, exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"still waiting after {seconds} s: the reader hangs")
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def blobs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repository, dict[str, bytes]]:
    """A repository and each of its blobs' bytes by id."""
    path = tmp_path_factory.mktemp("catfile") / "sdlc"
    contents = {f"f{i:02d}.txt": (f"file {i}\n" * (120 + 7 * i)).encode() for i in range(FILES)}
    (commit,) = make_git_repo(path, [contents])
    repo = Repository("sdlc", path, path.parent / "cache")
    return repo, {oid: contents[name] for name, oid in repo.list_files(commit)}


def _many(known: dict[str, bytes], shift: int = 0) -> list[str]:
    oids = sorted(known)
    oids = oids[shift:] + oids[:shift]
    return oids * (3000 // len(oids))


def _check(reader: BlobReader, known: dict[str, bytes], shift: int) -> None:
    """A whole fetch and a read give each blob's own bytes."""
    wanted = _many(known, shift)
    got = list(reader.fetch(wanted))
    assert [oid for oid, _ in got] == wanted
    assert all(data == known[oid] for oid, data in got)
    assert reader.read(wanted[0]) == known[wanted[0]]


def _consume(fetch: Iterator[object], *, at: int, then: Callable[[], object]) -> None:
    """Read ``fetch`` to its end, calling ``then()`` once ``at`` replies have been read."""
    for i, _ in enumerate(fetch):
        if i == at:
            then()


def _disk_full() -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _spy_on_popen(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    started: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def spy(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        proc = real(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", spy)
    return started


def test_a_consumer_that_breaks_early_leaves_the_next_fetch_right(
    blobs: tuple[Repository, dict[str, bytes]],
) -> None:
    repo, known = blobs

    def scenario() -> None:
        with repo.blobs() as reader:
            for i, (oid, data) in enumerate(reader.fetch(_many(known))):
                assert data == known[oid]
                if i == 2:
                    break
            _check(reader, known, shift=7)

    _within(scenario)


def test_a_consumer_that_raises_mid_stream_gets_its_error_and_the_next_fetch_is_right(
    blobs: tuple[Repository, dict[str, bytes]],
) -> None:
    repo, known = blobs

    def scenario() -> None:
        with repo.blobs() as reader:
            with pytest.raises(OSError, match="No space left"):
                _consume(reader.fetch(_many(known)), at=100, then=_disk_full)
            _check(reader, known, shift=11)

    _within(scenario)


def test_a_fetch_left_open_is_not_read_by_the_next_call(
    blobs: tuple[Repository, dict[str, bytes]],
) -> None:
    # A consumer that neither finishes nor closes its fetch (a generator kept alive): the
    # next call must not read that fetch's replies, and the fetch says it was overtaken.
    repo, known = blobs

    def scenario() -> None:
        with repo.blobs() as reader:
            left_open = reader.fetch(_many(known))
            next(left_open)
            _check(reader, known, shift=3)
            with pytest.raises(InternalError, match="another call while a fetch was open"):
                next(left_open)
            _check(reader, known, shift=5)

    _within(scenario)


def test_a_missing_object_is_none_in_its_place(
    blobs: tuple[Repository, dict[str, bytes]],
) -> None:
    repo, known = blobs
    missing = "0" * 40
    wanted = [missing, *_many(known), missing]

    def scenario() -> list[tuple[str, bytes | None]]:
        with repo.blobs() as reader:
            return list(reader.fetch(wanted))

    got = _within(scenario)
    assert [oid for oid, _ in got] == wanted
    assert got[0][1] is None
    assert got[-1][1] is None
    assert all(data == known[oid] for oid, data in got[1:-1])


def test_a_cat_file_killed_mid_fetch_is_an_internal_error_and_the_next_fetch_is_right(
    blobs: tuple[Repository, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, known = blobs
    started = _spy_on_popen(monkeypatch)

    def scenario() -> None:
        with repo.blobs() as reader:
            with pytest.raises(InternalError, match="^git cat-file stopped"):
                _consume(reader.fetch(_many(known)), at=2, then=started[-1].kill)
            _check(reader, known, shift=13)
        assert len(started) == 2  # the killed process, then a fresh one

    _within(scenario)


def test_a_fetch_starts_no_thread(blobs: tuple[Repository, dict[str, bytes]]) -> None:
    repo, known = blobs
    with repo.blobs() as reader:
        before = threading.active_count()
        counts = {threading.active_count() for _ in reader.fetch(_many(known))}
    assert counts == {before}


def test_the_blob_store_writes_every_blob_after_a_write_failed_mid_fetch(
    blobs: tuple[Repository, dict[str, bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ENOSPC from the disk, the third blob file in: the error reaches the caller, the cut
    # file is gone, and once there is room again the same store (and its cached reader)
    # writes the right bytes, asked for in another order so that replies left from the
    # first fetch would show.
    repo, known = blobs
    root = tmp_path / "store"
    store = BlobStore(root, read_only=False)
    real_write = os.write
    files: list[str] = []

    def full_disk(fd: int, data: Any) -> int:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.startswith(str(root)) and name not in files:
            files.append(name)
        if name.startswith(str(root)) and len(files) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    wanted = sorted(known)
    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _within(lambda: store.ensure(repo, [(oid, False) for oid in wanted]))
    monkeypatch.setattr(os, "write", real_write)
    assert files[2] not in {str(p) for p in root.rglob("*")}  # the cut file was removed
    try:
        _within(lambda: store.ensure(repo, [(oid, False) for oid in reversed(wanted)]))
    finally:
        store.close()
    for oid in wanted:
        assert store.path(store.name(oid, False)).read_bytes() == known[oid]
