"""Write a trace-like corpus for the canary-scan benchmark, with registered and planted canaries.

    python benchmarks/gen_traces.py /tmp/fd-traces   # ~1 GiB plain, 1 GiB gzip, 256 MiB zst

Writes, under OUT:
  holdouts/manifest.json   --canaries registered canaries over --suites suites
  plain/                   one large run log (40%), many trial traces, a CRLF trace, a retrieval log
  gzip/  zst/              trial traces, compressed (gzip -6; zstd -3), one multi-member gzip
  patterns.txt             the registered canaries, one a line (for grep -F -f and rg -F -f)
  expected.json            every planted hit: file, line, canary (the benchmark checks them)

Records look like an agent's trace: messages, tool calls and results with escaped newlines and
quotes, retrieval hits with snippets, hashes and timestamps; words follow a Zipf law, so the
text compresses like real traces do (about 4-6x with gzip). Canaries are planted at the
awkward places: across the scan's 16 MiB chunk and 64 MiB range boundaries, at the first and
last byte of a file (no newline at the end), JSON-escaped, on a CRLF line, inside a 6 MiB line,
in the second member of a gzip file, and in encodings (base64 at three offsets, percent, JSON
\\u, HTML hex, lower case, split by a line break) between base64 images; one unregistered
canary-shaped string must not be a hit.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import random
import shutil
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from flightdeck.holdouts import registry as holdout
from flightdeck.suite.records import CANARY_PREFIX

MIB = 1 << 20
CHUNK = 16 * MIB  # flightdeck.holdouts.scan.CHUNK_SIZE
RANGE = 4 * CHUNK  # its range size for splitting large plain files
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "te", "vi", "do", "pa", "shi", "an", "el")
SYLLABLES += ("or", "un", "is", "at", "re", "co", "de", "ing", "tion", "ly", "er")
EXTRA = ["café", "naïve", "déjà", "Straße", "–", "→", "日本", "✓"]


def vocabulary(rng: random.Random, size: int = 20_000) -> tuple[list[str], list[float]]:
    words = {
        "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 1, 2, 2, 2, 3, 3, 4))))
        for _ in range(size * 2)
    }
    ordered = sorted(words)[:size]
    rng.shuffle(ordered)
    ordered[50:50] = ["the", "a", "to", "of", "and", "in", "is", "for", "that", "with", *EXTRA]
    cumulative, total = [], 0.0
    for rank in range(1, len(ordered) + 1):
        total += 1 / rank
        cumulative.append(total)
    return ordered, cumulative


class Records:
    """Trace records drawn from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words, self.weights = vocabulary(self.rng)
        self.paths = [
            f"{repo}/{folder}/{self.text(2).replace(' ', '-')}.{ext}"
            for repo in ("sdlc", "platform", "infra")
            for folder in ("docs", "docs/runbooks", "src/api", "adr", "scripts")
            for ext in ("md", "py", "yaml")
            for _ in range(20)
        ]

    def text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.weights, k=n))

    def prose(self, sentences: int) -> str:
        rng = self.rng
        return " ".join(
            self.text(rng.randint(4, 24)).capitalize() + rng.choice(".!?.,;.")
            for _ in range(sentences)
        )

    def file_text(self) -> str:
        rng = self.rng
        lines = []
        for _ in range(rng.randint(5, 120)):
            r = rng.random()
            if r < 0.3:
                lines.append(
                    f'    {self.text(1)}_{self.text(1)} = "{self.text(3)}"  # {self.text(5)}'
                )
            elif r < 0.4:
                lines.append(f"## {self.text(4).title()}")
            elif r < 0.5:
                lines.append(f"- [{rng.choice(' x')}] {self.text(rng.randint(3, 12))}")
            else:
                lines.append(self.prose(rng.randint(1, 3)))
        return "\n".join(lines)

    def record(self, trial: str, step: int) -> str:
        rng = self.rng
        base = {
            "ts": f"2026-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d}Z",
            "trial": trial,
            "step": step,
        }
        kind = rng.random()
        if kind < 0.35:
            base |= {"type": "message", "role": rng.choice(("assistant", "user")),
                     "content": self.prose(rng.randint(1, 30))}  # fmt: skip
        elif kind < 0.55:
            path = rng.choice(self.paths)
            start = rng.randint(1, 400)
            lines = [start, start + rng.randint(5, 200)]
            base |= {"type": "tool_call", "id": f"call_{rng.getrandbits(64):016x}",
                     "name": rng.choice(("read_file", "grep", "list_dir")),
                     "args": {"path": path, "lines": lines}}  # fmt: skip
        elif kind < 0.85:
            base |= {"type": "tool_result", "id": f"call_{rng.getrandbits(64):016x}",
                     "content": self.file_text(), "sha256": f"{rng.getrandbits(256):064x}",
                     "tokens": rng.randint(20, 8000)}  # fmt: skip
        else:
            hits = [
                {
                    "uri": f"{rng.choice(self.paths)}#L{rng.randint(1, 300)}",
                    "score": round(rng.random(), 4),
                    "snippet": self.prose(rng.randint(1, 4)),
                }  # fmt: skip
                for _ in range(rng.randint(1, 8))
            ]
            base |= {"type": "retrieval", "query": self.text(rng.randint(3, 12)), "hits": hits}
        return json.dumps(base) + "\n"


def record_pool(seed: int, megabytes: int) -> list[bytes]:
    records = Records(seed)
    pool, size, step = [], 0, 0
    trial = "q00-arm-a"
    while size < megabytes * MIB:
        if step % 50 == 0:
            trial = f"q{records.rng.randint(0, 39):02d}-arm-{records.rng.choice('abc')}"
        line = records.record(trial, step % 50).encode()
        pool.append(line)
        size += len(line)
        step += 1
    return pool


def fill(pool: list[bytes], rng: random.Random, size: int) -> bytearray:
    out = bytearray()
    while len(out) < size:
        out += b"".join(rng.choices(pool, k=256))
    return out


def plant(data: bytearray, near: int, canary: str) -> int:
    """Overwrite prose at about ``near`` (keeping every offset) with the canary."""
    needle = canary.encode()
    for offset in range(near, near + 4 * MIB):
        window = data[offset - 8 : offset + len(needle) + 8]
        if not any(b in window for b in (b'"', b"\\", b"\n", b"\r")):
            data[offset : offset + len(needle)] = needle
            return offset
    raise RuntimeError(f"no prose near {near}")


def _b64(shift: int) -> Callable[[str, random.Random], str]:
    def encode(canary: str, rng: random.Random) -> str:
        return base64.b64encode(rng.randbytes(shift) + canary.encode() + rng.randbytes(90)).decode()

    return encode


ENCODINGS: list[tuple[str, Callable[[str, random.Random], str]]] = [
    ("base64+0", _b64(0)),
    ("base64+1", _b64(1)),
    ("base64+2", _b64(2)),
    ("percent", lambda c, _r: "".join(f"%{b:02X}" for b in c.encode())),
    ("json-u", lambda c, _r: "".join(f"\\u{ord(ch):04x}" for ch in c)),
    ("html-hex", lambda c, _r: "".join(f"&#x{ord(ch):x};" for ch in c)),
    ("lowercase", lambda c, _r: c.lower()),
    ("split", lambda c, _r: c[:30] + "\n" + c[30:]),
]


def line_of(data: bytes | bytearray, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def compress(job: tuple[str, bytes, str]) -> None:
    path, data, kind = job
    if kind == "gzip":
        Path(path).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
    else:
        import zstandard

        Path(path).write_bytes(zstandard.ZstdCompressor(level=3).compress(data))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--plain-mib", type=int, default=1024)
    parser.add_argument("--gzip-mib", type=int, default=1024, help="uncompressed size")
    parser.add_argument("--zst-mib", type=int, default=256, help="uncompressed size")
    parser.add_argument("--canaries", type=int, default=10_000)
    parser.add_argument("--suites", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    rng = random.Random(args.seed)

    canaries = [CANARY_PREFIX + f"{rng.getrandbits(128):032x}" for _ in range(args.canaries)]
    per_suite = -(-len(canaries) // args.suites)
    for s in range(args.suites):
        mine = canaries[s * per_suite : (s + 1) * per_suite]
        holdout.register_suite(
            out / "holdouts",
            suite=f"bench-suite-{s:02d}-v1",
            manifest_sha256=f"{rng.getrandbits(256):064x}",
            canaries={f"q{i:04d}": c for i, c in enumerate(mine)},
        )
    (out / "patterns.txt").write_text("".join(c + "\n" for c in canaries))
    planted = iter(rng.sample(canaries, 48))
    expected: list[dict[str, object]] = []

    def expect(path: Path, data: bytes | bytearray, canaries: list[str]) -> None:
        for canary in canaries:
            offset = data.find(canary.encode())
            assert offset != -1, canary
            assert data.find(canary.encode(), offset + 1) == -1, canary
            line = line_of(data, offset)
            expected.append({"file": str(path.relative_to(out)), "line": line, "canary": canary})

    print("building the record pool ...", file=sys.stderr)
    pool = record_pool(args.seed, 64)
    plain = out / "plain"
    (plain / "trials").mkdir(parents=True)

    # one large run log: records first (they shift offsets), then canaries over the boundaries
    big_size = args.plain_mib * MIB * 4 // 10
    big = fill(pool, rng, big_size)
    path = plain / "run-all-arms.jsonl"
    in_big = [next(planted) for _ in range(5)]
    long_text = Records(args.seed + 1).prose(60_000)  # a line of about 6 MiB
    half = len(long_text) // 2
    escaped = f'keys.jsonl:\n{{"canary": "{in_big[1]}"}}\n\\'  # quotes, newlines, backslashes
    stranger = CANARY_PREFIX + f"{rng.getrandbits(128):032x}"  # unregistered: not a hit
    for fraction, record in (
        (2, {"type": "tool_result", "content": long_text[:half] + in_big[0] + long_text[half:]}),
        (3, {"type": "tool_result", "content": escaped}),
        (5, {"type": "message", "content": f"{stranger} and {CANARY_PREFIX} alone"}),
    ):
        at = big.index(b"\n", len(big) // fraction) + 1
        big[at:at] = (json.dumps(record) + "\n").encode()
    for canary, boundary in zip(in_big[2:], (CHUNK, RANGE, 2 * RANGE + CHUNK), strict=True):
        plant(big, boundary - 40, canary)
    expect(path, big, in_big)
    path.write_bytes(big)
    del big

    # trial traces of 1-32 MiB
    remaining = args.plain_mib * MIB - big_size
    index = 0
    while remaining > 0:
        size = min(remaining, int(MIB * 2 ** rng.uniform(0, 5)))
        data = fill(pool, rng, size)
        path = plain / "trials" / f"trial-{index:04d}.jsonl"
        if index % 7 == 3:
            canary = next(planted)
            plant(data, rng.randrange(len(data) // 2), canary)
            expect(path, data, [canary])
        path.write_bytes(data)
        remaining -= len(data)
        index += 1

    # a CRLF trace, and a retrieval log with canaries at its first and last byte
    crlf = fill(pool, rng, 4 * MIB).replace(b"\n", b"\r\n")
    canary = next(planted)
    path = plain / "windows-trace.jsonl"
    plant(crlf, len(crlf) // 2, canary)
    expect(path, crlf, [canary])
    path.write_bytes(crlf)
    first, last = next(planted), next(planted)
    log = first.encode() + b" retrieved " + fill(pool, rng, MIB) + b"leaked: " + last.encode()
    path = plain / "retrieval.log"
    expect(path, log, [first, last])
    path.write_bytes(log)

    # a trace that wrote keys through encodings, among base64 images (which must stay clean)
    encoded, lines = bytearray(), []
    for name, encode in ENCODINGS:
        canary = next(planted)
        image = base64.b64encode(rng.randbytes(rng.randint(2_000, 200_000))).decode()
        encoded += (json.dumps({"type": "image", "data": image}) + "\n").encode()
        lines.append((line_of(encoded, len(encoded)), canary))
        record = {"type": "tool_result", "encoding": name, "content": encode(canary, rng)}
        encoded += (json.dumps(record, ensure_ascii=False) + "\n").encode()
    encoded += fill(pool, rng, 16 * MIB)
    path = plain / "encoded.jsonl"
    path.write_bytes(encoded)
    for line, canary in lines:
        expected.append({"file": str(path.relative_to(out)), "line": line, "canary": canary})

    # compressed traces, compressed in parallel
    jobs: list[tuple[str, bytes, str]] = []
    for kind, total, suffix in (("gzip", args.gzip_mib, ".gz"), ("zst", args.zst_mib, ".zst")):
        folder = out / kind
        folder.mkdir()
        remaining, index = total * MIB, 0
        while remaining > 0:
            size = min(remaining, int(MIB * 2 ** rng.uniform(3, 6)))
            data = fill(pool, rng, size)
            path = folder / f"trial-{index:04d}.jsonl{suffix}"
            if index % 5 == 1:
                canary = next(planted)
                plant(data, CHUNK - 40 if len(data) > 2 * CHUNK else 100, canary)
                expect(path, data, [canary])
            jobs.append((str(path), bytes(data), "gzip" if kind == "gzip" else "zstd"))
            remaining -= len(data)
            index += 1
    print(f"compressing {len(jobs)} files ...", file=sys.stderr)
    with ProcessPoolExecutor() as pool_executor:
        list(pool_executor.map(compress, jobs, chunksize=1))
    # a multi-member gzip file with the canary in its second member
    canary = next(planted)
    one, two = fill(pool, rng, 2 * MIB), bytearray(b"{}\n") + fill(pool, rng, 2 * MIB)
    plant(two, MIB, canary)
    path = out / "gzip" / "appended.jsonl.gz"
    path.write_bytes(gzip.compress(bytes(one), mtime=0) + gzip.compress(bytes(two), mtime=0))
    expect(path, one + two, [canary])

    expected.sort(key=lambda e: (str(e["file"]), int(str(e["line"]))))
    (out / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    sizes = {
        d: sum(f.stat().st_size for f in (out / d).rglob("*") if f.is_file())
        for d in ("plain", "gzip", "zst")
    }
    on_disk = ", ".join(f"{d} {s / MIB:.0f} MiB" for d, s in sizes.items())
    print(f"wrote {out}: {len(expected)} planted hits; on disk {on_disk}")


if __name__ == "__main__":
    main()
