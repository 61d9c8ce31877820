"""`knowledge judge`, `calibrate` and `score/gate --judge` end to end, through click's runner.

The suite (tests/judging.py) is built so the facts judge's agreement with the people is known
by hand: on arm ``rated`` the judge finds the fact in the 20 even-numbered answers; the
people's majority is the same except q01 and q03 (people correct, no fact found), q04 (both
people incorrect, fact found) and q06 (a tie, which counts as incorrect). So the 2x2 table is
judge+/people+ 18, judge+/people- 2, judge-/people+ 2, judge-/people- 18:
p_o = 36/40 = 0.9, p_judge = p_people = 0.5, p_e = 0.5*0.5 + 0.5*0.5 = 0.5,
kappa = (0.9 - 0.5) / (1 - 0.5) = 0.8.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli_calls import assert_error, invoke
from tests.judging import N, build_judge_project, qid, write_arm, write_people

SUITE = "suites/judged-v1"
STATES = [i % 2 == 0 for i in range(N)]
FRESH = [i % 4 != 0 for i in range(N)]  # the unrated arm: 30 of 40 state their fact


def people_votes() -> tuple[list[bool], list[bool]]:
    ana = list(STATES)
    for i in (1, 3):
        ana[i] = True
    ana[4] = False
    ravi = list(ana)
    ravi[6] = False  # ana True, ravi False: a tie, so the majority is incorrect
    return ana, ravi


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner) -> Path:
    """The 40-question suite, sealed, with a rated and an unrated arm."""
    suite = build_judge_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "knowledge", "seal", SUITE, "--holdouts", "holdouts")
    assert result.exit_code == 0, result.output
    write_arm(suite, "rated", STATES)
    write_people(suite, "rated", *people_votes())
    write_arm(suite, "fresh", FRESH)
    return suite


def test_judge_calibrate_and_score_with_the_judge(runner: CliRunner, judged: Path) -> None:
    result = invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated")
    assert result.exit_code == 0, result.output
    path = judged / "judgements" / "facts" / "rated.jsonl"
    assert (
        result.output
        == f"rated: 40 judged now, 0 already judged (40/40); wrote {SUITE}/judgements/facts/rated.jsonl\n"
    )
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["id"] for x in lines] == [qid(i) for i in range(N)]
    assert lines[0]["facts"] == [
        {"fact": "Widgets value 0", "present": True, "quote": "WIDGETS' value \u2014 0"}
    ]
    assert lines[1]["correct"] is False
    assert lines[1]["facts"][0]["quote"] is None
    assert lines[0]["judge"]["kind"] == "facts"
    assert lines[0]["unsupported"] == []
    assert not (judged / "labels" / "fresh.jsonl").exists()  # never into labels/

    # Rerun: nothing left to judge.
    again = invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated")
    assert "0 judged now, 40 already judged" in again.output

    result = invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts", "--json", "c.json")
    assert result.exit_code == 0, result.output
    record = json.loads((judged / "judgements" / "facts" / "calibration.json").read_text())
    assert record == json.loads(Path("c.json").read_text())
    assert record["n"] == 40
    assert record["kappa"] == pytest.approx(0.8)
    assert record["agreement"] == pytest.approx(0.9)
    assert record["table"] == {
        "judge_correct_people_correct": 18,
        "judge_correct_people_incorrect": 2,
        "judge_incorrect_people_correct": 2,
        "judge_incorrect_people_incorrect": 18,
    }
    assert [d["id"] for d in record["disagreements"]] == ["q01", "q03", "q04", "q06"]
    assert record["disagreements"][3]["votes"] == {"ana": True, "ravi": False}
    assert record["calibrated"] is True
    assert record["kappa_lo"] < 0.8 < record["kappa_hi"]
    assert record["facts"]["available"] is False
    assert "kappa 0.80 [" in result.output
    assert "calibrated: kappa >= 0.6" in result.output
    assert "disagree rated q04: judge correct, people incorrect (ana no, ravi no)" in result.output

    # The unrated arm must be judged before it can be scored with the judge.
    score = ["knowledge", "score", SUITE, "--arm", "rated", "--arm", "fresh", "--judge", "facts"]
    assert_error(
        invoke(runner, *score),
        f"{SUITE}/judgements/facts/fresh.jsonl: judge 'facts' has no current judgement of 40 "
        "answer(s) of arm 'fresh' (first: 'q00'); run `flightdeck knowledge judge "
        f"{SUITE} --judge facts --arm fresh`",
    )
    assert (
        invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "fresh").exit_code
        == 0
    )
    result = invoke(runner, *score, "--baseline", "rated", "--candidate", "fresh")
    assert result.exit_code == 0, result.output
    lo, hi = record["kappa_lo"], record["kappa_hi"]
    words = (
        f"judge facts, kappa 0.80 [{lo:.2f}, {hi:.2f}] against people on 40 answers, "
        f"calibrated {record['calibrated_at']}"
    )
    assert f"fresh: correctness from {words}" in result.output
    assert "rated: correctness from people: the majority of ana, ravi" in result.output
    metrics = json.loads(Path("metrics/judged-v1.json").read_text())
    assert metrics["arms"]["fresh"]["correctness"]["value"] == 0.75  # the judge's 30 of 40
    assert metrics["arms"]["rated"]["correctness"]["value"] == 0.5  # the people's 20 of 40
    assert metrics["arms"]["fresh"]["correctness_from"].startswith(words)
    report = Path("reports/judged-v1.md").read_text()
    assert "### Where correctness comes from" in report
    assert f"- **fresh**: {words}; citation validity rests on the mechanical checks" in report

    # The gate runs on a judged arm too.
    gate = invoke(
        runner,
        "knowledge",
        "gate",
        SUITE,
        "--pinned",
        "rated",
        "--candidate",
        "fresh",
        "--judge",
        "facts",
    )
    assert gate.exit_code == 0, gate.output
    assert f"fresh: correctness from {words}" in gate.output


def test_an_uncalibrated_judge_is_refused(runner: CliRunner, judged: Path) -> None:
    invoke(
        runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated", "--arm", "fresh"
    )
    score = ["knowledge", "score", SUITE, "--arm", "fresh", "--judge", "facts"]
    calibration = f"{SUITE}/judgements/facts/calibration.json"
    assert_error(
        invoke(runner, *score),
        f"{calibration}: judge 'facts' was never calibrated; run `flightdeck knowledge "
        f"calibrate {SUITE} --judge facts`",
    )
    invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts")
    params = Path("params.yaml")
    params.write_text(params.read_text() + "judge_min_kappa: 0.9\n")
    assert_error(
        invoke(runner, *score),
        f"{calibration}: judge 'facts' is not calibrated: kappa 0.80 against the people on 40 "
        "answers (needs >= 0.9 on >= 30); have people rate more answers, improve the judge, "
        "or keep people rating",
    )
    # Without a judge, an unrated arm is what it always was: too few raters.
    result = invoke(runner, "knowledge", "score", SUITE, "--arm", "fresh")
    assert result.exit_code == 2
    assert "fewer than 2 raters on 40 answer(s)" in result.stderr


def test_a_calibration_against_fewer_raters_than_scoring_counts_is_refused(
    runner: CliRunner, judged: Path
) -> None:
    """One person's labels do not show the judge may stand in for two."""
    invoke(
        runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated", "--arm", "fresh"
    )
    calibrate = ["knowledge", "calibrate", SUITE, "--judge", "facts", "--min-raters", "1"]
    assert invoke(runner, *calibrate).exit_code == 0
    record = json.loads((judged / "judgements" / "facts" / "calibration.json").read_text())
    assert (record["calibrated"], record["min_raters"]) == (True, 1)
    results = judged.parent.parent / "results"
    assert_error(
        invoke(runner, "knowledge", "score", SUITE, "--arm", "fresh", "--judge", "facts"),
        f"{SUITE}/judgements/facts/calibration.json: judge 'facts' was calibrated against 1 "
        "rater(s) per answer, but scoring counts 2 (min_raters); calibrate it again with "
        "--min-raters 2 once that many people rated the answers",
    )
    assert not results.exists()


def test_fewer_than_30_answers_is_not_calibrated(runner: CliRunner, judged: Path) -> None:
    labels = judged / "labels" / "rated.jsonl"
    kept = [x for x in labels.read_text().splitlines() if int(json.loads(x)["id"][1:]) < 29]
    labels.write_text("\n".join(kept) + "\n")
    invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", "--arm", "rated")
    result = invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts")
    record = json.loads((judged / "judgements" / "facts" / "calibration.json").read_text())
    assert record["n"] == 29
    assert record["kappa"] > 0.6
    assert record["calibrated"] is False
    assert "NOT calibrated" in result.output


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        pytest.param(
            "judges:\n  facts:\n    kind: facts\n    model: x/y\n",
            "params.yaml:8: judge 'facts': unknown key 'model' (a typo?); a facts judge takes kind",
            id="facts-takes-no-model",
        ),
        pytest.param(
            "judges:\n  rubric:\n    kind: llm\n    model: mockllm/model\n    prompt: r.md\n    temprature: 0\n",
            "params.yaml:8: judge 'rubric': unknown key 'temprature' (a typo?); a llm judge "
            "takes kind, model, prompt, temperature",
            id="typo",
        ),
        pytest.param(
            "judges:\n  rubric:\n    kind: llm\n    prompt: r.md\n",
            "params.yaml:8: judge 'rubric' needs model: an inspect model name such as "
            "openai-api/local/qwen2.5 or mockllm/model",
            id="no-model",
        ),
        pytest.param(
            "judges:\n  x:\n    kind: regex\n",
            "params.yaml:8: judge 'x' needs kind: facts or kind: llm, got {'kind': 'regex'}",
            id="bad-kind",
        ),
        pytest.param(
            "judge: rubric\n",
            "params.yaml:7: judge 'rubric' is not declared under judges: (none declared); "
            "declare it or fix the name",
            id="undeclared",
        ),
    ],
)
def test_judges_in_params_are_checked(
    runner: CliRunner, judged: Path, judges: str, message: str
) -> None:
    params = Path("params.yaml")
    text = params.read_text().split("judges:")[0]
    params.write_text(text + judges)
    assert_error(invoke(runner, "knowledge", "status", SUITE), message)


def test_an_undeclared_judge_is_named(runner: CliRunner, judged: Path) -> None:
    assert_error(
        invoke(runner, "knowledge", "judge", SUITE, "--judge", "rubric", "--arm", "rated"),
        "params.yaml: no judge 'rubric' under judges: (declared: facts); declare it, e.g. "
        "judges: {rubric: {kind: facts}}",
    )
