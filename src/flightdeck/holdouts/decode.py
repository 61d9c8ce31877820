"""Reading a scanned file's text: compression sniffing, streaming decoders, line counting.

:mod:`flightdeck.holdouts.scan` searches the text; this module hands it over. A file's first
bytes name its compression (gzip through ``isal``, zstd through ``zstandard``, bz2 and xz from
the standard library); a name that promises another is an error. Decoders stream the text in
pieces that stay in the cache, and a cut-off or corrupt stream is an error the caller turns
into one line (:func:`describe`). Line numbers are counted only where a hit was found
(:func:`newlines` over :func:`text_views`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from flightdeck.errors import CorruptError

Progress = Callable[[int], None]

PIECE = 1 << 20  # decompressed text per search: stays in the cache
_RAW_BLOCK = 64 << 10  # compressed bytes per decoder call (output <= ratio x this)
COUNT_BLOCK = 1 << 20  # newline counting: blocks, each with at most MAX_HOPS finds
MAX_HOPS = 2048
SUFFIXES = {
    ".gz": "gzip",
    ".tgz": "gzip",
    ".zst": "zstd",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zip": "zip",
}
MAX_NESTING = 4  # compressed streams inside compressed streams, read through this deep


def ignore(_done: int) -> None:
    """A progress callback that records nothing."""


def sniff(path: str | Path) -> str:
    """``plain``, ``zip``, or the compression that the file's first bytes announce."""
    with open(path, "rb") as handle:
        head = handle.read(10)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    return sniff_bytes(head)


def sniff_bytes(head: bytes) -> str:
    """``plain``, or the compression that a stream's first (up to 10) bytes announce."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bz2"
    return "plain"


def check_suffix(path: str, kind: str) -> None:
    expected = SUFFIXES.get(os.path.splitext(path)[1].lower())
    if expected is not None and expected != kind:
        raise CorruptError(
            f"named {expected} but is not {expected} data; re-copy or rename the file"
        )


def decompressed(path: str, kind: str, chunk_size: int, report: Progress) -> Iterator[bytes]:
    """Decompressed text in pieces of at most ``min(chunk_size, 1 MiB)``, which stay in the
    cache (16 MiB pieces run a third slower); reports the compressed bytes read.

    A stream whose text is itself compressed (gzip in gzip, xz in zstd, ...) is read through,
    up to :data:`MAX_NESTING` deep. A zip file's members are read in order as one text, each
    member (itself read through nested compression) starting on a new line.
    """
    piece = min(chunk_size, PIECE)
    if kind == "zip":
        yield from _zip_pieces(path, piece, report)
        return
    with open(path, "rb") as raw:
        done = 0

        def reported(pieces: Iterator[bytes]) -> Iterator[bytes]:
            nonlocal done
            for data in pieces:
                position = raw.tell()
                report(position - done)
                done = position
                yield data

        yield from _nested(reported(_pieces(raw, piece, kind)), piece, 1)


def _pieces(raw: BinaryIO, piece: int, kind: str) -> Iterator[bytes]:
    decode = {"gzip": _gzip_pieces, "zstd": _zstd_pieces}.get(kind, _stdlib_pieces)
    return decode(raw, piece, kind)


def _nested(pieces: Iterator[bytes], piece: int, depth: int) -> Iterator[bytes]:
    """The pieces, or, when they start with a compression's magic bytes, what they decompress to."""
    head = b""
    for data in pieces:
        head += data
        if len(head) >= 10:
            break
    inner = sniff_bytes(head[:10]) if depth < MAX_NESTING else "plain"
    if inner == "plain":
        if head:
            yield head
        yield from pieces
        return
    stream = _Stream(head, pieces)
    yield from _nested(_pieces(stream, piece, inner), piece, depth + 1)  # type: ignore[arg-type]


class _Stream(io.RawIOBase):
    """A readable file over pieces of bytes, for a decoder reading a decompressed stream."""

    def __init__(self, first: bytes, rest: Iterator[bytes]) -> None:
        self._buffer = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._buffer:
            chunk = next(self._rest, None)
            if chunk is None:
                return 0
            self._buffer = chunk
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size


def _zip_pieces(path: str, piece: int, report: Progress) -> Iterator[bytes]:
    """Every member of a zip file, in order, each read through nested compression."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            with archive.open(info) as member:
                last = b"\n"
                for data in _nested(iter(lambda: member.read(piece), b""), piece, 1):
                    last = data[-1:] or last
                    yield data
                if last != b"\n":
                    yield b"\n"
            report(info.compress_size)


def _gzip_pieces(raw: BinaryIO, piece: int, _kind: str) -> Iterator[bytes]:
    """gzip members one after another, then optional zero padding; a cut-off member is an error.

    isal's inflate fed 64 KiB at a time runs ~30% faster than ``igzip.IGzipFile.read``.
    """
    from isal import isal_zlib

    member = None
    data = b""
    while True:
        if not data:
            data = raw.read(_RAW_BLOCK)
            if not data:
                break
        if member is None:
            if data.startswith(b"\0"):  # padding after the last member
                data = data.lstrip(b"\0")
                continue
            member = isal_zlib.decompressobj(wbits=31)
        out = member.decompress(data, piece)
        if out:
            yield out
        data, member = (
            (member.unused_data, None) if member.eof else (member.unconsumed_tail, member)
        )
    if member is not None:
        while out := member.decompress(b"", piece):
            yield out
        if not member.eof:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def _zstd_pieces(raw: BinaryIO, _piece: int, _kind: str) -> Iterator[bytes]:
    """zstd frames one after another; unlike ``stream_reader`` a cut-off frame is an error."""
    import zstandard

    context = zstandard.ZstdDecompressor()
    frame = None
    while data := raw.read(_RAW_BLOCK):
        while data:
            frame = frame or context.decompressobj()
            out = frame.decompress(data)
            if out:
                yield out
            data, frame = (frame.unused_data, None) if frame.eof else (b"", frame)
    if frame is not None:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def _stdlib_pieces(raw: BinaryIO, piece: int, kind: str) -> Iterator[bytes]:
    import bz2
    import lzma

    opener: Any = bz2.BZ2File if kind == "bz2" else lzma.LZMAFile
    with opener(raw) as reader:
        while data := reader.read(piece):
            yield data


def describe(kind: str, exc: Exception) -> str:
    """One line that says what is wrong with the file and what to do."""
    if isinstance(exc, CorruptError):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno is not None and exc.strerror:
        return f"cannot read ({exc.strerror}); check permissions"
    if isinstance(exc, EOFError):
        return f"{kind} data ends early (truncated?); re-copy the file or leave it out of the scan"
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return f"corrupt {kind} data ({detail}); re-copy the file or leave it out of the scan"


def newlines(view: Any, lo: int, hi: int) -> int:
    """The newlines in ``view[lo:hi]``, fast on long lines.

    Hopping from newline to newline with ``find`` (memchr, ~15 GB/s on 4 kB trace lines) beats
    ``count`` (a byte loop, ~2.5 GB/s) on lines longer than about 500 bytes. A block with more
    than ``MAX_HOPS`` lines finishes with ``count``, and so do the next few blocks.
    """
    count = 0
    counting_blocks = 0
    for block in range(lo, hi, COUNT_BLOCK):
        block_end = min(block + COUNT_BLOCK, hi)
        position = block
        if counting_blocks:
            counting_blocks -= 1
        else:
            position = view.find(b"\n", block, block_end)
            hops = 0
            while position != -1 and hops < MAX_HOPS:
                count += 1
                hops += 1
                position = view.find(b"\n", position + 1, block_end)
            if position == -1:
                continue
            counting_blocks = 15
        if isinstance(view, bytes | bytearray):
            count += view.count(b"\n", position, block_end)
        else:
            count += view[position:block_end].count(b"\n")
    return count


def text_views(
    path: str, kind: str, *, start: int, end: int, chunk_size: int
) -> Iterator[tuple[Any, int, int, int]]:
    """``(view, base, lo, hi)`` over the text in ``[start, end)``: ``view[lo:hi]`` is text at
    ``base + lo``, valid until the next item. Plain files are read into one buffer of at most
    :data:`PIECE` bytes (the file may end before ``end``); compressed ones are decompressed
    from the start.
    """
    if kind == "plain":
        buffer = bytearray(min(chunk_size, PIECE))
        view = memoryview(buffer)
        with open(path, "rb", buffering=0) as handle:
            handle.seek(start)
            while start < end:
                got = handle.readinto(view[: end - start])
                if not got:
                    return
                yield buffer, start, 0, got
                start += got
        return
    base = 0
    for data in decompressed(path, kind, chunk_size, ignore):
        yield data, base, 0, max(0, min(len(data), end - base))
        base += len(data)
        if base >= end:
            return
