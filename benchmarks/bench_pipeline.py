"""How long the demo pipeline takes under `dvc repro` (issue 5).

Targets: `dvc repro` when nothing changed <= 1.5 s on the demo; the whole demo from a clean
clone, after install, <= 60 s.

Three measurements, each in a fresh clone of this repository's HEAD (what a user gets):

- ``noop``: `dvc repro` in a clone where nothing changed (every stage is skipped: the
  outputs are git-tracked), best and median of several runs after one warm-up;
- ``clone``: `git clone` and then `dvc repro`, end to end, the "fresh clone" path of
  `make repro` once the venv exists;
- ``scratch``: the whole demo computed from nothing, as the first `dvc repro` of a project
  that has only its inputs (suite unsealed, no answers, no outputs): seal, the repo-search
  arm's 16 trials, the person arm's import, the canary scan and the score.

Run from the project root, with the venv's bin first on PATH (as `make` sets it):

    PATH=$PWD/.venv/bin:$PATH .venv/bin/python -m benchmarks.bench_pipeline
    PATH=$PWD/.venv/bin:$PATH .venv/bin/python -m benchmarks.bench_pipeline --runs 10
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from tests.pipeline.project import BIN, ROOT, Pipeline, copy_inputs, git, ran_stages, tool_env


def _timed(argv: list[str], cwd: Path, home: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, env=tool_env(home), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc.stdout


def bench_noop(tmp: Path, runs: int) -> dict[str, float]:
    clone = tmp / "noop"
    git(tmp, "clone", "--quiet", str(ROOT), str(clone))
    _, out = _timed([str(BIN / "dvc"), "repro"], clone, tmp)  # warm-up; must skip all
    if ran_stages(out):
        raise SystemExit(f"HEAD is not up to date: dvc repro ran {ran_stages(out)}")
    times = [_timed([str(BIN / "dvc"), "repro"], clone, tmp)[0] for _ in range(runs)]
    return {"best": min(times), "median": statistics.median(times)}


def bench_clone(tmp: Path) -> float:
    start = time.perf_counter()
    git(tmp, "clone", "--quiet", str(ROOT), str(tmp / "clone"))
    _timed([str(BIN / "dvc"), "repro"], tmp / "clone", tmp)
    return time.perf_counter() - start


def bench_scratch(tmp: Path) -> tuple[float, list[str]]:
    root = tmp / "scratch"
    root.mkdir()
    copy_inputs(ROOT, root)
    project = Pipeline(root, tmp)
    project.git("init", "--quiet", "--initial-branch=main")
    project.dvc("init", "--quiet")
    project.commit("inputs")
    elapsed, out = _timed([str(BIN / "dvc"), "repro"], root, tmp)
    return elapsed, ran_stages(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed no-op runs [5]")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as name:
        tmp = Path(name)
        noop = bench_noop(tmp, args.runs)
        clone = bench_clone(tmp)
        scratch, stages = bench_scratch(tmp)
    print(f"dvc repro, nothing changed: best {noop['best']:.2f} s, median {noop['median']:.2f} s")
    print(f"git clone + dvc repro (all up to date): {clone:.2f} s")
    print(f"whole demo from scratch ({len(stages)} stages: {', '.join(stages)}): {scratch:.1f} s")


if __name__ == "__main__":
    main()
