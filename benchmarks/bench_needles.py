"""What the needles of obfuscated forms cost the canary scan's search, measured side by side.

    python benchmarks/gen_traces.py /tmp/fd-traces --plain-mib 512 --gzip-mib 64 --zst-mib 16
    python benchmarks/bench_needles.py /tmp/fd-traces --repeat 5

The scan's one pass is a Hyperscan block-mode search of every needle
(:func:`flightdeck.holdouts.needles.needles`). This compiles two databases, the needles
without the obfuscated forms of #20's red-team pass (hex, base32, ROT13, reversed,
zero-width, fullwidth: :func:`flightdeck.holdouts.needles._obfuscated`) and all of them, and
searches the same plain corpus, already in memory, with each in turn, round by round, on one
core (so a change of load hits both alike). It prints GB/s of each (best and median) and the
ratio, and the needles each fires on the corpus (the hits the confirm step then decodes).
Times are CPU seconds of the search (one thread), so other load on the machine counts less.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from flightdeck.holdouts import needles as needle_module

GB = 1e9


def compile_db(found: tuple[needle_module.Needle, ...]) -> Any:
    import hyperscan

    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=[b"".join(b"\\x%02x" % byte for byte in n.text) for n in found],
        ids=list(range(len(found))),
        elements=len(found),
        flags=[hyperscan.HS_FLAG_CASELESS if n.form.caseless else 0 for n in found],
    )
    return db


def search(db: Any, blocks: list[bytes]) -> tuple[float, int]:
    fired = 0

    def matched(*_args: object) -> None:
        nonlocal fired
        fired += 1

    start = time.process_time()  # CPU time: the load of a shared machine counts less
    for block in blocks:
        db.scan(block, match_event_handler=matched)
    return time.process_time() - start, fired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = sorted(p for p in (args.corpus / "plain").rglob("*") if p.is_file())
    data = b"".join(p.read_bytes() for p in files)
    piece = 1 << 20  # the scan's piece size (flightdeck.holdouts.decode.PIECE)
    blocks = [data[i : i + piece] for i in range(0, len(data), piece)]
    every = needle_module.needles()
    new = {form.name for form in needle_module._obfuscated()}
    before = tuple(n for n in every if n.form.name not in new)
    databases = {f"before ({len(before)} needles)": compile_db(before)}
    databases[f"after ({len(every)} needles)"] = compile_db(every)
    seconds: dict[str, list[float]] = {name: [] for name in databases}
    fired: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, db in databases.items():
            took, fired[name] = search(db, blocks)
            seconds[name].append(took)
    print(f"{len(data) / GB:.2f} GB of plain traces, {len(files)} files, one core, CPU time")
    for name, times in seconds.items():
        best, median = len(data) / min(times) / GB, len(data) / statistics.median(times) / GB
        print(f"{name}: {best:.2f} GB/s best, {median:.2f} median, {fired[name]} needle hits")
    first, second = seconds.values()
    rounds = [a / b for a, b in zip(first, second, strict=True)]
    print(
        f"after / before speed: {min(first) / min(second):.3f} best, "
        f"{statistics.median(rounds):.3f} median of rounds"
    )


if __name__ == "__main__":
    main()
