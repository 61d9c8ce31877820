"""The built-in repo-search agent over a generated 5,000-file repository (issue 3).

Target: at most 2 s to answer one question, as a trial pays it: a fresh
``python -m flightdeck experiment agent repo-search`` process (interpreter start, imports,
reading every file, ranking, answering). Also reported: the same search in-process, and the
one-time cost of materialising the workspace from git (once per run, shared by trials).

    .venv/bin/python -m benchmarks.bench_repo_search [--files 5000] [--questions 10]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.gitrepo import make_git_repo

from flightdeck.arms.agents.repo_search import search
from flightdeck.arms.workspace import WorkspaceCache
from flightdeck.suite.records import Question
from flightdeck.suite.repos import RepoSet


def make_files(count: int, seed: int = 0) -> dict[str, str]:
    """Markdown and source files of 10-150 lines, words drawn from a Zipf-like vocabulary."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choices(letters, k=rng.randint(2, 11))) for _ in range(12_000)]
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocabulary))))
    folders = ["docs/adr", "docs/runbooks", "docs/design", "src/api", "src/core", "tests"]
    files = {}
    for i in range(count):
        folder = f"{folders[i % len(folders)]}/part{i % 40:02d}"
        suffix = ".md" if folder.startswith("docs") else ".py"
        lines = []
        for _ in range(rng.randint(10, 150)):
            words = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(2, 14))
            lines.append(" ".join(words))
        files[f"{folder}/file{i:05d}{suffix}"] = "\n".join(lines) + "\n"
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--questions", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(1)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = make_files(args.files)
        size = sum(len(text) for text in files.values())
        (commit,) = make_git_repo(root / "sdlc", [files])
        question = Question("q", "?", "how-to", {"sdlc": commit}, ())
        cache = WorkspaceCache(RepoSet({"sdlc": root / "sdlc"}, root / "cache"), root / "ws")
        started = time.perf_counter()
        workspace = cache.workspace(question)
        built = time.perf_counter() - started
        print(f"{args.files} files, {size / 1e6:.1f} MB; workspace built from git in {built:.2f} s")

        names = sorted(files)
        asked = []
        for _ in range(args.questions):
            line = rng.choice(files[rng.choice(names)].splitlines()).split()
            asked.append("How does " + " ".join(rng.sample(line, min(3, len(line)))) + " work?")
        in_process, whole = [], []
        for text in asked:
            started = time.perf_counter()
            result = search(workspace, text)
            in_process.append(time.perf_counter() - started)
            assert result.citations, text
            task = json.dumps({"id": "q", "question": text})
            env = dict(os.environ, FLIGHTDECK_TASK=task, FLIGHTDECK_WORKSPACE=str(workspace))
            argv = [sys.executable, "-m", "flightdeck", "experiment", "agent", "repo-search"]
            started = time.perf_counter()
            proc = subprocess.run(argv, env=env, capture_output=True, check=True)
            whole.append(time.perf_counter() - started)
            assert json.loads(proc.stdout)["citations"] == result.to_json()["citations"]
        cache.close()
    for label, times in (("in-process search()", in_process), ("whole agent process", whole)):
        print(
            f"{label}: median {statistics.median(times):.2f} s, max {max(times):.2f} s "
            f"over {len(times)} questions"
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end (target: whole process <= 2 s)")


if __name__ == "__main__":
    main()
