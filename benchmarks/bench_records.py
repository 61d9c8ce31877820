"""In-process timings of the suite-file readers on 100,000-line files.

Target (issue 9): a 100,000-line file validates in < 1 s. Also timed: the same file with one
bad line at the very end, which makes the reader decode line by line to name the line.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_records.py [--runs 5]

Wall times swing with the machine's load; the CPU time of the process is printed beside them.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.suite.records import (
    CANARY_PREFIX,
    KINDS,
    Canaries,
    read_answers,
    read_keys,
    read_labels,
    read_questions,
)

N = 100_000
COMMIT = "c" * 40


def _sha(i: int) -> str:
    return hashlib.sha256(str(i).encode()).hexdigest()


def records(n: int) -> dict[str, list[dict[str, object]]]:
    """One suite's worth of valid records, shaped like bench_score.py's (two raters)."""
    questions, keys, answers, labels = [], [], [], []
    for i in range(n):
        qid = f"q{i}"
        questions.append(
            {
                "id": qid,
                "question": f"Question {i}?",
                "kind": KINDS[i % 5],
                "as_of": {"sdlc": COMMIT},
                "scope": ["sdlc/docs/**"] if i % 3 else [],
            }
        )
        keys.append(
            {
                "id": qid,
                "answer_key": "k",
                "required_facts": ["f", "g"],
                "valid_sources": [{"uri": f"sdlc/docs/{i}.md", "sha256": _sha(i)}],
                "canary": CANARY_PREFIX + hashlib.md5(qid.encode()).hexdigest(),  # noqa: S324
            }
        )
        cites = [{"uri": f"sdlc/docs/{i}.md#L1-L9", "sha256": _sha(i)}]
        if i % 5 == 0:
            cites.append({"uri": f"https://wiki.example/{i}", "sha256": _sha(-i)})
        answers.append({"id": qid, "answer": f"answer {i} é", "citations": cites})
        for rater in ("ada", "bob"):
            labels.append(
                {
                    "id": qid,
                    "rater": rater,
                    "correct": (i + len(rater)) % 3 == 0,
                    "unsupported": [f"sdlc/docs/{i}.md#L1-L9"] if i % 7 == 0 else [],
                }
            )
    return {"questions": questions, "keys": keys, "answers": answers, "labels": labels}


def best_of(runs: int, fn: Callable[[], object]) -> tuple[float, float, float]:
    """Best and median wall time, and the best CPU time (less swayed by other processes)."""
    times, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(times), statistics.median(times), min(cpu)


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    ids = [f"q{i}" for i in range(N)]
    data = records(N)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        readers: dict[str, Callable[[Path], object]] = {
            "questions": read_questions,
            "keys": lambda p: read_keys(p, canaries=Canaries.REQUIRED),
            "answers": lambda p: read_answers(p, ids),
            "labels": lambda p: read_labels(p, ids),
        }
        for name, reader in readers.items():
            good = root / f"{name}.jsonl"
            lines = [json.dumps(r) for r in data[name]]
            good.write_text("\n".join(lines) + "\n")
            bad = root / f"{name}.bad.jsonl"
            bad.write_text("\n".join(lines) + '\n{"id": 5}\n')

            def expect_error(path: Path = bad, reader: Callable[[Path], object] = reader) -> None:
                try:
                    reader(path)
                except InputError:
                    return
                raise AssertionError("the bad line was accepted")

            ok_min, ok_median, ok_cpu = best_of(runs, lambda p=good, r=reader: r(p))
            bad_min, bad_median, bad_cpu = best_of(runs, expect_error)
            print(
                f"{name} ({len(lines):,} lines): valid {ok_min:.3f} s best, {ok_median:.3f} s "
                f"median, {ok_cpu:.3f} s CPU; bad last line {bad_min:.3f} s best, "
                f"{bad_median:.3f} s median, {bad_cpu:.3f} s CPU (target < 1 s)"
            )


if __name__ == "__main__":
    main()
