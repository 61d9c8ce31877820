"""Whole-process timings of `flightdeck knowledge score` and `flightdeck --help`.

Targets (issue 2): score on 40 questions x 3 arms with 10,000 resamples <= 1 s median;
`flightdeck --help` <= 0.3 s; 100,000 questions x 3 arms scored in <= 20 s with peak memory
<= 1.5 GiB; 100,000-line files validate in < 1 s.

    .venv/bin/python benchmarks/bench_score.py            # all
    .venv/bin/python benchmarks/bench_score.py --quick    # skip the 100,000-question run
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KINDS = ["decision-why", "blocker", "what-changed", "how-to", "who-owns"]
COMMIT = "c" * 40
ARMS = ["search", "projects", "retrieval"]


def make_suite(root: Path, n: int, *, seed: int = 1) -> Path:
    """A sealed suite of n questions with three arms, two raters each, real-looking spread."""
    from flightdeck.suite.repos import RepoSet
    from flightdeck.tasks.knowledge import seal

    rng = random.Random(seed)
    suite = root / "suites" / f"bench-{n}"
    (suite / "answers").mkdir(parents=True)
    (suite / "labels").mkdir()
    sha = lambda i: hashlib.sha256(str(i).encode()).hexdigest()  # noqa: E731
    with (suite / "questions.jsonl").open("w") as q, (suite / "keys.jsonl").open("w") as k:
        for i in range(n):
            q.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "question": f"Question {i}?",
                        "kind": KINDS[i % 5],
                        "as_of": {"sdlc": COMMIT},
                        "scope": [],
                    }
                )
                + "\n"
            )
            k.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "answer_key": "k",
                        "required_facts": ["f"],
                        "valid_sources": [{"uri": f"sdlc/docs/{i}.md", "sha256": sha(i)}],
                    }
                )
                + "\n"
            )
    seal(suite, repos=RepoSet({}), holdouts=root / "holdouts", unchecked=True)  # no sdlc repo here
    for a, arm in enumerate(ARMS):
        p_right = 0.4 + 0.2 * a
        with (
            (suite / "answers" / f"{arm}.jsonl").open("w") as ans,
            (suite / "labels" / f"{arm}.jsonl").open("w") as lab,
        ):
            for i in range(n):
                if rng.random() < 0.05:
                    continue  # missing answer
                cites = [
                    {
                        "uri": f"sdlc/docs/{i}.md#L1-L9",
                        "sha256": sha(i) if rng.random() < 0.8 else sha(-i),
                    }
                ]
                if rng.random() < 0.2:
                    cites.append({"uri": f"sdlc/docs/x{i}.md", "sha256": sha(i)})
                record = {"id": f"q{i}", "answer": f"answer {i}", "citations": cites}
                ans.write(json.dumps(record) + "\n")
                right = rng.random() < p_right
                for rater in ("ada", "bob"):
                    vote = right if rng.random() < 0.9 else not right
                    lab.write(
                        json.dumps(
                            {"id": f"q{i}", "rater": rater, "correct": vote, "unsupported": []}
                        )
                        + "\n"
                    )
        (suite / "answers" / f"{arm}.meta.json").write_text(
            json.dumps(
                {
                    "runner": "harness",
                    "by": "bench",
                    "date": "2026-11-30",
                    "model": "none",
                    "knowledge_snapshot": {"sdlc": [COMMIT]},
                }
            )
        )
    return suite


def flightdeck() -> list[str]:
    return [str(Path(sys.executable).with_name("flightdeck"))]


def score_cmd(suite: Path) -> list[str]:
    args = [*flightdeck(), "knowledge", "score", str(suite)]
    for arm in ARMS:
        args += ["--arm", arm]
    return [*args, "--baseline", "search", "--candidate", "retrieval", "--resamples", "10000"]


def timed(cmd: list[str], cwd: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        help_times = timed([*flightdeck(), "--help"], root, 10)
        print(f"flightdeck --help: median {statistics.median(help_times):.3f} s (target <= 0.3 s)")
        suite = make_suite(root, 40)
        t = timed(score_cmd(suite), root, 10)
        print(
            f"score 40 x 3 arms, 10,000 resamples: median {statistics.median(t):.3f} s "
            f"(min {min(t):.3f}, max {max(t):.3f}; target <= 1 s)"
        )
        if quick:
            return
        big = make_suite(root, 100_000)
        from flightdeck.suite.records import read_answers, read_keys, read_labels, read_questions

        start = time.perf_counter()
        qs = read_questions(big / "questions.jsonl")
        t_q = time.perf_counter() - start
        ids = [q.id for q in qs]
        timings = {"questions": t_q}
        for name, fn in [
            ("keys", lambda: read_keys(big / "keys.jsonl")),
            ("answers", lambda: read_answers(big / "answers" / "search.jsonl", ids)),
            ("labels (200,000 lines)", lambda: read_labels(big / "labels" / "search.jsonl", ids)),
        ]:
            start = time.perf_counter()
            fn()
            timings[name] = time.perf_counter() - start
        for name, secs in timings.items():
            print(f"validate 100,000-question {name}: {secs:.3f} s (target < 1 s)")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        subprocess.run(score_cmd(big), cwd=root, check=True, capture_output=True)
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(
            f"score 100,000 x 3 arms, 10,000 resamples: {elapsed:.1f} s, peak RSS "
            f"{max(peak, before) / 1024:.0f} MiB (targets <= 20 s, <= 1536 MiB)"
        )


if __name__ == "__main__":
    main()
