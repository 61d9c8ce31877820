"""The compiled scan database kept in the cache: used when sound, never trusted when not.

Each bad copy below is what a cache can really hold (a torn write, a flipped bit, a file from
another flightdeck whose needles differ, one that numbers them differently, a stranger's file
under the right name); each is written where the scan looks, and the scan must still find a
canary in every encoding that needs a needle the bad copy lacks, and replace the copy.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import hyperscan
import pytest

from flightdeck.holdouts import database as db_module
from flightdeck.holdouts.leaks import canary_scan
from flightdeck.holdouts.needles import needles
from flightdeck.holdouts.registry import register_suite
from flightdeck.suite.records import CANARY_PREFIX

CANARY = f"{CANARY_PREFIX}{0xC0FFEE:032x}"
FLIGHTDECK = str(Path(sys.executable).with_name("flightdeck"))
# one trace line per encoding family: plain, base64 (a needle of its own), UTF-16, JSON \u
ENCODED = {
    "plain": CANARY.encode(),
    "base64": base64.b64encode(b"x" + CANARY.encode() + b"yz"),
    "utf-16-le": CANARY.encode("utf-16-le"),
    "json-u": "".join(f"\\u{ord(c):04X}" for c in CANARY).encode(),
}


@pytest.fixture
def holdouts(tmp_path: Path) -> Path:
    folder = tmp_path / "holdouts"
    register_suite(folder, suite="s1", manifest_sha256="a" * 64, canaries={"q1": CANARY})
    return folder


def traces(tmp_path: Path) -> list[Path]:
    found = []
    for name, line in ENCODED.items():
        path = tmp_path / "traces" / f"{name}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"before\n" + line + b"\nafter\n")
        found.append(path)
    return found


def compiled_from(patterns: list[tuple[bytes, int, int]]) -> bytes:
    """A serialised database of these (expression, id, flags), as hyperscan writes it."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=[e for e, _, _ in patterns],
        ids=[i for _, i, _ in patterns],
        elements=len(patterns),
        flags=[f for _, _, f in patterns],
    )
    return bytes(hyperscan.dumpb(db))


def with_header(body: bytes) -> bytes:
    """``body`` framed exactly as the cache frames its own: key, then the body's hash."""
    assert db_module.frame(body) == db_module.MAGIC + db_module.key() + sha256(body) + body
    return db_module.frame(body)


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def our_patterns() -> list[tuple[bytes, int, int]]:
    return db_module.needle_patterns()


def cache_file(cache: Path) -> Path:
    return db_module.stored_path(cache)


def count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = db_module.compile_database

    def counting() -> object:
        calls.append(1)
        return real()

    monkeypatch.setattr(db_module, "compile_database", counting)
    return calls


def test_a_sound_copy_is_loaded_instead_of_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    calls = count_compiles(monkeypatch)
    first = db_module.load_or_compile(cache)
    assert calls == [1]
    assert cache_file(cache).is_file()
    stored = cache_file(cache).read_bytes()
    second = db_module.load_or_compile(cache)  # as a second process would
    assert calls == [1], "the stored copy was compiled again"
    assert cache_file(cache).read_bytes() == stored
    assert bytes(hyperscan.dumpb(second)) == bytes(hyperscan.dumpb(first))
    assert db_module.finds_every_needle(second)


def test_the_scan_through_the_cache_finds_every_encoding(holdouts: Path, tmp_path: Path) -> None:
    result = canary_scan(holdouts, traces(tmp_path), jobs=1, cache=tmp_path / "cache")
    assert {h.file.stem for h in result.hits} == set(ENCODED)
    assert result.hit_count == len(ENCODED)


def _drop_base64(patterns: list[tuple[bytes, int, int]]) -> list[tuple[bytes, int, int]]:
    table = needles()
    return [p for p in patterns if not table[p[1]].form.name.startswith("base64")]


def _swap_ids(patterns: list[tuple[bytes, int, int]]) -> list[tuple[bytes, int, int]]:
    ids = [i for _, i, _ in patterns]
    return [(e, ids[-1 - n], f) for n, (e, _, f) in enumerate(patterns)]


BAD_COPIES: list[tuple[str, Callable[[], bytes]]] = [
    ("empty", lambda: b""),
    ("torn", lambda: with_header(compiled_from(our_patterns()))[:-1000]),
    (
        "a bit flipped in the body",
        lambda: (lambda d: d[:-50] + bytes([d[-50] ^ 1]) + d[-49:])(
            with_header(compiled_from(our_patterns()))
        ),
    ),
    ("a stranger's file under the name", lambda: os.urandom(4096)),
    ("hyperscan bytes without our header", lambda: compiled_from(our_patterns())),
    # framed and hashed exactly right, but not the database of these needles: only the
    # probe scan can tell, and a scan that trusted it would miss the base64 canary
    (
        "another version's needles (base64 missing)",
        lambda: with_header(compiled_from(_drop_base64(our_patterns()))),
    ),
    (
        "the needles numbered differently",
        lambda: with_header(compiled_from(_swap_ids(our_patterns()))),
    ),
]


@pytest.mark.parametrize(("name", "make"), BAD_COPIES, ids=[n for n, _ in BAD_COPIES])
def test_a_bad_copy_is_recompiled_and_replaced(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    make: Callable[[], bytes],
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    bad = make()
    cache_file(cache).write_bytes(bad)
    assert db_module.load_stored(cache_file(cache)) is None, f"{name}: the bad copy was trusted"
    calls = count_compiles(monkeypatch)
    made = db_module.load_or_compile(cache)
    assert calls == [1]
    assert db_module.finds_every_needle(made)
    assert cache_file(cache).read_bytes() != bad  # replaced by a sound one
    db_module.load_or_compile(cache)
    assert calls == [1], "the replacement is not loadable"


def loaded(serialised: bytes) -> object:
    db = hyperscan.loadb(serialised, hyperscan.HS_MODE_BLOCK)
    db.scratch = hyperscan.Scratch(db)
    return db


def test_the_probe_refuses_a_database_that_lacks_one_needle() -> None:
    patterns = our_patterns()
    assert db_module.finds_every_needle(loaded(compiled_from(patterns)))
    for dropped in (0, len(patterns) // 2, len(patterns) - 1):
        short = patterns[:dropped] + patterns[dropped + 1 :]
        assert not db_module.finds_every_needle(loaded(compiled_from(short))), dropped
    assert not db_module.finds_every_needle(loaded(compiled_from(_swap_ids(patterns))))


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("single-match", lambda p: (p[0], p[1], p[2] | hyperscan.HS_FLAG_SINGLEMATCH)),
        ("caseless lost", lambda p: (p[0], p[1], p[2] & ~hyperscan.HS_FLAG_CASELESS)),
    ],
    ids=["single-match", "caseless lost"],
)
def test_the_probe_refuses_a_database_compiled_with_other_flags(
    name: str, change: Callable[[tuple[bytes, int, int]], tuple[bytes, int, int]]
) -> None:
    """Such a database finds a needle once per chunk, or in one letter case: a missed canary."""
    changed = [change(p) for p in our_patterns()]
    assert changed != our_patterns()
    assert not db_module.finds_every_needle(loaded(compiled_from(changed))), name


def test_the_probe_refuses_a_database_that_stops_looking_early() -> None:
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    patterns = our_patterns()
    db.compile(
        expressions=[e for e, _, _ in patterns],
        ids=[i for _, i, _ in patterns],
        elements=len(patterns),
        flags=[f for _, _, f in patterns],
        ext=[hyperscan.ExpressionExt(flags=hyperscan.HS_EXT_FLAG_MAX_OFFSET, max_offset=32 << 10)]
        * len(patterns),
    )
    assert not db_module.finds_every_needle(loaded(bytes(hyperscan.dumpb(db))))


def test_a_sound_copy_written_by_hand_is_accepted(tmp_path: Path) -> None:
    """The checks refuse bad copies, not every copy: the framing the tests build is the real one."""
    cache_file(tmp_path).write_bytes(with_header(compiled_from(our_patterns())))
    assert db_module.load_stored(cache_file(tmp_path)) is not None


def test_an_unwritable_cache_costs_a_compile_and_nothing_else(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be\n")
    made = db_module.load_or_compile(blocker / "scan-database")
    assert db_module.finds_every_needle(made)
    assert blocker.read_text() == "a file where the cache folder should be\n"


def test_the_command_keeps_the_copy_in_the_project_cache_and_survives_a_foreign_one(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "params.yaml").write_text("holdouts: holdouts\n")
    register_suite(
        project / "holdouts", suite="s1", manifest_sha256="a" * 64, canaries={"q1": CANARY}
    )
    trace = project / "traces" / "s1" / "arm" / "q1.log"
    trace.parent.mkdir(parents=True)
    trace.write_bytes(b"clean\n")
    command = [FLIGHTDECK, "holdout", "canary-scan", "traces"]
    clean = subprocess.run(command, cwd=project, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr
    stored = list((project / ".flightdeck" / "cache" / "scan-database").iterdir())
    assert len(stored) == 1
    assert stored[0].suffix == ".hsdb"
    stored[0].write_bytes(with_header(compiled_from(_drop_base64(our_patterns()))))
    trace.write_bytes(b"clean\n" + ENCODED["base64"] + b"\n")
    leaked = subprocess.run(command, cwd=project, capture_output=True, text=True)
    assert leaked.returncode == 1, leaked.stdout + leaked.stderr
    assert "q1.log:2" in leaked.stdout


def test_a_bare_holdouts_scan_outside_a_project_writes_no_cache(tmp_path: Path) -> None:
    register_suite(tmp_path / "h", suite="s1", manifest_sha256="a" * 64, canaries={"q1": CANARY})
    (tmp_path / "t.log").write_bytes(b"clean\n")
    here = tmp_path / "elsewhere"
    here.mkdir()
    command = [FLIGHTDECK, "holdout", "canary-scan", "--holdouts", "../h", "../t.log"]
    done = subprocess.run(command, cwd=here, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list(here.iterdir()) == []
