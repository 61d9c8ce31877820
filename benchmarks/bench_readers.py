"""In-process timings of the four suite readers on a 100,000-question suite, old code beside new.

Target (issue 23, item 5): the readers of one ``knowledge score`` together at least 2x faster
than before the column checks (answers and labels <= 0.2 s a file, keys <= 0.25 s,
questions <= 0.13 s on a quiet machine). Each source tree given is timed in its own
subprocess, the trees taking turns round by round, so the machine's load falls on both alike;
medians are printed with the load average.

    # a suite as bench_score.py builds it (sealed; 3 answer and 3 label files)
    .venv/bin/python -c "import sys; sys.path.insert(0, 'benchmarks'); \
        from bench_score import make_suite; from pathlib import Path; \
        make_suite(Path('/tmp/rd'), 100_000)"
    git archive <old commit> src | tar -x -C /tmp/old
    .venv/bin/python benchmarks/bench_readers.py /tmp/rd/suites/bench-100000 \
        --src /tmp/old/src --src src --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

READERS = ("questions", "keys", "answers", "labels")


def _time_once(suite: Path) -> dict[str, float]:
    """Seconds each reader takes, in this process (whatever ``flightdeck`` it imports)."""
    from flightdeck.suite.records import (
        Canaries,
        read_answers,
        read_keys,
        read_labels,
        read_questions,
    )

    arm = sorted((suite / "answers").glob("*.jsonl"))[0].stem
    paths = {
        "questions": suite / "questions.jsonl",
        "keys": suite / "keys.jsonl",
        "answers": suite / "answers" / f"{arm}.jsonl",
        "labels": suite / "labels" / f"{arm}.jsonl",
    }
    blobs = {name: path.read_bytes() for name, path in paths.items()}
    n = blobs["questions"].count(b"\n")
    ids = [f"q{i}" for i in range(n)]
    calls = {
        "questions": lambda: read_questions(paths["questions"], data=blobs["questions"]),
        "keys": lambda: read_keys(paths["keys"], canaries=Canaries.REQUIRED, data=blobs["keys"]),
        "answers": lambda: read_answers(paths["answers"], ids, data=blobs["answers"]),
        "labels": lambda: read_labels(paths["labels"], ids, data=blobs["labels"]),
    }
    out: dict[str, float] = {}
    for name in READERS:
        start = time.perf_counter()
        records = calls[name]()
        out[name] = time.perf_counter() - start
        del records
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--src", action="append", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_time_once(args.suite)))
        return
    runs: dict[Path, list[dict[str, float]]] = {src: [] for src in args.src}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for src in args.src:
            env = {**os.environ, "PYTHONPATH": str(src.resolve())}
            child = [sys.executable, __file__, str(args.suite), "--src", str(src), "--child"]
            done = subprocess.run(child, env=env, check=True, capture_output=True, text=True)
            runs[src].append(json.loads(done.stdout))
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) over the rounds: {min(loads):.2f}-{max(loads):.2f}")
    medians = {
        src: {name: statistics.median(r[name] for r in rs) for name in READERS}
        for src, rs in runs.items()
    }
    for src, median in medians.items():
        row = ", ".join(f"{name} {median[name]:.3f}" for name in READERS)
        score = median["questions"] + median["keys"] + 3 * (median["answers"] + median["labels"])
        print(f"{src}: median s: {row}; one score's reads (q + k + 3 a + 3 l) {score:.3f}")
    if len(args.src) == 2:
        old, new = (medians[src] for src in args.src)
        ratios = ", ".join(f"{name} {old[name] / new[name]:.2f}x" for name in READERS)
        total = sum(old.values()) / sum(new.values())
        print(
            f"speed-up {args.src[1]} over {args.src[0]}: {ratios}; the four together {total:.2f}x"
        )


if __name__ == "__main__":
    main()
