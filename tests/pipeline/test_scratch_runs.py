"""Scratch runs never make the committed pipeline stale (#21).

A scratch run (`experiment run --scratch`, or an arm params.yaml's pipeline does not name)
writes its answers, meta, run log and traces under .flightdeck/scratch/<suite>/, which no
stage depends on and `flightdeck init` ignores in git. The test runs one in a copy of the
built demo pipeline, then checks that nothing tracked changed and that `dvc repro` is a
no-op there and on a fresh clone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.pipeline.project import BIN, Pipeline, git, ran_stages, tool_env

SUITE = "suites/knowledge-demo-v1"
SCRATCH = Path(".flightdeck/scratch/knowledge-demo-v1")
HARNESS = "python -m flightdeck experiment agent repo-search"


def run(project: Pipeline, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "flightdeck"), "experiment", "run", SUITE, "--harness", HARNESS, *args],
        cwd=project.root,
        env=tool_env(project.home),
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_scratch_run_leaves_the_pipeline_up_to_date(
    pipeline_project: Pipeline, tmp_path: Path
) -> None:
    root = pipeline_project.root
    (root / ".gitignore").write_text(".flightdeck/\n")  # as `flightdeck init` writes it
    pipeline_project.commit("ignore the project cache, as init does")
    head = pipeline_project.git("rev-parse", "HEAD")

    # an arm params.yaml does not name: a scratch run by itself
    auto = run(pipeline_project, "--arm", "try-passages", "--sandbox", "none", "--jobs", "1")
    assert auto.returncode == 0, auto.stderr
    assert "scratch run: try-passages writes under" in auto.stderr
    # and one asked for with --scratch
    forced = run(pipeline_project, "--arm", "try-windows", "--scratch", "--sandbox", "none")
    assert forced.returncode == 0, forced.stderr

    for arm in ("try-passages", "try-windows"):
        answers = root / SCRATCH / "answers" / f"{arm}.jsonl"
        assert len(answers.read_text().splitlines()) == 16
        assert json.loads((root / SCRATCH / "answers" / f"{arm}.meta.json").read_text())
        assert (root / SCRATCH / "runs" / f"{arm}.jsonl").is_file()
        assert any((root / SCRATCH / "traces" / arm).iterdir())
    assert not (root / SUITE / "answers" / "try-passages.jsonl").exists()
    assert not (root / "traces" / "knowledge-demo-v1" / "try-passages").exists()
    assert not (root / "runs" / "knowledge-demo-v1" / "try-passages.jsonl").exists()
    assert pipeline_project.git("status", "--porcelain") == ""

    # the scratch arm is there for people who want it: status lists it, not needed to score
    status = subprocess.run(
        [str(BIN / "flightdeck"), "knowledge", "status", SUITE, "--json"],
        cwd=root,
        env=tool_env(pipeline_project.home),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "try-passages" in status.stdout

    proc = pipeline_project.dvc("repro")
    assert ran_stages(proc.stdout) == []
    assert pipeline_project.git("status", "--porcelain") == ""

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(root), str(clone))
    assert git(clone, "rev-parse", "HEAD") == head
    fresh = Pipeline(clone, pipeline_project.home).dvc("repro")
    assert ran_stages(fresh.stdout) == []
    assert "Data and pipelines are up to date." in fresh.stdout
