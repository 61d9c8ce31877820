"""What a 100,000 x 3 score cannot do without, beside the whole score, in one sitting.

Issue 23's target is 4 s for the whole process. This measures the part no rule, check or
plan can remove with these dependencies: starting the interpreter with the imports the
score needs, msgspec decoding every file into its Structs (types only, none of the rules
the readers add), the sha256 of every file (the manifest and the ledger), and the answers'
canonical hashes (what a label binds to). What is left of 4 s after them is what the rules,
the checks between records, the frames, the comparison and the outputs may cost together.

    .venv/bin/python benchmarks/bench_floor.py            # makes the suite (about 20 s)
    .venv/bin/python benchmarks/bench_floor.py --suite suites/bench-100000 --runs 3

Each figure is the median of ``--runs`` runs, the floor's parts in fresh processes, in turns
with the whole score, with the load average printed (the machine is shared).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_score import ARMS, load, make_suite, score_cmd  # noqa: E402

IMPORTS = (
    "import flightdeck.cli, flightdeck.tasks.scoring, flightdeck.scoring.report, polars, "
    "scipy.special"
)

DECODE = """
import hashlib, sys, time
from pathlib import Path
import msgspec
from flightdeck.suite.schema import Answer, Key, Label, Question
suite, arms = Path(sys.argv[1]), sys.argv[2:]
files = [(suite / "questions.jsonl", Question), (suite / "keys.jsonl", Key)]
files += [(suite / "answers" / f"{a}.jsonl", Answer) for a in arms]
files += [(suite / "labels" / f"{a}.jsonl", Label) for a in arms]
canonical = msgspec.json.Encoder(order="sorted")
start = time.perf_counter()
decoded = {}
for path, cls in files:
    data = path.read_bytes()
    hashlib.sha256(data).hexdigest()
    decoded[path] = msgspec.json.Decoder(cls).decode_lines(data)
files_s = time.perf_counter() - start
start = time.perf_counter()
for path, cls in files:
    if cls is Answer:
        lines = canonical.encode_lines(decoded[path]).split(b"\\n")[:-1]
        [hashlib.sha256(line).hexdigest() for line in lines]
print(files_s, time.perf_counter() - start)
"""


def wall(cmd: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    with tempfile.TemporaryDirectory() as tmp:
        if "--suite" in sys.argv:
            suite = Path(sys.argv[sys.argv.index("--suite") + 1]).resolve()
        else:
            suite = make_suite(Path(tmp), 100_000)
        cwd = suite.parents[1]
        python = sys.executable
        figures: dict[str, list[float]] = {"start": [], "files": [], "hashes": [], "score": []}
        print(load())
        for _ in range(runs):
            figures["start"].append(wall([python, "-c", IMPORTS], cwd)[0])
            _, out = wall([python, "-c", DECODE, str(suite), *ARMS], cwd)
            files_s, hashes_s = map(float, out.split())
            figures["files"].append(files_s)
            figures["hashes"].append(hashes_s)
            out_dir = Path(tmp) / "out"
            out_dir.mkdir(exist_ok=True)
            figures["score"].append(wall(score_cmd(suite, out_dir), cwd)[0])
        med = {name: statistics.median(values) for name, values in figures.items()}
        floor = med["start"] + med["files"] + med["hashes"]
        print(
            f"interpreter and imports {med['start']:.2f} s, files read, hashed and decoded "
            f"(types only) {med['files']:.2f} s, answers' canonical hashes {med['hashes']:.2f} s: "
            f"floor {floor:.2f} s; the whole score {med['score']:.2f} s (target 4 s): the rest "
            f"{med['score'] - floor:.2f} s, of which 4 s leaves {4 - floor:.2f} s; "
            f"medians of {runs}; {load()}"
        )


if __name__ == "__main__":
    main()
