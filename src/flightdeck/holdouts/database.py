"""The scan's compiled Hyperscan database, kept in the project cache and checked when loaded.

Compiling the needles of :mod:`flightdeck.holdouts.needles` costs about as much CPU as the rest
of a small scan's start-up, and gives the same database every time for the same needles and
the same Hyperscan. So :func:`use_cache` keeps the compiled database (Hyperscan's own
serialisation, ``hyperscan.dumpb``) in ``.flightdeck/cache/scan-database/``, under a name that
is the SHA-256 of everything the database is made of: the needles' bytes, ids and flags, the
mode, the Hyperscan module's version and the machine's CPU type.

A copy is only used when every check passes; otherwise it is compiled afresh (and the copy
replaced), so a stale, corrupt or foreign file can cost time but never a missed canary:

1. the file's header names the same key and the SHA-256 of the serialised bytes that follow;
2. Hyperscan deserialises it (it refuses another version, mode or CPU feature set itself);
3. scanning a probe that holds every needle once reports every needle, by its own id, where
   it ends: a database that lacks one needle, or numbers them differently, fails.

The first call in a process loads or compiles; forked scan workers inherit the result.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from pathlib import Path
from typing import Any

from flightdeck.holdouts.needles import needles

MAGIC = b"flightdeck-hyperscan-db 1\n"
_DATABASE: list[Any] = []  # the one database of this process, once made


def database() -> Any:
    """This process's compiled database of the needles (ids index :func:`needles`)."""
    if not _DATABASE:
        _DATABASE.append(compile_database())
    return _DATABASE[0]


def use_cache(folder: Path | None) -> Any:
    """:func:`database`, the first time made by :func:`load_or_compile` (``None``: compiled)."""
    if not _DATABASE and folder is not None:
        _DATABASE.append(load_or_compile(folder))
    return database()


def load_or_compile(folder: Path) -> Any:
    """The copy stored in the cache ``folder`` if it passes every check, else compiled and stored.

    A cache that cannot be written (read-only, full, a file in the way) is left as it is: the
    scan goes on with the database compiled in memory.
    """
    path = stored_path(folder)
    loaded = load_stored(path)
    if loaded is not None:
        return loaded
    import hyperscan

    from flightdeck.files.jsonl import atomic_write

    compiled = compile_database()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, frame(bytes(hyperscan.dumpb(compiled))))
    except OSError:
        pass  # an unwritable cache costs the next scan a compile, nothing more
    return compiled


def stored_path(folder: Path) -> Path:
    """Where the cache ``folder`` keeps the database: named by :func:`key`."""
    return folder / f"{key().hex()}.hsdb"


def needle_patterns() -> list[tuple[bytes, int, int]]:
    """What the database is compiled from: each needle's expression, id and flags."""
    import hyperscan

    return [
        (
            ("\\x" + needle.text.hex("|").replace("|", "\\x")).encode("ascii"),  # \x46\x6c...
            index,
            hyperscan.HS_FLAG_CASELESS if needle.form.caseless else 0,
        )
        for index, needle in enumerate(needles())
    ]


def compile_database() -> Any:
    """The needles compiled into a Hyperscan block-mode database (ids index :func:`needles`)."""
    import hyperscan

    patterns = needle_patterns()
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=[expression for expression, _, _ in patterns],
        ids=[index for _, index, _ in patterns],
        elements=len(patterns),
        flags=[flags for _, _, flags in patterns],
    )
    return db


@functools.cache
def key() -> bytes:
    """The SHA-256 of what the database is made of, and of what it runs on."""
    import hyperscan

    digest = hashlib.sha256(MAGIC)
    for part in (
        str(getattr(hyperscan, "__version__", "?")),  # the module (its bundled library too)
        platform.machine(),
        str(hyperscan.HS_MODE_BLOCK),
        repr(needle_patterns()),
    ):
        digest.update(part.encode() + b"\0")
    return digest.digest()


def frame(body: bytes) -> bytes:
    """A serialised database as stored: :data:`MAGIC`, :func:`key`, the body's SHA-256, body."""
    return MAGIC + key() + hashlib.sha256(body).digest() + body


def load_stored(path: Path) -> Any | None:
    """The database stored at ``path`` when it passes every check, else ``None``."""
    import hyperscan

    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 64
    if data[:head] != frame(data[head:])[:head]:
        return None  # another key, or a body that is not the one hashed
    try:
        db = hyperscan.loadb(data[head:], hyperscan.HS_MODE_BLOCK)
        db.scratch = hyperscan.Scratch(db)  # loadb gives none (python-hyperscan issue #153)
    except hyperscan.error:
        return None
    return db if finds_every_needle(db) else None


def finds_every_needle(db: Any) -> bool:
    """Whether ``db`` reports each needle, by its id, where that needle ends, wherever it is.

    The probe holds every needle's text twice, a line break after each: then 64 KiB of spaces
    and every needle again, a caseless one with its letters' case swapped. A database that
    lacks a needle, numbers them otherwise, reports a needle once only (single-match), stops
    looking after the first bytes (an offset limit) or lost a needle's caselessness fails. A
    needle may also match across two of them (the probe is not a trace); that is allowed.
    """
    import hyperscan

    table = needles()
    probe = bytearray()
    expected = set()
    for copy in range(3):
        if copy == 2:
            probe += b" " * (64 << 10)
        for index, needle in enumerate(table):
            text = needle.text.swapcase() if copy == 2 and needle.form.caseless else needle.text
            probe += text
            expected.add((index, len(probe)))
            probe += b"\n"
    reported: set[tuple[int, int]] = set()

    def matched(needle: int, _start: int, end: int, _flags: int, _context: object) -> None:
        reported.add((needle, end))

    try:
        db.scan(bytes(probe), match_event_handler=matched)
    except hyperscan.error:  # a database that cannot scan is not to be trusted
        return False
    return expected <= reported and all(index < len(table) for index, _ in reported)
