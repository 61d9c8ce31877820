"""The demo pipeline under a real `dvc repro`, in a temporary git repository.

One full run (seal, both arms, canary scan, score) happens once per session in
``built_pipeline``; each test below works on its own copy of the committed result.
"""

from __future__ import annotations

import json
import re

from tests.pipeline.project import Pipeline, ran_stages

SUITE = "suites/knowledge-demo-v1"
METRICS = "metrics/knowledge-demo-v1.json"
ARMS = {"baseline-repo-search", "baseline-projects"}


def _set_param(project: Pipeline, name: str, value: str) -> None:
    params = project.root / "params.yaml"
    text, count = re.subn(
        rf"^{name}:.*$", f"{name}: {value}", params.read_text(), count=1, flags=re.M
    )
    assert count == 1, f"{name} not in params.yaml"
    params.write_text(text)


def test_first_repro_runs_every_stage_in_order(built_pipeline: Pipeline) -> None:
    assert built_pipeline.first_run is not None
    stages = ran_stages(built_pipeline.first_run.stdout)
    assert sorted(stages) == sorted(
        [
            "seal",
            "repo@sdlc",
            "run@baseline-repo-search",
            "run@repo-search-passages",
            "import@baseline-projects",
            "canary-scan@baseline-repo-search",
            "canary-scan@repo-search-passages",
            "canary-scan-import@baseline-projects",
            "score",
        ]
    )
    assert stages[0] == "seal"
    for arm in ("baseline-repo-search", "repo-search-passages"):
        assert stages.index(f"canary-scan@{arm}") > stages.index(f"run@{arm}")
    scan = "canary-scan-import@baseline-projects"
    assert stages.index(scan) > stages.index("import@baseline-projects")
    assert stages[-1] == "score"


def test_first_repro_writes_the_sealed_suite_metrics_and_report(built_pipeline: Pipeline) -> None:
    root = built_pipeline.root
    keys = (root / SUITE / "keys.jsonl").read_text().splitlines()
    assert all(json.loads(line)["canary"] for line in keys)
    assert (root / SUITE / "manifest.json").is_file()
    scans = root / "reports/knowledge-demo-v1.canary-scan"
    for arm, files in (("baseline-repo-search", 3), ("baseline-projects", 3)):
        summary = json.loads((scans / f"{arm}.json").read_text())
        assert summary["clean"]
        assert summary["files"] >= files  # answers, meta, run log + traces / the export
    metrics = built_pipeline.read_json(METRICS)
    assert isinstance(metrics, dict)
    assert set(metrics["arms"]) == ARMS
    for arm in ARMS:
        assert metrics["arms"][arm]["n"] == 16
        assert metrics["arms"][arm]["answered"] == 16
    comparison = metrics["comparisons"]["baseline-projects_vs_baseline-repo-search"]
    assert set(comparison) >= {"correctness", "citation_validity"}
    report = (root / "reports/knowledge-demo-v1.md").read_text()
    assert "knowledge-demo-v1.svg" in report
    assert (root / "reports/knowledge-demo-v1.svg").read_text().lstrip().startswith("<?xml")
    ledger = (root / SUITE / "scores.jsonl").read_text().splitlines()
    assert {json.loads(line)["arm"] for line in ledger} == ARMS


def test_second_repro_is_up_to_date(pipeline_project: Pipeline) -> None:
    proc = pipeline_project.dvc("repro")
    assert ran_stages(proc.stdout) == []
    assert "Data and pipelines are up to date." in proc.stdout
    assert pipeline_project.git("status", "--porcelain") == ""


def test_seed_change_reruns_only_score(pipeline_project: Pipeline) -> None:
    _set_param(pipeline_project, "seed", "7")
    proc = pipeline_project.dvc("repro")
    assert ran_stages(proc.stdout) == ["score"]
    changed = pipeline_project.git("status", "--porcelain").splitlines()
    # the answers and traces are untouched: only params, the lock and score's outputs move
    # (score reads the repositories for the fabricated split, #21: the project cache,
    # .flightdeck/, which `flightdeck init` ignores in git, may get a bundle's clone)
    changed = [line for line in changed if not line.split(maxsplit=1)[1].startswith(".flightdeck/")]
    assert {line.split(maxsplit=1)[1] for line in changed} <= {
        "params.yaml",
        "dvc.lock",
        METRICS,
        "reports/knowledge-demo-v1.md",
        "reports/knowledge-demo-v1.svg",
    }


def test_metrics_diff_shows_the_changed_metric_keys(pipeline_project: Pipeline) -> None:
    _set_param(pipeline_project, "confidence", "0.8")
    pipeline_project.dvc("repro")
    proc = pipeline_project.dvc("metrics", "diff", "--json")
    diff = json.loads(proc.stdout)[METRICS]
    # a narrower interval: the Wilson bounds of every arm move, the point estimates do not
    for arm in ARMS:
        for key in ("lo", "hi"):
            change = diff[f"arms.{arm}.correctness.{key}"]
            assert change["old"] != change["new"]
        assert f"arms.{arm}.correctness.value" not in diff
    assert (diff["settings.confidence"]["old"], diff["settings.confidence"]["new"]) == (0.95, 0.8)


def test_editing_a_sealed_suite_fails_with_the_seal_message(pipeline_project: Pipeline) -> None:
    questions = pipeline_project.root / SUITE / "questions.jsonl"
    questions.write_text(questions.read_text().replace("Who owns", "Who maintains", 1))
    before = (pipeline_project.root / METRICS).read_bytes()
    proc = pipeline_project.dvc("repro", check=False)
    assert proc.returncode != 0
    assert ran_stages(proc.stdout) == ["seal"]
    assert (
        f"error: {SUITE}/questions.jsonl: changed after sealing (it no longer matches "
        "manifest.json); a changed question is a new suite version" in proc.stderr
    )
    assert "Traceback" not in proc.stderr
    assert (pipeline_project.root / METRICS).read_bytes() == before
