"""Runner overhead and throughput of `flightdeck experiment run` (issue 3).

Targets: at most 50 ms per trial beyond the harness itself, measured with a no-op harness
over 1,000 trials; 200 trials of a harness that sleeps 0.1 s finish in at most 12 s with
2 jobs.

Overhead is the runner's wall time minus the wall time of starting the same harness the
same number of times, one after another, with the same stdin, outputs to files and its own
session (what any runner must pay), divided by the number of trials. Run from the project
root:

    .venv/bin/python -m benchmarks.bench_runner            # both
    .venv/bin/python -m benchmarks.bench_runner --quick    # 200 no-op trials instead of 1,000
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.synthetic import load_line, synthetic_suite
from tests.builders import project_repos

from flightdeck.arms.runner import RunConfig, run_experiment

RESULT = json.dumps({"answer": "noop", "citations": []})
NOOP = shlex.join(["sh", "-c", f"cat >/dev/null; printf '%s\\n' '{RESULT}'"])
SLEEPER = shlex.join(["sh", "-c", f"cat >/dev/null; sleep 0.1; printf '%s\\n' '{RESULT}'"])


def make_project(root: Path, trials: int) -> tuple[Path, dict[str, Path]]:
    files = {f"docs/page{i}.md": f"# Page {i}\n\nText of page {i}.\n" for i in range(50)}
    questions = [(f"q{i:05d}", f"What does page {i % 50} say?") for i in range(trials)]
    made = synthetic_suite(
        root, f"bench-{trials}", files=files, questions=questions, scope=["sdlc/docs/**"]
    )
    return made.suite, {"sdlc": made.repo}


def timed_run(root: Path, trials: int, command: str, jobs: int, arm: str) -> float:
    suite, repos = make_project(root / arm, trials)
    config = RunConfig(suite, arm, command, root=root / arm, jobs=jobs)
    # opens nothing yet: the timed run opens the repositories
    repo_set = project_repos(config.root, repos)
    started = time.perf_counter()
    result = run_experiment(config, repos=repo_set)
    elapsed = time.perf_counter() - started
    assert not result.failed, result.failed[:3]
    assert result.answered == trials
    return elapsed


def bare_harness(root: Path, trials: int, command: str) -> float:
    """The same harness started ``trials`` times in a row with nothing around it."""
    argv = shlex.split(command)
    task = root / "task.json"
    task.write_text(json.dumps({"id": "q", "question": "?"}))
    started = time.perf_counter()
    for _ in range(trials):
        with task.open("rb") as stdin, (root / "out").open("wb") as out:
            subprocess.run(argv, stdin=stdin, stdout=out, start_new_session=True, check=True)
    return time.perf_counter() - started


def bare_in_parallel(root: Path, trials: int, command: str, jobs: int) -> float:
    """The floor for ``jobs`` workers: the bare harness, trials / jobs times in each thread."""
    folders = [root / str(i) for i in range(jobs)]
    for folder in folders:
        folder.mkdir(parents=True)
    threads = [
        threading.Thread(target=bare_harness, args=(folder, trials // jobs, command))
        for folder in folders
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best counts")
    args = parser.parse_args()
    trials = 200 if args.quick else 1000
    print(load_line("start"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare: list[float] = []
        runs: dict[int, list[float]] = {1: [], 2: []}
        for attempt in range(args.repeat):  # interleaved, so a busy moment hits both
            bare.append(bare_harness(root, trials, NOOP))
            for jobs in runs:
                runs[jobs].append(timed_run(root, trials, NOOP, jobs, f"noop-j{jobs}-{attempt}"))
        best_bare = min(bare)
        print(f"bare no-op harness x{trials}: {1000 * best_bare / trials:.1f} ms each")
        for jobs, times in runs.items():
            best = min(times)
            print(
                f"runner, no-op harness, {trials} trials, --jobs {jobs}: {best:.2f} s, "
                f"{1000 * best / trials:.1f} ms/trial wall; overhead beyond the harness "
                f"{1000 * (best * jobs - best_bare) / trials:.1f} ms/trial of worker time"
            )
        sleeps, floors = [], []
        for i in range(args.repeat):
            floors.append(bare_in_parallel(root / f"floor-{i}", 200, SLEEPER, 2))
            sleeps.append(timed_run(root, 200, SLEEPER, 2, f"sleep-j2-{i}"))
        print(
            f"runner, sleep 0.1 s harness, 200 trials, --jobs 2: best {min(sleeps):.2f} s, "
            f"worst {max(sleeps):.2f} s (target <= 12 s); the bare harness 100 times in each "
            f"of 2 threads: best {min(floors):.2f} s, worst {max(floors):.2f} s"
        )
    print(load_line("the end"))


if __name__ == "__main__":
    main()
