"""The committed demo outputs are what the current code computes from the committed inputs.

`dvc repro` re-runs `score` only when its inputs change, not when the code that renders the
report does; this test catches a report, picture or metrics file left behind by a code change
(regenerate with `PATH=$PWD/.venv/bin:$PATH .venv/bin/dvc repro -f -s score` and commit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flightdeck.params import load_params
from flightdeck.project import Project
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.scoring.metrics import metrics_json
from flightdeck.scoring.report import markdown_report
from flightdeck.tasks.knowledge import compute_scores

ROOT = Path(__file__).parents[2]
SUITE = "knowledge-demo-v1"


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    params = load_params(ROOT / "params.yaml")
    return compute_scores(
        SuiteFolder(ROOT / "suites" / SUITE, ProjectPaths(params.root)),
        list(params.arms),
        params=params,
        repos=Project(params).repos,
        baseline="baseline-repo-search",
        candidate="baseline-projects",
    )


def test_committed_report_is_current(result) -> None:  # type: ignore[no-untyped-def]
    committed = (ROOT / "reports" / f"{SUITE}.md").read_text(encoding="utf-8")
    assert markdown_report(result, picture_name=f"{SUITE}.svg") == committed


def test_committed_metrics_are_current(result) -> None:  # type: ignore[no-untyped-def]
    committed = json.loads((ROOT / "metrics" / f"{SUITE}.json").read_text(encoding="utf-8"))
    assert metrics_json(result) == committed


def test_committed_picture_is_current(result, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from flightdeck.scoring.report import write_picture

    write_picture(result, tmp_path / "p.svg")
    assert (tmp_path / "p.svg").read_bytes() == (ROOT / "reports" / f"{SUITE}.svg").read_bytes()
