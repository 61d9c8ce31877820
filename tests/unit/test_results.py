"""`flightdeck.load_results`: the demo's per-question frame, as a notebook user gets it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import flightdeck
from flightdeck.errors import InputError
from flightdeck.files.jsonl import encode_lines
from flightdeck.params import load_params
from flightdeck.project.results import score
from flightdeck.scoring.results import result_rows
from flightdeck.scoring.tables import result_schema

ROOT = Path(__file__).parents[2]
SUITE = ROOT / "suites" / "knowledge-demo-v1"
ARMS = ["baseline-projects", "baseline-repo-search"]
COLUMNS = [
    "arm",
    "id",
    "kind",
    "answered",
    "raters",
    "votes",
    "correct",
    "citations",
    "classes",
    "citation_valid",
    "fabricated",
    "stale",
    "unsupported",
    "valid",
]


@pytest.fixture(scope="module")
def scored():  # type: ignore[no-untyped-def]
    params = load_params(ROOT / "params.yaml")
    return score(SUITE, list(params.arms), params=params)


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from outside the project: the suite's params.yaml is found above the suite."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_demo_frame_has_the_documented_columns(elsewhere: Path) -> None:
    frame = flightdeck.load_results(SUITE)
    assert frame.columns == COLUMNS
    assert dict(frame.schema) == {"arm": pl.String, **result_schema()}
    assert frame["arm"].unique(maintain_order=True).to_list() == ARMS
    lines = (SUITE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["id"] for line in lines]
    for arm in ARMS:
        assert frame.filter(pl.col("arm") == arm)["id"].to_list() == questions


def test_demo_frame_gives_the_committed_metrics(elsewhere: Path) -> None:
    # Independent of the frame code: the numbers in the committed metrics JSON.
    metrics = json.loads((ROOT / "metrics" / "knowledge-demo-v1.json").read_text())["arms"]
    frame = flightdeck.load_results(SUITE)
    per_arm = frame.group_by("arm").agg(
        pl.len().alias("n"),
        pl.col("answered").sum(),
        pl.col("correct").mean().alias("correctness"),
        pl.col("citation_valid").mean().alias("citation_validity"),
        *(pl.col(c).sum() for c in ("fabricated", "stale", "unsupported", "valid")),
    )
    for row in per_arm.iter_rows(named=True):
        m = metrics[row["arm"]]
        assert (row["n"], row["answered"]) == (m["n"], m["answered"])
        assert round(row["correctness"], 6) == m["correctness"]["value"]
        assert round(row["citation_validity"], 6) == m["citation_validity"]["value"]
        classes = ("fabricated", "stale", "unsupported", "valid")  # the split (#21) beside them
        assert {c: row[c] for c in classes} == {c: m["citations"][c] for c in classes}


def test_frame_is_what_score_computes(scored, elsewhere: Path) -> None:  # type: ignore[no-untyped-def]
    frame = flightdeck.load_results(SUITE)
    for arm, arm_score in scored.arms.items():
        assert frame.filter(pl.col("arm") == arm).drop("arm").equals(arm_score.table)


def test_committed_results_files_are_current(scored) -> None:  # type: ignore[no-untyped-def]
    for arm, arm_score in scored.arms.items():
        committed = (ROOT / "results" / "knowledge-demo-v1" / f"{arm}.jsonl").read_bytes()
        assert encode_lines(result_rows(arm_score.table)) == committed


def test_arms_and_folder_can_be_named(tmp_path: Path) -> None:
    results = tmp_path / "r"
    results.mkdir()
    source = ROOT / "results" / "knowledge-demo-v1" / "baseline-projects.jsonl"
    (results / "x.jsonl").write_bytes(source.read_bytes())
    frame = flightdeck.load_results(SUITE, results=results, arms=["x"])
    assert frame["arm"].unique().to_list() == ["x"]
    assert frame.height == 16


def test_no_results_says_score_first(tmp_path: Path) -> None:
    suite = tmp_path / "suites" / "s-v1"
    suite.mkdir(parents=True)
    with pytest.raises(InputError, match="run `flightdeck knowledge score` first") as info:
        flightdeck.load_results(suite, results=tmp_path / "none")
    assert str(info.value) == (
        f"{tmp_path / 'none'}: no results for suite 's-v1'; run `flightdeck knowledge score` first"
    )


def test_unknown_arm_names_the_scored_ones(elsewhere: Path) -> None:
    with pytest.raises(InputError, match="no results for arm 'nope'; arms scored: baseline-proj"):
        flightdeck.load_results(SUITE, arms=["nope"])


def test_a_foreign_file_is_refused_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": "q1"}\n')
    with pytest.raises(InputError, match="not a per-question result") as info:
        flightdeck.load_results(SUITE, results=tmp_path)
    assert info.value.line == 1


def test_import_flightdeck_leaves_polars_out() -> None:
    code = (
        "import sys, flightdeck; print('polars' in sys.modules, callable(flightdeck.load_results))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        flightdeck.nope  # noqa: B018


def test_readme_documents_every_column() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    documented = [
        name.strip("` ")
        for row in section.splitlines()
        if row.startswith("| `")
        for name in row.split("|")[1].split(",")
    ]
    assert documented == COLUMNS
