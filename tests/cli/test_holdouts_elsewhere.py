"""`score --holdouts` naming another folder never bypasses the void params.yaml's records (#25)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result
from tests.builders import BuiltProject
from tests.cli_calls import invoke


def voided(runner: CliRunner, project: BuiltProject) -> Path:
    """Seal into params' holdouts/, score-ready arm, then a leaked canary voids the suite."""
    assert invoke(runner, "knowledge", "seal", str(project.suite)).exit_code == 0
    project.write_arm("search", [True, True])
    keys = [json.loads(x) for x in (project.suite / "keys.jsonl").read_text().splitlines()]
    trace = project.root / "traces" / "q2.log"
    trace.parent.mkdir()
    trace.write_text(f"found {keys[1]['canary']}\n")
    scan = invoke(runner, "holdout", "canary-scan", "--holdouts", "holdouts", str(trace))
    assert scan.exit_code == 1, scan.output
    other = project.root / "other-holdouts"
    other.mkdir()  # an empty registry elsewhere: it knows of no void
    return trace


def test_another_holdouts_folder_cannot_score_a_suite_params_holdouts_void(
    runner: CliRunner, project: BuiltProject
) -> None:
    trace = voided(runner, project)
    args = ["knowledge", "score", str(project.suite), "--arm", "search"]
    result = invoke(runner, *args, "--holdouts", "other-holdouts")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: --holdouts: other-holdouts is not params.yaml's holdouts folder "
        f"({Path('holdouts')}), whose manifest marks suite 'demo-v1' void (the canary of "
        f"question q2 in {trace}:1); score with params' holdouts (a void suite's keys are "
        "spent: seal a new version), or give --holdouts-reason TEXT to score anyway with the "
        "reason recorded in the report\n"
    )
    assert not (project.root / "metrics").exists()
    assert not (project.root / "reports").exists()
    # the same folder by another spelling is params' own: the plain void refusal
    same = invoke(runner, *args, "--holdouts", str(project.root / "holdouts"))
    assert same.exit_code == 2
    assert "is void: a canary leaked" in same.stderr


def score_elsewhere(runner: CliRunner, project: BuiltProject, reason: str) -> Result:
    """Score the voided suite against the empty registry, giving ``reason``."""
    args = ["--arm", "search", "--holdouts", "other-holdouts", "--holdouts-reason", reason]
    return invoke(runner, "knowledge", "score", str(project.suite), *args)


def test_a_stated_reason_scores_and_the_report_records_it(
    runner: CliRunner, project: BuiltProject
) -> None:
    trace = voided(runner, project)
    reason = "the leak was a test trace, reviewed by grace"
    result = score_elsewhere(runner, project, reason)
    assert result.exit_code == 0, result.output
    report = (project.root / "reports" / "demo-v1.md").read_text()
    assert (
        f"**Scored with --holdouts other-holdouts, not params.yaml's {Path('holdouts')}, which "
        f"marks this suite void (the canary of question q2 in {trace}:1); reason: {reason}.**"
    ) in report
    empty = score_elsewhere(runner, project, " ")
    assert empty.exit_code == 2
    assert empty.stderr == "error: --holdouts-reason: is empty; say why this holdouts folder\n"
