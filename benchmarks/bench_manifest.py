"""The holdouts manifest's read (#23): decoded straight into its Struct, against the strict reader.

Every canary scan reads the manifest once, in a fresh process, so that is what is timed:
a process that imports the reader and reads a manifest of ``--canaries`` canaries (in
``--suites`` suites) once, CPU seconds of the read alone (imports excluded). Two ways, run
alternately in the same run so that a busy moment hits both:

- ``struct``: :func:`flightdeck.holdouts.manifest.read_manifest`, the bytes decoded straight
  into the Struct (what every reader does);
- ``strict``: the reference, the strict reader's value checked and converted to the same
  Struct (``read_json``, ``problem``, ``from_value``: how the manifest was read before, and
  what a file the Struct refuses still goes through).

Run from the project root::

    .venv/bin/python -m benchmarks.bench_manifest                     # 10,000 canaries
    .venv/bin/python -m benchmarks.bench_manifest --canaries 100000 --repeat 5
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.synthetic import load_line

from flightdeck.holdouts.registry import register_suite
from flightdeck.suite.records import CANARY_PREFIX

READ = """
import sys, time
from pathlib import Path
from flightdeck.files.jsonl import read_json
from flightdeck.holdouts.manifest import read_manifest
from flightdeck.holdouts.manifest_format import from_value, problem
path = Path(sys.argv[1])
began = time.process_time()
if sys.argv[2] == "struct":
    manifest = read_manifest(path).manifest
else:
    value = read_json(path)
    assert problem(value) is None
    manifest = from_value(value)
print(time.process_time() - began, len(manifest.canaries))
"""


def make_manifest(folder: Path, canaries: int, suites: int) -> Path:
    for s in range(suites):
        register_suite(
            folder,
            suite=f"suite-{s}",
            manifest_sha256=secrets.token_hex(32),
            canaries={
                f"q{i}": CANARY_PREFIX + secrets.token_hex(16) for i in range(canaries // suites)
            },
        )
    return folder / "manifest.json"


def one_read(path: Path, way: str, canaries: int) -> float:
    done = subprocess.run(
        [sys.executable, "-c", READ, str(path), way], capture_output=True, text=True, check=True
    )
    seconds, count = done.stdout.split()
    assert int(count) == canaries, (count, canaries)
    return float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--canaries", type=int, default=10_000)
    parser.add_argument("--suites", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=8, help="fresh processes of each way")
    args = parser.parse_args()
    print(load_line("start"))
    with tempfile.TemporaryDirectory() as tmp:
        path = make_manifest(Path(tmp) / "holdouts", args.canaries, args.suites)
        total = args.canaries // args.suites * args.suites
        print(f"manifest: {total:,} canaries, {path.stat().st_size:,} bytes")
        times: dict[str, list[float]] = {"struct": [], "strict": []}
        for way in times:  # once each first: the bytecode cache, the file in the page cache
            one_read(path, way, total)
        for _ in range(args.repeat):
            for way, seen in times.items():
                seen.append(one_read(path, way, total))
    for way, seen in times.items():
        print(
            f"{way}: first read in a fresh process, median {1000 * statistics.median(seen):.1f} ms"
            f" CPU, best {1000 * min(seen):.1f} ms ({len(seen)} processes)"
        )
    ratio = statistics.median(times["strict"]) / statistics.median(times["struct"])
    print(f"struct against the strict reader: {ratio:.2f}x faster (medians)")
    print(load_line("the end"))


if __name__ == "__main__":
    main()
