"""Fact-level agreement (#21): the facts a rater ticks are stored, and calibrate reads them.

The suite of tests/judging.py has one required fact per question. Its facts judge finds the
fact in the 20 even-numbered answers. ana ticks the fact where she says correct: the evens
except q04, plus q01 and q03. Judge against ana alone, per fact: judge+/ana+ 19,
judge+/ana- 1 (q04), judge-/ana+ 2 (q01, q03), judge-/ana- 18; p_o = 37/40 = 0.925,
p_judge = 0.5, p_ana = 21/40 = 0.525, p_e = 0.5*0.525 + 0.5*0.475 = 0.5,
kappa = (0.925 - 0.5) / 0.5 = 0.85.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli.test_judge import FRESH, STATES, SUITE, invoke, people_votes
from tests.judging import N, build_judge_project, qid, write_arm

from flightdeck.files.jsonl import write_jsonl


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner) -> Path:
    """test_judge's sealed 40-question suite; the labels are each test's."""
    suite = build_judge_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "knowledge", "seal", SUITE, "--holdouts", "holdouts")
    assert result.exit_code == 0, result.output
    write_arm(suite, "rated", STATES)
    write_arm(suite, "fresh", FRESH)
    return suite


def write_ticked(suite: Path, ticks_of: dict[str, bool]) -> None:
    """ana's and ravi's labels; the raters in ``ticks_of`` also store their fact ticks."""
    ana, ravi = people_votes()
    labels = []
    for rater, votes in (("ana", ana), ("ravi", ravi)):
        for i in range(N):
            label = {"id": qid(i), "rater": rater, "correct": votes[i], "unsupported": []}
            if ticks_of.get(rater):
                label["facts"] = [votes[i]]
            labels.append(label)
    write_jsonl(suite / "labels" / "rated.jsonl", labels)


def calibrate(runner: CliRunner) -> dict:  # type: ignore[type-arg]
    assert (
        invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated").exit_code
        == 0
    )
    result = invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts", "--json", "c.json")
    assert result.exit_code == 0, result.output
    record = json.loads(Path("c.json").read_text())
    record["_output"] = result.output
    return record


def test_fact_level_agreement_from_one_raters_ticks(runner: CliRunner, judged: Path) -> None:
    write_ticked(judged, {"ana": True})
    facts = calibrate(runner)["facts"]
    assert facts["available"] is True
    assert facts["n"] == 40
    assert facts["answers"] == 40
    assert facts["labels_without_ticks"] == 40  # ravi's
    assert facts["agreement"] == pytest.approx(0.925)
    assert facts["kappa"] == pytest.approx(0.85)


def test_fact_level_majority_of_the_raters_who_ticked(runner: CliRunner, judged: Path) -> None:
    # both tick: the per-fact majority is the answer-level majority (q06 a tie: absent), so
    # the fact-level table is test_judge's answer-level one: kappa 0.8, agreement 0.9
    write_ticked(judged, {"ana": True, "ravi": True})
    record = calibrate(runner)
    assert record["facts"]["kappa"] == pytest.approx(0.8)
    assert record["facts"]["agreement"] == pytest.approx(0.9)
    assert record["facts"]["labels_without_ticks"] == 0
    assert (
        "facts: kappa 0.80, agreement 0.90 on 40 fact verdicts of 40 answers" in record["_output"]
    )


def test_without_ticks_it_says_it_cannot_measure(runner: CliRunner, judged: Path) -> None:
    write_ticked(judged, {})
    facts = calibrate(runner)["facts"]
    assert facts["available"] is False
    assert facts["labels_without_ticks"] == 80


def test_ticks_that_do_not_match_the_key_are_refused(runner: CliRunner, judged: Path) -> None:
    write_ticked(judged, {"ana": True})
    path = judged / "labels" / "rated.jsonl"
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2]) | {"facts": [True, False]}
    lines[2] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    assert (
        invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated").exit_code
        == 0
    )
    result = invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {SUITE}/labels/rated.jsonl:3: facts has 2 ticks, but question 'q02' has 1 "
        "required facts; give one per fact, in the key's order\n"
    )


def test_a_facts_field_that_is_not_booleans_is_refused(runner: CliRunner, judged: Path) -> None:
    write_ticked(judged, {"ana": True})
    path = judged / "labels" / "rated.jsonl"
    lines = path.read_text().splitlines()
    lines[0] = json.dumps(json.loads(lines[0]) | {"facts": ["yes"]})
    path.write_text("\n".join(lines) + "\n")
    result = invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {SUITE}/labels/rated.jsonl:1: facts must be a list of true or false, one per "
        "required fact in the key's order, got ['yes']\n"
    )
