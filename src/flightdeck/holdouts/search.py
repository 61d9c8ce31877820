"""One chunk's search: the needles in one pass, then each canary confirmed and counted once.

:mod:`flightdeck.holdouts.scan` cuts files into chunks and hands each here with the bytes
around it (:data:`MARGIN`); :func:`search_view` runs the Hyperscan database of the needles of
:mod:`flightdeck.holdouts.needles` (:mod:`flightdeck.holdouts.database`) over the chunk, reads
a canary whose prefix is intact straight away, and has :mod:`flightdeck.holdouts.confirm`
decode the bytes around every other needle. Hits are counted in a :class:`Found`, by tail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flightdeck.holdouts.confirm import confirm
from flightdeck.holdouts.database import database
from flightdeck.holdouts.needles import CANARY_LEN, EXTENT, LONGEST, PREFIX, needles
from flightdeck.holdouts.workers import ScanState

MARGIN = 3 * EXTENT  # bytes read around a chunk: a needle's canary and its decoding window
MAX_LISTED_PER_TASK = 1000  # hits listed per task, beyond each tail's first; all are counted
_PREFIX_LOWER = PREFIX.lower()
_HEX = frozenset(b"0123456789abcdef")


@dataclass(slots=True)
class Found:
    """What the pieces of one file that a task read hold: hits, counts, bytes scanned."""

    index: int
    hits: list[tuple[int, bytes]] = field(default_factory=list)
    counts: dict[bytes, int] = field(default_factory=dict)
    unregistered: int = 0
    scanned: int = 0
    error: str | None = None  # InputError does not pickle; the parent raises it


def search_view(
    view: Any,
    lo: int,
    hi: int,
    *,
    owned: tuple[int, int],
    base: int,
    state: ScanState,
    found: Found,
    seen: set[int],
) -> None:
    """Decode where a needle ends in ``view[lo:hi]``; count the canaries that start in ``owned``.

    Offsets are positions in ``view``, whose first byte is at ``base`` in the text. ``view``
    holds :data:`MARGIN` bytes (where the file has them) around ``[lo, hi)`` for the needles'
    decoding windows. Every needle end is looked at by one call, and ``seen`` holds the text
    offsets of the canaries already counted, so that a canary that several needles reach, or
    two windows overlap, counts once.
    """
    ends: list[tuple[int, int]] = []

    def matched(needle: int, _start: int, end: int, _flags: int, _context: object) -> None:
        ends.append((needle, end))

    start_at = max(0, lo - LONGEST)
    if hi <= lo:
        return
    database().scan(memoryview(view)[start_at:hi], match_event_handler=matched)
    table = needles()
    wide = (0, -1)  # needles that end in this range were decoded in the last wide window
    for index, end in ends:
        end += start_at
        if end <= lo:
            continue  # the call before this one looked at it
        needle = table[index]
        start = needle.canary_start(end)
        if start + base in seen or wide[0] <= end <= wide[1]:
            continue
        if needle.form.name == "plain" and _plain(view, start, owned, base, state, found, seen):
            continue
        near = confirm(view, start, start + needle.form.span, needle.form)
        if not near:
            near = confirm(view, end - EXTENT, end + 2 * EXTENT)
            wide = (end, end + EXTENT)
        for offset, tail in near:
            if owned[0] <= offset < owned[1] and offset + base not in seen:
                seen.add(offset + base)
                _record(found, base + offset, tail, state.tails)


def _plain(
    view: Any,
    start: int,
    owned: tuple[int, int],
    base: int,
    state: ScanState,
    found: Found,
    seen: set[int],
) -> bool:
    """The fast path: the prefix intact at ``start`` (any case), its tail after it."""
    if start < 0:
        return False
    text = bytes(view[start : start + CANARY_LEN]).lower()
    if not text.startswith(_PREFIX_LOWER) or len(text) < CANARY_LEN:
        return False
    tail = text[len(PREFIX) :]
    if not _HEX.issuperset(tail):
        return False  # split or cut: the window decodes it
    if owned[0] <= start < owned[1]:
        seen.add(start + base)
        _record(found, base + start, tail, state.tails)
    return True


def _record(found: Found, offset: int, tail: bytes, tails: frozenset[bytes]) -> None:
    if tail not in tails:
        found.unregistered += 1
        return
    count = found.counts.get(tail, 0)
    found.counts[tail] = count + 1
    if count == 0 or len(found.hits) < MAX_LISTED_PER_TASK:
        found.hits.append((offset, tail))
