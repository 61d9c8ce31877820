"""JSON Lines in and out: line-numbered reading, atomic writes, durable appends, hashes.

Every write that replaces a file goes through :func:`atomic_write` so an interrupted
command never leaves a half-written file; appends that must survive a kill go through
:func:`append_jsonl`, which flushes and fsyncs each record.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from flightdeck.errors import InputError, JSONProblem
from flightdeck.files.strict_json import loads_strict


def read_bytes(path: Path) -> bytes:
    """A file's bytes, or an InputError that names it."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, None, "file not found; check the path") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a folder, not a file; check the path") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror}") from None


def read_jsonl(path: Path, data: bytes | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; stop at the first bad one."""
    if data is None:
        data = read_bytes(path)
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        yield number, decode_object(path, number, raw)


def decode_object(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One line as a strict JSON object (see :func:`loads_strict`), or an InputError naming it."""
    try:
        obj = loads_strict(raw)
    except JSONProblem as exc:
        raise InputError(path, number, f"{exc.what}; {_ONE_PER_LINE[exc.kind]}") from None
    if not isinstance(obj, dict):
        raise InputError(
            path,
            number,
            f"expected a JSON object, got {_json_type(obj)}; write one object per line",
        )
    return obj


def read_json(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """Read one strict JSON object from a file (or its ``data``, already read), with the same
    errors as :func:`read_jsonl`."""
    try:
        obj = loads_strict(read_bytes(path) if data is None else data)
    except JSONProblem as exc:
        raise document_error(path, exc) from None
    if not isinstance(obj, dict):
        raise InputError(path, 1, f"expected a JSON object, got {_json_type(obj)}")
    return obj


def document_error(path: Path, problem: JSONProblem) -> InputError:
    """The error :func:`read_json` gives for a JSON document that is not strict JSON."""
    return InputError(path, problem.line, f"{problem.what}; {_DOCUMENT[problem.kind]}")


# How to fix each kind of problem, in a JSON Lines file and in a JSON document.
_ONE_PER_LINE = {
    "encoding": "save the file as UTF-8",
    "bom": "save the file as UTF-8 without BOM",
    "syntax": "write one object per line",
    "depth": "write flat records",
    "number": "write a smaller number, or the number as a string",
    "duplicate": "keep one (JSON readers disagree on which of two equal keys wins)",
    "surrogate": "write valid Unicode",
}
_DOCUMENT = _ONE_PER_LINE | {"syntax": "fix the syntax", "depth": "fix the file"}


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def dumps_line(obj: Any) -> str:
    """One JSONL line: compact, key order kept, non-ASCII kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def encode_lines(records: Iterable[Any]) -> bytes:
    """Many JSONL lines at once, as :func:`dumps_line` writes them, at msgspec's speed."""
    import msgspec

    encoder = msgspec.json.Encoder()
    buffer = bytearray()
    for record in records:
        encoder.encode_into(record, buffer, -1)
        buffer += b"\n"
    return bytes(buffer)


def canonical_json(obj: Any) -> bytes:
    """Canonical bytes (sorted keys, ``,``/``:`` separators, non-ASCII kept) for hashing."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# What makes a path unwritable by its shape or its permissions: the user's to fix (exit 2).
# Anything else (a full disk, an I/O error) is no fault of the path given and stays an
# OSError, which the CLI reports as the bug or breakdown it is (exit 3).
_PATH_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.EEXIST}
)


@contextlib.contextmanager
def writing_to(path: Path, *, exactly: bool = False) -> Iterator[None]:
    """Turn "this path cannot be written" (a file where a folder should be, no permission)
    into an InputError naming the path, so it reads as the user's path and not as a bug.

    The error names the file or folder that is in the way; ``exactly`` names ``path`` itself
    (when the failing call's own file name is a temp file the user never gave).
    """
    try:
        yield
    except OSError as exc:
        if exc.errno not in _PATH_ERRNOS:
            raise
        where = path if exactly else exc.filename or path
        raise InputError(where, None, f"{exc.strerror or exc}; check the path") from exc


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace ``path`` all at once when the block ends.

    Temp file in the same folder, flush, fsync, rename. On any failure the temp file is
    removed and the old file, if any, is untouched.
    """
    with writing_to(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(path))  # mkstemp makes 0600; keep what a plain write makes
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        with writing_to(path, exactly=True):  # e.g. a folder where the file should be
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _mode_for(path: Path) -> int:
    """The replaced file's mode, or what the umask gives a new file."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` all at once (see :func:`atomic_writer`)."""
    with atomic_writer(path) as handle:
        handle.write(data.encode() if isinstance(data, str) else data)


def write_jsonl(path: Path, records: Iterable[Any]) -> None:
    """Atomically write records as JSON Lines."""
    atomic_write(path, encode_lines(records))


def write_json(path: Path, obj: Any) -> None:
    """Atomically write pretty, key-sorted JSON (stable git diffs)."""
    atomic_write(path, encode_document(obj))


def encode_document(obj: Any) -> bytes:
    """A JSON file's bytes as :func:`write_json` writes them: pretty, keys sorted."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def append_jsonl(path: Path, record: Any) -> None:
    """Append one record and fsync, so a kill right after loses nothing already appended.

    A file whose last line was cut short by an earlier kill gets a newline first, so
    the torn line stays on its own (the readers report it) and never swallows this one.
    """
    with writing_to(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("ab")
    with handle:
        if handle.tell() > 0:
            with path.open("rb") as check:
                check.seek(-1, os.SEEK_END)
                if check.read(1) != b"\n":
                    handle.write(b"\n")
        handle.write((dumps_line(record) + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())


@contextlib.contextmanager
def locked_folder(folder: Path) -> Iterator[None]:
    """An exclusive lock on a folder while a read-change-write of a file in it runs.

    Atomic writes keep each file whole; the lock keeps two writers from both reading the old
    file and one of them losing the other's change.
    """
    import fcntl

    with writing_to(folder):
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
