"""The canary scan finds every registered canary, with its file and line, in any wrapping."""

from __future__ import annotations

import builtins
import bz2
import errno
import gzip
import json
import lzma
import os
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from flightdeck.errors import InputError
from flightdeck.holdouts import decode, search
from flightdeck.holdouts import scan as engine
from flightdeck.holdouts.leaks import Hit, canary_scan
from flightdeck.holdouts.registry import register_suite
from flightdeck.suite.records import CANARY_PREFIX


def canary(n: int) -> str:
    return f"{CANARY_PREFIX}{n:032x}"


S1 = {"q1": canary(1), "q2": canary(2), "q3": canary(3)}
S2 = {"q1": canary(11), "q2": canary(12)}
OWNER = {c: ("s1", q) for q, c in S1.items()} | {c: ("s2", q) for q, c in S2.items()}

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "": lambda data: data,
    ".gz": lambda data: gzip.compress(data, mtime=0),
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
}


@pytest.fixture
def holdouts(tmp_path: Path) -> Path:
    folder = tmp_path / "holdouts"
    register_suite(folder, suite="s1", manifest_sha256="a" * 64, canaries=S1)
    register_suite(folder, suite="s2", manifest_sha256="b" * 64, canaries=S2)
    return folder


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(COMPRESS.get(path.suffix, COMPRESS[""])(data))
    return path


def hit(c: str, path: Path, line: int) -> Hit:
    suite, question = OWNER[c]
    return Hit(c, suite, question, path, line)


C = canary(2)
WRAPPINGS = [
    pytest.param(b'{"a": 1}\n{"text": "x %s y"}\n', 2, id="jsonl"),
    pytest.param(b"%s is first\n", 1, id="first-byte"),
    pytest.param(b"line\nlast: %s", 2, id="last-byte-no-newline"),
    pytest.param(b"a\r\nb\r\nc %s\r\nd\r\n", 3, id="crlf"),
    pytest.param(
        json.dumps({"content": f'keys:\n{{"canary": "{C}"}}\n\\'})
        .encode()
        .replace(C.encode(), b"%s")
        + b"\n",
        1,
        id="json-escaped",
    ),
    pytest.param(b"x\n" + b"y" * (3 << 20) + b"%s" + b"z" * 1000 + b"\n", 2, id="3-MiB-line"),
    pytest.param(b"\xff\xfe not utf-8 \xc3(\n%s\n", 2, id="binary-around"),
]


@pytest.mark.parametrize("suffix", list(COMPRESS), ids=lambda s: s or "plain")
@pytest.mark.parametrize(("template", "line"), WRAPPINGS)
def test_finds_canary_with_file_and_line(
    holdouts: Path, tmp_path: Path, suffix: str, template: bytes, line: int
) -> None:
    path = write(tmp_path / f"trace.jsonl{suffix}", template.replace(b"%s", C.encode()))
    result = canary_scan(holdouts, [path])
    assert result.hits == (hit(C, path, line),)
    assert (result.hit_count, result.suite_counts) == (1, {"s1": 1})


def reference(data: bytes) -> list[tuple[int, str]]:
    """(line, canary) of every registered canary, by a regular expression over the whole text."""
    pattern = re.escape(CANARY_PREFIX.encode()) + rb"[0-9a-f]{32}"
    return [
        (data.count(b"\n", 0, m.start()) + 1, m.group().decode())
        for m in re.finditer(pattern, data)
        if m.group().decode() in OWNER
    ]


def noisy_text(rng: random.Random, pieces: int) -> bytes:
    """Short pieces, many of them canaries, unregistered canaries, cut prefixes and newlines."""
    registered = sorted(OWNER)
    out = []
    for _ in range(pieces):
        r = rng.random()
        if r < 0.05:
            out.append(rng.choice(registered))
        elif r < 0.07:
            out.append(f"{CANARY_PREFIX}{rng.getrandbits(128):032x}")
        elif r < 0.09:
            out.append(CANARY_PREFIX[: rng.randint(1, len(CANARY_PREFIX))])
        elif r < 0.2:
            out.append(rng.choice(["\n", "\r\n", "\\n", '\\"']))
        else:
            out.append("".join(rng.choices('abcdef -{}":,', k=rng.randint(1, 40))))
    return "".join(out).encode()


@pytest.mark.parametrize(
    ("chunk_size", "jobs", "most_pieces"),
    [
        # a chunk boundary after every byte, or every 50 to 84 (a canary's length either
        # side): on short files in the fast subset (still a boundary every few pieces), on
        # files of up to 1,500 pieces (about 2 s each) in the full run
        pytest.param(1, 1, 150, id="1-1-short"),
        pytest.param(1, 1, 1500, marks=pytest.mark.slow, id="1-1"),
        *(
            pytest.param(size, jobs, pieces, marks=marks, id=f"{size}-{jobs}{suffix}")
            for size in (50, 82, 83, 84)
            for jobs in (1, 2)
            for pieces, marks, suffix in ((150, (), "-short"), (1500, pytest.mark.slow, ""))
        ),
        *(pytest.param(4096, jobs, 1500, id=f"4096-{jobs}") for jobs in (1, 2)),
    ],
)
def test_every_chunk_boundary_and_range_split_agree_with_a_regex(
    holdouts: Path, tmp_path: Path, chunk_size: int, jobs: int, most_pieces: int
) -> None:
    rng = random.Random(chunk_size)
    expected = []
    for n, suffix in enumerate([*COMPRESS, "", ".gz"]):
        data = noisy_text(rng, rng.randint(50, most_pieces))
        path = write(tmp_path / "traces" / f"t{n}.jsonl{suffix}", data)
        expected += [hit(c, path, line) for line, c in reference(data)]
    result = canary_scan(holdouts, [tmp_path / "traces"], jobs=jobs, chunk_size=chunk_size)
    assert sorted(result.hits, key=str) == sorted(expected, key=str)
    assert result.hit_count == len(expected)


@pytest.mark.parametrize("padding", [b"", b"\0" * 700])
def test_a_multi_member_gzip_file_is_read_to_its_end(
    holdouts: Path, tmp_path: Path, padding: bytes
) -> None:
    path = tmp_path / "appended.jsonl.gz"
    one, two = gzip.compress(b"one\ntwo\n"), gzip.compress(f"three {C}\n".encode())
    path.write_bytes(one + padding + two + padding)
    assert canary_scan(holdouts, [path]).hits == (hit(C, path, 3),)


def test_a_clean_corpus_gives_no_hit(holdouts: Path, tmp_path: Path) -> None:
    write(tmp_path / "runs" / "a.jsonl", b'{"text": "nothing to see"}\n' * 100)
    write(tmp_path / "runs" / "b.jsonl.gz", b"still nothing\n" * 100)
    write(tmp_path / "runs" / "empty.jsonl", b"")
    result = canary_scan(holdouts, [tmp_path / "runs"])
    assert result.clean
    assert (result.hits, result.files, result.bytes_scanned) == ((), 3, 2700 + 1400)
    assert result.canaries == 5


def test_unregistered_canaries_and_bare_prefixes_are_not_hits(
    holdouts: Path, tmp_path: Path
) -> None:
    stranger = canary(99)
    path = write(
        tmp_path / "t.jsonl", f"{stranger}\n{CANARY_PREFIX}\n{CANARY_PREFIX}xyz\n".encode()
    )
    result = canary_scan(holdouts, [path])
    assert result.clean
    assert result.unregistered == 1


def test_folders_are_walked_in_order_and_the_holdouts_manifest_is_skipped(
    holdouts: Path, tmp_path: Path
) -> None:
    b = write(tmp_path / "b" / "x.log", f"{canary(1)}\n".encode())
    a = write(tmp_path / "a" / "deep" / "y.log", f"\n{canary(11)}\n".encode())
    (holdouts / ".manifest.json.abc123.tmp").write_text(canary(3))
    result = canary_scan(holdouts, [tmp_path])
    assert result.hits == (hit(canary(11), a, 2), hit(canary(1), b, 1))
    assert result.files == 2


def test_links_in_folders(holdouts: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "elsewhere" / "t.jsonl", C.encode())
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "link.jsonl").symlink_to(target)  # a linked file is scanned
    (runs / "dangling.jsonl").symlink_to(tmp_path / "gone")  # holds no text
    (runs / "folder").symlink_to(tmp_path / "elsewhere")  # links to folders are not followed
    result = canary_scan(holdouts, [runs, target])  # the target is the same file: once
    assert result.hits == (hit(C, runs / "link.jsonl", 1),)


def test_a_file_named_twice_is_scanned_once(holdouts: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "t" / "a.jsonl", C.encode())
    assert canary_scan(holdouts, [path, tmp_path / "t", path]).hit_count == 1


def test_a_file_full_of_canaries_lists_each_canary_first_and_counts_them_all(
    holdouts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_LISTED_PER_TASK", 3)
    path = write(tmp_path / "t.jsonl", (f"{C}\n" * 10 + f"{canary(12)}\n").encode())
    result = canary_scan(holdouts, [path])
    assert result.hits == (*(hit(C, path, n) for n in (1, 2, 3)), hit(canary(12), path, 11))
    assert (result.hit_count, result.suite_counts) == (11, {"s1": 10, "s2": 1})
    assert result.first_hit("s2") == hit(canary(12), path, 11)


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_adds_up_to_the_bytes_on_disk(holdouts: Path, tmp_path: Path, jobs: int) -> None:
    paths = [
        write(tmp_path / "a.jsonl", b"x\n" * 5000),
        write(tmp_path / "b.jsonl.gz", b"y\n" * 5000),
        write(tmp_path / "c.jsonl.zst", b"z\n" * 5000),
    ]
    done: list[int] = []
    canary_scan(holdouts, paths, jobs=jobs, chunk_size=1000, on_progress=done.append)
    assert sum(done) == sum(p.stat().st_size for p in paths)


def gzip_bytes(text: bytes) -> bytes:
    return gzip.compress(text, mtime=0)


GOOD_GZ = gzip_bytes(b"hello\n" * 1000)
GOOD_ZST = zstandard.ZstdCompressor().compress(b"hello\n" * 1000)
BAD_FILES = [
    pytest.param(
        "t.jsonl.gz",
        GOOD_GZ[:40],
        "gzip data ends early (truncated?); re-copy the file or leave it out of the scan",
        id="truncated-gzip",
    ),
    pytest.param(
        "t.jsonl.gz",
        GOOD_GZ[:12] + b"\xff" * 8 + GOOD_GZ[20:],
        "corrupt gzip data (Error -1 Invalid deflate block found); "
        "re-copy the file or leave it out of the scan",
        id="corrupt-gzip",
    ),
    pytest.param(
        "t.jsonl.gz",
        GOOD_GZ[:-8] + b"\0\0\0\0" + GOOD_GZ[-4:],
        "corrupt gzip data (Error -6 Incorrect checksum found); "
        "re-copy the file or leave it out of the scan",
        id="gzip-crc",
    ),
    pytest.param(
        "t.jsonl.gz",
        GOOD_GZ + b"this is not gzip data at all\n",
        "corrupt gzip data (Error -4 Invalid gzip/zlib wrapper found); "
        "re-copy the file or leave it out of the scan",
        id="gzip-trailing-garbage",
    ),
    pytest.param(
        "t.jsonl.gz",
        b"plain text\n",
        "named gzip but is not gzip data; re-copy or rename the file",
        id="not-gzip",
    ),
    pytest.param(
        "t.jsonl.zst",
        GOOD_ZST[: len(GOOD_ZST) // 2],
        "zstd data ends early (truncated?); re-copy the file or leave it out of the scan",
        id="truncated-zstd",
    ),
    pytest.param(
        "t.jsonl.zst",
        GOOD_ZST + b"trailing garbage",
        "corrupt zstd data (zstd decompressor error: Unknown frame descriptor); "
        "re-copy the file or leave it out of the scan",
        id="zstd-garbage",
    ),
    pytest.param(
        "t.jsonl.xz",
        lzma.compress(b"x" * 100)[:30],
        "xz data ends early (truncated?); re-copy the file or leave it out of the scan",
        id="truncated-xz",
    ),
]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(("name", "data", "message"), BAD_FILES)
def test_a_bad_compressed_file_is_an_input_error_naming_it(
    holdouts: Path, tmp_path: Path, name: str, data: bytes, message: str, jobs: int
) -> None:
    write(tmp_path / "runs" / "fine.jsonl", b"fine\n" * 100)
    path = tmp_path / "runs" / name
    path.write_bytes(data)
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        canary_scan(holdouts, [tmp_path / "runs"], jobs=jobs, chunk_size=64)
    assert str(caught.value) == f"{path}: {message}"


def test_a_missing_path_is_an_input_error(holdouts: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-trace.jsonl"
    with pytest.raises(InputError, match="no such file or folder; check the path") as caught:
        canary_scan(holdouts, [missing])
    assert caught.value.path == str(missing)


@pytest.mark.parametrize(
    "chunk_size",
    [
        pytest.param(engine.CHUNK_SIZE, id="small-file-opened-by-the-scan-task"),
        pytest.param(1, id="large-file-sniffed-by-the-planner"),
    ],
)
def test_an_unreadable_file_is_an_input_error(
    holdouts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_size: int
) -> None:
    """Opening the file fails as it would without read permission, for root too."""
    write(tmp_path / "runs" / "a-fine.jsonl", b"fine\n")
    locked = write(tmp_path / "runs" / "locked.jsonl", b"x" * 100)
    real_open = builtins.open

    def denying_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(file) == str(locked):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denying_open)
    with pytest.raises(InputError) as caught:
        canary_scan(holdouts, [tmp_path / "runs"], jobs=1, chunk_size=chunk_size)
    assert str(caught.value) == f"{locked}: cannot read (Permission denied); check permissions"


@pytest.mark.parametrize(
    ("data", "block", "hops"),
    [
        pytest.param(b"\n" * 5000, 64, 4, id="dense"),
        pytest.param((b"x" * 300 + b"\n") * 50, 1024, 2, id="sparse"),
        pytest.param(b"", 64, 4, id="empty"),
        pytest.param(bytes(random.Random(1).choices(b"ab\n", k=9999)), 100, 5, id="mixed"),
    ],
)
@pytest.mark.parametrize("as_type", [bytes, bytearray])
def test_newline_count_matches_count(
    monkeypatch: pytest.MonkeyPatch, data: bytes, block: int, hops: int, as_type: type
) -> None:
    monkeypatch.setattr(decode, "COUNT_BLOCK", block)
    monkeypatch.setattr(decode, "MAX_HOPS", hops)
    view = as_type(data)
    for lo, hi in [(0, len(data)), (3, len(data) - 7), (len(data) // 2, len(data))]:
        assert decode.newlines(view, lo, hi) == data.count(b"\n", lo, max(lo, hi))
