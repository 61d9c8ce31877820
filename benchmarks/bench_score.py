"""Whole-process timings of `flightdeck knowledge score` and `flightdeck --help`.

Targets (issue 23, item 5): score on 100,000 questions x 3 arms <= 4 s with peak memory
<= 1 GiB, and on 40 questions x 3 arms <= 0.6 s, each a whole process with the comparison and
10,000 resamples; `flightdeck --help` <= 0.3 s; 100,000-line files validate in < 1 s. The
machine is shared (2 cores, 8 engineers), so every figure is a median over runs, printed with
the load average (`uptime`) and the process's own CPU seconds (user + system, from wait4)
beside the wall time; the frame scoring is also given as a ratio to the plain-Python rules
(tests/citations_reference.py) measured in the same run on the same records.

    .venv/bin/python benchmarks/bench_score.py              # all (3 runs of the big score)
    .venv/bin/python benchmarks/bench_score.py --quick      # skip the 100,000-question run
    .venv/bin/python benchmarks/bench_score.py --runs 5     # runs of the big score
    .venv/bin/python benchmarks/bench_score.py --keep DIR   # also leave the 100,000 outputs in DIR
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

KINDS = ["decision-why", "blocker", "what-changed", "how-to", "who-owns"]
COMMIT = "c" * 40
ARMS = ["search", "projects", "retrieval"]


def make_suite(root: Path, n: int, *, seed: int = 1) -> Path:
    """A sealed suite of n questions with three arms, two raters each, real-looking spread."""
    from flightdeck.project.modes import ReposNotAtHand
    from flightdeck.project.suite_folder import SuiteFolder
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
    # no sdlc repository here: sealed --unchecked
    seal(
        SuiteFolder(suite),
        repos=RepoSet({}, root / "cache"),
        holdouts=root / "holdouts",
        repos_not_at_hand=ReposNotAtHand.SKIP,
    )
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
                    flag = rng.random()  # a tenth flag the file (spanless), a twentieth the span
                    unsupported = (
                        [f"sdlc/docs/{i}.md"]
                        if flag < 0.1
                        else [cites[0]["uri"]]
                        if flag < 0.15
                        else []
                    )
                    lab.write(
                        json.dumps(
                            {
                                "id": f"q{i}",
                                "rater": rater,
                                "correct": vote,
                                "unsupported": unsupported,
                            }
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


def score_cmd(suite: Path, out: Path | None = None) -> list[str]:
    args = [*flightdeck(), "knowledge", "score", str(suite)]
    for arm in ARMS:
        args += ["--arm", arm]
    if out is not None:
        args += ["--json", str(out / "metrics.json"), "--report", str(out / "report.md")]
        args += ["--results", str(out / "results")]
    return [*args, "--baseline", "search", "--candidate", "retrieval", "--resamples", "10000"]


def load() -> str:
    """The load average as `uptime` prints it: other engineers share these two cores."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


@dataclass(frozen=True)
class Run:
    """One whole process: wall seconds, CPU seconds (user + system), peak RSS in MiB."""

    wall: float
    cpu: float
    peak_mib: float


def timed(cmd: list[str], cwd: Path, runs: int) -> list[Run]:
    """Each run as its own child, its CPU and peak memory read from wait4 (that child only)."""
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read() if child.stderr else b""
        if child.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {child.returncode}: {stderr.decode()}")
        out.append(Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return out


def summary(runs: list[Run]) -> str:
    walls, cpus = [r.wall for r in runs], [r.cpu for r in runs]
    return (
        f"median {statistics.median(walls):.3f} s wall (min {min(walls):.3f}, max "
        f"{max(walls):.3f}), median {statistics.median(cpus):.3f} CPU s (min {min(cpus):.3f}), "
        f"peak RSS {max(r.peak_mib for r in runs):.0f} MiB, {len(runs)} runs"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    big_runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(load())
        print(f"flightdeck --help: {summary(timed([*flightdeck(), '--help'], root, 10))} "
              "(target <= 0.3 s)")  # fmt: skip
        small = root / "small"
        small.mkdir()
        suite = make_suite(small, 40)
        print(f"score 40 x 3 arms, 10,000 resamples: {summary(timed(score_cmd(suite), small, 10))}"
              f" (target <= 0.6 s); {load()}")  # fmt: skip
        if quick:
            return
        big = make_suite(root, 100_000)
        out = Path(sys.argv[sys.argv.index("--keep") + 1]) if "--keep" in sys.argv else None
        runs = timed(score_cmd(big, out), root, big_runs)
        print(
            f"score 100,000 x 3 arms, 10,000 resamples: {summary(runs)} (targets <= 4 s, "
            f"<= 1024 MiB); {load()}"
        )
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
        phases(big)


def phases(suite: Path) -> None:
    """In-process: the readers, the rules as frames and as plain Python, the results files."""
    from flightdeck.files.jsonl import encode_lines
    from flightdeck.project.suite_folder import SuiteFolder
    from flightdeck.scoring import tables
    from flightdeck.scoring.results import encode_results
    from flightdeck.scoring.rules import score_arm
    from flightdeck.suite.records import Canaries, load_suite_files, read_answers, read_labels

    paths = SuiteFolder(suite).opened()
    questions, key_list = load_suite_files(paths, canaries=Canaries.REQUIRED)
    keys = {k.id: k for k in key_list}
    ids = [q.id for q in questions]
    arms = {
        arm: (
            {a.id: a for a in read_answers(paths.answers(arm), ids)},
            read_labels(paths.labels(arm), ids),
        )
        for arm in ARMS
    }
    clock = {"frames": 0.0, "python": 0.0, "encode frames": 0.0, "encode rows": 0.0}
    start = time.process_time()
    shared = tables.suite_tables(questions, keys)
    clock["frames"] += time.process_time() - start
    for arm, (answers, labels) in arms.items():
        start = time.process_time()
        scored = score_arm(arm, questions, keys, answers, labels, confidence=0.95, suite=shared)
        clock["frames"] += time.process_time() - start
        start = time.process_time()
        reference = plain_python_rules(questions, keys, answers, labels)
        clock["python"] += time.process_time() - start
        start = time.process_time()
        data = encode_results(scored.table)
        clock["encode frames"] += time.process_time() - start
        start = time.process_time()
        rows = encode_lines(reference)
        clock["encode rows"] += time.process_time() - start
        assert data == rows, f"{arm}: the frames and the plain-Python rules disagree"
    frames = clock["frames"] + clock["encode frames"]
    python = clock["python"] + clock["encode rows"]
    print(
        f"rules and results files, 3 x 100,000 answers: frames {frames:.2f} CPU s (rules "
        f"{clock['frames']:.2f}, file {clock['encode frames']:.2f}), plain Python {python:.2f} "
        f"CPU s (rules and records {clock['python']:.2f}, msgspec {clock['encode rows']:.2f}): "
        f"{python / frames:.1f}x; identical bytes; {load()}"
    )


def plain_python_rules(questions, keys, answers, labels):  # type: ignore[no-untyped-def]
    """The rules as the first version wrote them, a loop per question: the ratio's baseline."""
    sys.path.insert(0, str(Path(__file__).parents[1]))  # the oracle lives in tests/
    from tests.citations_reference import classify_citation, valid_hashes

    by_id: dict[str, list] = {}  # type: ignore[type-arg]
    for label in labels:
        by_id.setdefault(label.id, []).append(label)
    rows = []
    for q in questions:
        answer = answers.get(q.id)
        if answer is None:
            rows.append(
                {"id": q.id, "kind": q.kind, "answered": False, "votes": {}, "majority": False}
                | {"correct": False, "citations": [], "citation_valid": False}
            )
            continue
        q_labels = by_id.get(q.id, [])
        votes = {lb.rater: lb.correct for lb in q_labels}
        yes = sum(votes.values())
        correct = yes > len(votes) - yes
        flagged = [uri for lb in q_labels for uri in lb.unsupported]
        table = valid_hashes(keys[q.id].valid_sources)
        classes = [(c.uri, str(classify_citation(c, table, flagged))) for c in answer.citations]
        rows.append(
            {"id": q.id, "kind": q.kind, "answered": True, "votes": votes, "majority": correct}
            | {
                "correct": correct,
                "citations": [{"uri": u, "class": k} for u, k in classes],
                "citation_valid": bool(classes) and all(k == "valid" for _, k in classes),
            }
        )
    return rows


if __name__ == "__main__":
    main()
