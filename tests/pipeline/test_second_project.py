"""A second project made by `flightdeck init`, driven by params.yaml alone (#15).

Another suite, other arm names, two repositories (git bundles): the team writes params.yaml,
its suite (keys without sha256, which seal computes), a person's `;`-separated export and the
raters' labels, and never touches dvc.yaml. A real `dvc repro` takes it to a report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pipeline.project import Pipeline, ran_stages
from tests.pipeline.team import Team, build_team, flightdeck, person

SUITE = "team-gold-v1"
TEAM = Team(
    suite=SUITE,
    harnesses={"lexical": "python -m flightdeck experiment agent repo-search"},
    people={"chat-export": person(SUITE)},
    votes={"lexical": [True, False, False, True], "chat-export": [True] * 3 + [False]},
    gitignore="node_modules/\n",
    scaffold=True,
)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    home = tmp_path_factory.mktemp("home")
    sources = tmp_path_factory.mktemp("sources")
    root = tmp_path_factory.mktemp("team")
    project, dvc_yaml = build_team(root, home, sources, TEAM)
    project.first_run = project.dvc("repro")
    project.commit("dvc repro")
    assert (root / "dvc.yaml").read_bytes() == dvc_yaml  # never edited
    return project


def test_repro_runs_every_stage_of_the_params(team: Pipeline) -> None:
    assert team.first_run is not None
    stages = ran_stages(team.first_run.stdout)
    assert sorted(stages) == sorted(
        [
            "seal",
            "repo@app",
            "repo@infra",
            "run@lexical",
            "import@chat-export",
            "canary-scan@lexical",
            "canary-scan-import@chat-export",
            "score",
        ]
    )
    assert stages[-1] == "score"


def test_the_report_compares_the_params_arms(team: Pipeline) -> None:
    metrics = team.read_json(f"metrics/{SUITE}.json")
    assert isinstance(metrics, dict)
    assert set(metrics["arms"]) == {"lexical", "chat-export"}
    assert metrics["arms"]["chat-export"]["correctness"]["value"] == 0.75
    assert metrics["arms"]["lexical"]["correctness"]["value"] == 0.5
    assert metrics["arms"]["chat-export"]["citations"]["valid"] == 3
    assert set(metrics["comparisons"]) == {"chat-export_vs_lexical"}
    report = (team.root / "reports" / f"{SUITE}.md").read_text()
    assert report.startswith(f"# Knowledge evals: {SUITE}")
    keys = (team.root / "suites" / SUITE / "keys.jsonl").read_text().splitlines()
    assert all(len(json.loads(k)["valid_sources"][0]["sha256"]) == 64 for k in keys)


def test_show_and_gate_read_the_params(team: Pipeline) -> None:
    show = flightdeck(team.root, team.home, "knowledge", "show")
    assert show.returncode == 0, show.stderr
    lines = show.stdout.splitlines()
    assert lines[0] == (
        f"{SUITE}: chat-export is +25.0 points on correctness and -25.0 on citation validity "
        "against lexical: not shown to be 15 points better on correctness; worse on citation "
        "validity."
    )
    assert any(line.startswith("chat-export ") and "75.0%" in line for line in lines)
    gate = flightdeck(team.root, team.home, "knowledge", "gate", f"suites/{SUITE}")
    assert gate.returncode in (0, 1), gate.stderr
    assert "chat-export - lexical" in gate.stdout


def test_a_second_repro_is_up_to_date(team: Pipeline, tmp_path: Path) -> None:
    import shutil

    copy = Pipeline(tmp_path / "team", team.home)
    shutil.copytree(team.root, copy.root, symlinks=True)
    proc = copy.dvc("repro")
    assert ran_stages(proc.stdout) == []
    assert copy.git("status", "--porcelain") == ""
