"""Find canary tails in files at disk speed: the engine of ``holdout canary-scan``.

Every canary is ``CANARY_PREFIX`` followed by 32 lowercase hex digits, and every encoding the
scan sees through turns that prefix into fixed strings known in advance
(:mod:`flightdeck.holdouts.needles`). One Hyperscan pass over the raw bytes looks for all of
them at once; where one fires, the bytes around it are decoded
(:mod:`flightdeck.holdouts.confirm`) and the tail found there is looked up in the set of
registered tails. A canary counts once, at the raw offset where its encoded form starts, in
the piece of the file that holds that offset; pieces overlap by :data:`MARGIN` bytes so that
a canary over a chunk boundary is decoded whole.

Plain files are read in steps of at most 1 MiB into one buffer that stays in the CPU cache
(memory stays bounded by the buffer, not the file) and split into ranges of a few chunks of
``chunk_size`` bytes, so that several cores share one large file. Compressed files,
recognised by their magic bytes, stream in pieces of at most 1 MiB through
:mod:`flightdeck.holdouts.decode`. Tasks of at most a range
run in one process per core. Line numbers cost a pass of their own, so they are counted
afterwards, only in files with a hit, and only up to the last hit listed (for a compressed
file, a second decompression up to that hit). The processes come from
:mod:`flightdeck.holdouts.workers`; which files to read, from :mod:`flightdeck.holdouts.plan`.

Nothing here knows about suites: :mod:`flightdeck.holdouts.leaks` maps tails to canaries.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from io import FileIO
from pathlib import Path

from flightdeck.errors import CorruptError, InputError
from flightdeck.holdouts.database import use_cache
from flightdeck.holdouts.decode import (
    PIECE,
    SUFFIXES,
    Progress,
    check_suffix,
    decompressed,
    describe,
    ignore,
    newlines,
    sniff,
    text_views,
)
from flightdeck.holdouts.needles import EXTENT, PREFIX
from flightdeck.holdouts.search import MARGIN, Found, search_view
from flightdeck.holdouts.workers import Runner, ScanState, available_cores

CHUNK_SIZE = 16 << 20
CHUNKS_PER_RANGE = 4  # a large plain file splits into ranges of this many chunks

__all__ = ["CHUNK_SIZE", "PREFIX", "Match", "Progress", "TailScan", "scan_tails"]


@dataclass(frozen=True, slots=True)
class Match:
    """A registered tail found in a file; ``offset`` is in the (decompressed) text."""

    path: Path
    offset: int
    line: int
    tail: str


@dataclass(frozen=True, slots=True)
class TailScan:
    """What a scan found.

    ``matches`` lists hits in file order: each tail's first hit in every task and up to
    ``MAX_LISTED_PER_TASK`` more per task, so a file full of canaries cannot exhaust memory.
    ``counts`` (tail -> hits) covers every hit, listed or not; ``unregistered`` counts
    canary-shaped strings whose tail is not registered.
    """

    matches: tuple[Match, ...]
    counts: dict[str, int]
    unregistered: int
    files: int
    bytes_read: int
    bytes_scanned: int


@dataclass(frozen=True, slots=True)
class _Piece:
    index: int  # the file's place in the scan order
    path: str
    kind: str  # "plain", "auto" (sniffed by the worker), or a compression name
    start: int
    end: int


def scan_tails(
    files: Sequence[Path],
    tails: frozenset[bytes],
    *,
    jobs: int | None = None,
    chunk_size: int = CHUNK_SIZE,
    on_progress: Progress | None = None,
    cache: Path | None = None,
) -> TailScan:
    """Scan ``files`` for ``PREFIX`` followed by one of ``tails`` (32 ASCII hex bytes each).

    ``on_progress`` receives increments of on-disk bytes done (the files' sizes in total).
    ``cache`` is the folder that keeps the compiled Hyperscan database between scans
    (:func:`~flightdeck.holdouts.database.use_cache`; ``None``: compiled in this process).
    Raises :class:`InputError` naming the file for a missing, unreadable or corrupt file.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    jobs = jobs or available_cores()
    sizes = [_size(path) for path in files]
    range_size = chunk_size * CHUNKS_PER_RANGE
    tasks = _batch(_plan(files, sizes, range_size), range_size, jobs)
    found: list[Found] = []
    use_cache(cache)  # made once here: forked workers inherit it instead of compiling their own
    with Runner(ScanState(tails, chunk_size, on_progress or ignore), jobs) as runner:
        for result in runner.map(_scan_task, tasks, stop=lambda r: r.error is not None):
            if result.error is not None:
                raise InputError(files[result.index], None, result.error)
            found.append(result)
        hits: dict[int, list[tuple[int, bytes]]] = {}
        for result in found:
            if result.hits:
                hits.setdefault(result.index, []).extend(result.hits)
        lines = _line_numbers(runner, files, hits, range_size)
    counts: dict[str, int] = {}
    for result in found:
        for tail, count in result.counts.items():
            key = tail.decode("ascii")
            counts[key] = counts.get(key, 0) + count
    matches = [
        Match(files[index], offset, lines[index, offset], tail.decode("ascii"))
        for index in sorted(hits)
        for offset, tail in sorted(hits[index])
    ]
    return TailScan(
        matches=tuple(matches),
        counts=counts,
        unregistered=sum(r.unregistered for r in found),
        files=len(files),
        bytes_read=sum(sizes),
        bytes_scanned=sum(r.scanned for r in found),
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        raise InputError(path, None, "no such file; check the path") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read ({exc.strerror}); check permissions") from None


def _plan(files: Sequence[Path], sizes: Sequence[int], range_size: int) -> list[_Piece]:
    """Ranges of large plain files; every other file whole."""
    pieces = []
    for index, (path, size) in enumerate(zip(files, sizes, strict=True)):
        kind = "auto" if size <= range_size else _kind_or_error(path)
        if kind != "plain":
            pieces.append(_Piece(index, str(path), kind, 0, size))
            continue
        for start in range(0, size, range_size):
            pieces.append(_Piece(index, str(path), kind, start, min(start + range_size, size)))
    return pieces


def _kind_or_error(path: Path) -> str:
    try:
        return sniff(path)
    except OSError as exc:
        raise InputError(path, None, f"cannot read ({exc.strerror}); check permissions") from None


def _batch(pieces: list[_Piece], range_size: int, jobs: int) -> list[list[_Piece]]:
    """Group pieces into tasks, heaviest first, about four per job (a range at most)."""

    def weight(piece: _Piece) -> int:  # a compressed byte holds several bytes of text
        compressed = piece.kind not in ("plain", "auto") or piece.path.endswith(tuple(SUFFIXES))
        return (piece.end - piece.start) * (4 if compressed else 1)

    total = sum(weight(p) for p in pieces)
    target = range_size if total <= range_size else min(range_size, total // (4 * jobs))
    tasks: list[list[_Piece]] = []
    load: list[int] = []
    for piece in pieces:
        if not tasks or load[-1] + weight(piece) > target:
            tasks.append([])
            load.append(0)
        tasks[-1].append(piece)
        load[-1] += weight(piece)
    order = sorted(range(len(tasks)), key=lambda n: -load[n])
    return [tasks[n] for n in order]


def _scan_task(task: list[_Piece], state: ScanState) -> list[Found]:
    results = []
    for piece in task:
        found = Found(piece.index)
        kind = piece.kind
        try:
            kind = sniff(piece.path) if kind == "auto" else kind
            _scan_piece(piece, kind, state, found)
        except Exception as exc:  # every decoder has its own errors; each becomes one line
            found.error = describe(kind, exc)
        results.append(found)
    return results


def _scan_piece(piece: _Piece, kind: str, state: ScanState, found: Found) -> None:
    path = piece.path
    if piece.start == piece.end:  # an empty file, whatever its name
        return
    check_suffix(path, kind)
    if kind == "plain":
        with open(path, "rb", buffering=0) as handle:
            _scan_plain(handle, piece, state, found)
        found.scanned = piece.end - piece.start
        return
    carry = b""
    base = 0  # text offset of data[0]
    seen: set[int] = set()
    own = 0  # canaries that start before data[own] were counted with the previous piece
    for data in decompressed(path, kind, state.chunk_size, state.report):
        data = carry + data
        keep = max(own, len(data) - MARGIN)
        search_view(
            data, own, keep, owned=(0, len(data)), base=base, state=state, found=found, seen=seen
        )
        cut = max(0, keep - MARGIN)
        carry = data[cut:]
        own = keep - cut
        base += cut
    search_view(
        carry,
        own,
        len(carry),
        owned=(0, len(carry)),
        base=base,
        state=state,
        found=found,
        seen=seen,
    )
    found.scanned = base + len(carry)


def _scan_plain(handle: FileIO, piece: _Piece, state: ScanState, found: Found) -> None:
    """Search ``[piece.start, piece.end)``, read in steps of at most :data:`PIECE` bytes.

    One buffer is reused: it holds a step with :data:`MARGIN` bytes around it, the margin
    before a step being the end of the previous one (moved to the front, not read again). A
    buffer the size of the CPU cache and ``readinto`` beat mmap windows (page faults and TLB
    misses on every window): 2.9 GB/s of CPU time against 1.9 on one core, measured on the
    benchmark's traces.
    """
    step = min(state.chunk_size, PIECE)
    buffer = bytearray(MARGIN + step + EXTENT + MARGIN)
    view = memoryview(buffer)
    size = os.fstat(handle.fileno()).st_size
    held_start = max(0, piece.start - MARGIN)  # the file offset of buffer[0]
    held = 0  # buffer[:held] holds the file's bytes from held_start
    handle.seek(held_start)
    seen: set[int] = set()
    offset = piece.start
    while offset < piece.end:
        stop = min(offset + step, piece.end)
        # the last step also decodes needles just past the piece: its canaries' ends
        ends = min(stop + EXTENT, size) if stop == piece.end else stop
        need_start = max(0, offset - MARGIN)
        if need_start > held_start:  # keep the margin before this step, drop the rest
            kept = held - (need_start - held_start)
            buffer[:kept] = view[need_start - held_start : held]
            held_start, held = need_start, kept
        need = min(ends + MARGIN, size) - held_start
        held = _fill(handle, view, held, need, held_start)
        lo, hi = offset - held_start, ends - held_start
        owned = (piece.start - held_start, piece.end - held_start)
        search_view(
            view[:held], lo, hi, owned=owned, base=held_start, state=state, found=found, seen=seen
        )
        state.report(stop - offset)
        offset = stop


def _fill(handle: FileIO, view: memoryview, held: int, need: int, held_start: int) -> int:
    """Read into ``view[held:need]``; a file that ends before ``need`` shrank under the scan."""
    while held < need:
        got = handle.readinto(view[held:need])
        if not got:
            size = held_start + held
            raise CorruptError(f"shrank to {size} bytes during the scan; scan it again")
        held += got
    return held


# ---- line numbers, counted only where hits were found --------------------------------------


def _line_numbers(
    runner: Runner,
    files: Sequence[Path],
    hits: dict[int, list[tuple[int, bytes]]],
    range_size: int,
) -> dict[tuple[int, int], int]:
    """``(file index, offset) -> line``: 1 + the newlines before the offset."""
    tasks = []
    for index, found in hits.items():
        offsets = sorted({offset for offset, _ in found})
        path = str(files[index])
        kind = _kind_or_error(files[index])
        step = range_size if kind == "plain" else offsets[-1] + 1
        for start in range(0, offsets[-1] + 1, step):
            within = [o for o in offsets if start <= o < start + step]
            tasks.append((index, path, kind, start, min(start + step, offsets[-1] + 1), within))
    counted = sorted(runner.map(_count_task, tasks))
    lines: dict[tuple[int, int], int] = {}
    before: dict[int, int] = {}
    for index, _start, total, offsets, counts in counted:
        for offset, count in zip(offsets, counts, strict=True):
            lines[index, offset] = 1 + before.get(index, 0) + count
        before[index] = before.get(index, 0) + total
    return lines


def _count_task(
    task: tuple[int, str, str, int, int, list[int]], state: ScanState
) -> list[tuple[int, int, int, list[int], list[int]]]:
    """Newlines in ``[start, end)`` of the text, and before each offset within it."""
    index, path, kind, start, end, offsets = task
    counts: list[int] = []
    total = 0
    views = text_views(path, kind, start=start, end=end, chunk_size=state.chunk_size)
    for view, base, lo, hi in views:
        position = lo  # view[lo:hi] is the text at [base + lo, base + hi)
        while len(counts) < len(offsets) and offsets[len(counts)] < base + hi:
            cut = offsets[len(counts)] - base
            total += newlines(view, position, cut)
            counts.append(total)
            position = cut
        total += newlines(view, position, hi)
    return [(index, start, total, offsets, counts)]
