"""The demo suite calibrated end to end: its people's labels are the reference.

The README says the facts judge does not reach 0.6 on the demo; this test holds it to that,
and holds the calibration's kappa to scikit-learn over vectors read straight from the files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli.test_judge import invoke

ROOT = Path(__file__).parents[2]
DEMO = "suites/knowledge-demo-v1"
ARMS = ("baseline-repo-search", "baseline-projects")


def test_the_demo_calibrated_end_to_end(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sklearn.metrics import cohen_kappa_score

    shutil.copytree(ROOT / DEMO, tmp_path / DEMO, ignore=shutil.ignore_patterns("judgements"))
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "holdouts", tmp_path / "holdouts")
    monkeypatch.chdir(tmp_path)
    args = [a for arm in ARMS for a in ("--arm", arm)]
    result = invoke(runner, "knowledge", "judge", DEMO, "--judge", "facts", *args)
    assert result.exit_code == 0, result.output
    result = invoke(runner, "knowledge", "calibrate", DEMO, "--judge", "facts")
    assert result.exit_code == 0, result.output
    record = json.loads(Path(DEMO, "judgements/facts/calibration.json").read_text())

    judge, people = [], []
    for arm in sorted(ARMS):
        verdicts = {
            j["id"]: j["correct"]
            for j in map(
                json.loads, Path(DEMO, f"judgements/facts/{arm}.jsonl").read_text().splitlines()
            )
        }
        votes: dict[str, list[bool]] = {}
        for label in map(json.loads, Path(DEMO, f"labels/{arm}.jsonl").read_text().splitlines()):
            votes.setdefault(label["id"], []).append(label["correct"])
        for qid in sorted(votes):
            judge.append(verdicts[qid])
            people.append(sum(votes[qid]) > len(votes[qid]) / 2)  # a tie is incorrect
    assert record["n"] == len(judge) == 32
    assert record["kappa"] == pytest.approx(cohen_kappa_score(judge, people), abs=1e-12)
    assert record["agreement"] == pytest.approx(
        sum(a == b for a, b in zip(judge, people, strict=False)) / 32
    )
    # What the README says: the literal facts judge does not reach 0.6 on the demo.
    assert record["kappa"] < 0.6
    assert record["calibrated"] is False
    assert (
        f"kappa {record['kappa']:.2f} [{record['kappa_lo']:.2f}, {record['kappa_hi']:.2f}]"
        in result.output
    )
    refused = invoke(runner, "knowledge", "score", DEMO, "--arm", ARMS[0], "--judge", "facts")
    assert refused.exit_code == 2
    assert "judge 'facts' is not calibrated" in refused.stderr
