"""Pipelines for every kind of project, from params.yaml alone (#21), and manual scans (#21).

A project made by `flightdeck init` whose arms are only people's imports (no harness, so no
`traces/` or `runs/` folder ever exists), only harnesses, or both: a real `dvc repro` takes
each to a report, and a second `dvc repro` runs nothing. A manual `holdout canary-scan`
that finds nothing, committed, leaves a fresh clone's pipeline up to date (CI's check).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pipeline.project import Pipeline, git, ran_stages
from tests.pipeline.team import QUESTIONS, Team, build_team, flightdeck, person

SUITE = "kinds-v1"
PERSON = person(SUITE)
KINDS = {
    "people-only": ({}, {"chat-export": PERSON, "chat-two": PERSON | {"by": "Ada"}}),
    "harnesses-only": (
        {
            "lexical": "python -m flightdeck experiment agent repo-search",
            "windows": "python -m flightdeck experiment agent repo-search --passages window",
        },
        {},
    ),
    "both": (
        {"lexical": "python -m flightdeck experiment agent repo-search"},
        {"chat-export": PERSON},
    ),
}


def build(root: Path, home: Path, sources: Path, kind: str) -> Pipeline:
    harnesses, people = KINDS[kind]
    arms = [*harnesses, *people]
    votes = {arm: [(i + n) % 2 == 0 for i in range(len(QUESTIONS))] for n, arm in enumerate(arms)}
    team = Team(suite=SUITE, harnesses=harnesses, people=people, votes=votes)
    project, _ = build_team(root, home, sources, team)
    return project


@pytest.fixture(scope="module", params=list(KINDS))
def kind_project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    kind = request.param
    home = tmp_path_factory.mktemp("home")
    root = tmp_path_factory.mktemp(kind)
    project = build(root, home, tmp_path_factory.mktemp("sources"), kind)
    project.first_run = project.dvc("repro")
    project.commit("dvc repro")
    return kind, project


def test_repro_runs_each_arm_and_its_scan_then_nothing(kind_project) -> None:  # type: ignore[no-untyped-def]
    kind, project = kind_project
    harnesses, people = KINDS[kind]
    stages = ran_stages(project.first_run.stdout)
    expected = {"seal", "repo@app", "repo@infra", "score"}
    expected |= {f"run@{a}" for a in harnesses} | {f"canary-scan@{a}" for a in harnesses}
    expected |= {f"import@{a}" for a in people} | {f"canary-scan-import@{a}" for a in people}
    assert sorted(stages) == sorted(expected)
    assert stages[-1] == "score"
    assert (project.root / "traces").exists() == bool(harnesses)
    for arm in [*harnesses, *people]:
        summary = project.read_json(f"reports/{SUITE}.canary-scan/{arm}.json")
        assert isinstance(summary, dict)
        assert summary["clean"]
        assert summary["files"] >= 3  # answers, meta, and the run log and traces or the export
    metrics = project.read_json(f"metrics/{SUITE}.json")
    assert isinstance(metrics, dict)
    assert set(metrics["arms"]) == {*harnesses, *people}
    again = project.dvc("repro")
    assert ran_stages(again.stdout) == []
    assert project.git("status", "--porcelain") == ""


def test_a_manual_scan_leaves_a_fresh_clone_up_to_date(kind_project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, project = kind_project
    manifest = project.root / "holdouts" / "manifest.json"
    before = manifest.read_bytes()
    paths = [p for p in ("suites", "exports", "traces", "runs") if (project.root / p).exists()]
    scan = flightdeck(project.root, project.home, "holdout", "canary-scan", *paths)
    assert scan.returncode == 0, scan.stderr
    assert manifest.read_bytes() == before
    history = (project.root / "holdouts" / "scans.jsonl").read_text().splitlines()
    assert json.loads(history[-1])["hits"] == 0
    project.commit("a manual canary scan, on record")
    clone = Pipeline(tmp_path / "clone", project.home)
    git(tmp_path, "clone", "--quiet", str(project.root), str(clone.root))
    proc = clone.dvc("repro")
    assert ran_stages(proc.stdout) == []
    assert clone.git("status", "--porcelain") == ""
    status = clone.dvc("status")
    assert "up to date" in status.stdout
