"""`flightdeck knowledge show` (#15): the committed verdict and numbers, recomputed never."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from flightdeck.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SUITE = "knowledge-demo-v1"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo's params, metrics and report (nothing else: show must need nothing else)."""
    for name in ("params.yaml", f"metrics/{SUITE}.json", f"reports/{SUITE}.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_show_prints_the_reports_verdict_and_the_metrics_table(
    runner: CliRunner, demo: Path
) -> None:
    result = runner.invoke(cli, ["knowledge", "show"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = (demo / "reports" / f"{SUITE}.md").read_text().splitlines()
    verdict = next(line for line in report if line.startswith("**") and line.endswith("**"))
    lines = result.output.splitlines()
    assert lines[0] == f"{SUITE}: {verdict.strip('*')}"
    metrics = json.loads((demo / "metrics" / f"{SUITE}.json").read_text())
    for arm, data in metrics["arms"].items():
        (row,) = [x for x in lines if x.split()[:2] == [arm, f"{data['answered']}/{data['n']}"]]
        c = data["correctness"]
        assert f"{data['answered']}/{data['n']}" in row
        assert f"{100 * c['value']:.1f}% [{100 * c['lo']:.1f}%, {100 * c['hi']:.1f}%]" in row
    # the numbers the report's comparison table prints: -1/16 and 9/16 round outwards there
    assert "| correctness | +31.2 | [-6.3, +68.8] | 8 | 3 |" in report
    assert "| citation validity | +31.2 | [+12.5, +56.3] | 5 | 0 |" in report
    assert (
        "baseline-projects - baseline-repo-search, correctness: +31.2 points [-6.3, +68.8], "
        "not shown"
    ) in lines
    assert (
        "baseline-projects - baseline-repo-search, citation validity: +31.2 points "
        "[+12.5, +56.3], not shown"
    ) in lines
    assert lines[-1] == f"report: reports/{SUITE}.md"


def test_show_reads_what_is_there_and_computes_nothing(runner: CliRunner, demo: Path) -> None:
    path = demo / "metrics" / f"{SUITE}.json"
    metrics = json.loads(path.read_text())
    metrics["arms"]["baseline-projects"]["correctness"] = {"value": 0.123, "lo": 0.1, "hi": 0.2}
    path.write_text(json.dumps(metrics))
    result = runner.invoke(cli, ["knowledge", "show", f"suites/{SUITE}"], catch_exceptions=False)
    assert "12.3% [10.0%, 20.0%]" in result.output


def test_show_without_metrics_says_what_to_run(runner: CliRunner, demo: Path) -> None:
    (demo / "metrics" / f"{SUITE}.json").unlink()
    result = runner.invoke(cli, ["knowledge", "show"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: metrics/{SUITE}.json: not found; run `make repro` or `dvc repro` (the score "
        "stage) first\n"
    )


def test_show_without_a_suite_anywhere_is_refused(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["knowledge", "show"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: SUITE: name the suite (suites/<suite>) or set suite: in params.yaml\n"
    )
