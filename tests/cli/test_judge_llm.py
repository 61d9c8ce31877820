"""The llm judge through a real OpenAI-compatible server on 127.0.0.1, and resume after SIGKILL.

The server (tests/judging.py) speaks chat completions and answers with a scripted
``record_verdict`` tool call; inspect reaches it as ``openai-api/local/judge-model`` through
``LOCAL_BASE_URL`` and ``LOCAL_API_KEY``, exactly as it would reach a real one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli.test_judge import FRESH, STATES, SUITE, assert_error, invoke, people_votes
from tests.judging import (
    RUBRIC,
    N,
    ScriptedModel,
    build_judge_project,
    qid,
    substring_verdict,
    write_arm,
    write_people,
)

LLM_JUDGE = (
    "judges:\n  rubric:\n    kind: llm\n    model: openai-api/local/judge-model\n"
    "    prompt: rubric.md\n    temperature: 0.25\n"
)


@pytest.fixture
def server() -> Iterator[ScriptedModel]:
    model = ScriptedModel(substring_verdict)
    try:
        yield model
    finally:
        model.close()


@pytest.fixture
def llm_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner, server: ScriptedModel
) -> Path:
    suite = build_judge_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    params = Path("params.yaml")
    params.write_text(params.read_text().split("judges:")[0] + LLM_JUDGE)
    Path("rubric.md").write_text(RUBRIC)
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    assert invoke(runner, "knowledge", "seal", SUITE, "--holdouts", "holdouts").exit_code == 0
    write_arm(suite, "rated", STATES)
    write_people(suite, "rated", *people_votes())
    write_arm(suite, "fresh", FRESH)
    return suite


def test_llm_judge_calibrated_then_refused_once_its_prompt_changes(
    runner: CliRunner, llm_project: Path, server: ScriptedModel
) -> None:
    result = invoke(
        runner, "knowledge", "judge", SUITE, "--judge", "rubric", "--arm", "rated", "--arm", "fresh"
    )
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 2 * N
    request = server.requests[0]
    assert request["model"] == "judge-model"
    assert request["temperature"] == 0.25
    assert request["tool_choice"] == {"type": "function", "function": {"name": "record_verdict"}}
    assert request["tools"][0]["function"]["name"] == "record_verdict"
    prompt = request["messages"][-1]["content"]
    assert (
        "FACTS:\n1. Widgets value 0\nANSWER:\nThe WIDGETS' value \u2014 0: as documented."
        in str(prompt)
    )
    first = json.loads((llm_project / "judgements/rubric/rated.jsonl").read_text().splitlines()[0])
    assert first["facts"] == [{"fact": "Widgets value 0", "present": True, "quote": "0"}]
    import hashlib

    assert first["judge"] == {
        "name": "rubric",
        "kind": "llm",
        "model": "openai-api/local/judge-model",
        "prompt_sha256": hashlib.sha256(RUBRIC.encode()).hexdigest(),
        "temperature": 0.25,
        "rules": None,
    }

    assert invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "rubric").exit_code == 0
    calibration = json.loads((llm_project / "judgements/rubric/calibration.json").read_text())
    assert calibration["calibrated"] is True
    assert calibration["kappa"] == pytest.approx(0.8)
    score = ["knowledge", "score", SUITE, "--arm", "fresh", "--judge", "rubric"]
    result = invoke(runner, *score)
    assert result.exit_code == 0, result.output
    assert "fresh: correctness from judge rubric, kappa 0.80" in result.output

    # An edited prompt is another judge: the calibration no longer holds.
    Path("rubric.md").write_text(RUBRIC + "Be strict.\n")
    assert_error(
        invoke(runner, *score),
        f"{SUITE}/judgements/rubric/calibration.json: judge 'rubric' changed since it was "
        "calibrated (prompt_sha256 differ), so the calibration does not hold for it: judge the "
        f"rated arms again, then `flightdeck knowledge calibrate {SUITE} --judge rubric`",
    )
    # Judging again judges every answer again (the old judgements are stale).
    server.requests.clear()
    result = invoke(runner, "knowledge", "judge", SUITE, "--judge", "rubric", "--arm", "rated")
    assert "40 judged now, 0 already judged, 40 stale removed" in result.output
    assert len(server.requests) == N


def test_a_model_that_calls_no_tool_leaves_answers_unjudged(
    runner: CliRunner, llm_project: Path, server: ScriptedModel
) -> None:
    server.reply = lambda request: None
    result = invoke(runner, "knowledge", "judge", SUITE, "--judge", "rubric", "--arm", "rated")
    assert result.exit_code == 1
    assert "no verdict on 40 answer(s): rated q00, rated q01" in result.stderr
    assert "rated q00: no verdict (the model did not call record_verdict)" in result.stderr
    assert not (llm_project / "judgements/rubric/rated.jsonl").exists()


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_resume_after_sigkill(llm_project: Path, server: ScriptedModel) -> None:
    """Kill -9 mid-run: every finished judgement survives, the rerun judges only the rest."""
    server.hold_after = 5  # the sixth request waits: the process is killed while it does
    path = llm_project / "judgements/rubric/rated.jsonl"
    command = [
        sys.executable,
        "-m",
        "flightdeck",
        "knowledge",
        "judge",
        SUITE,
        "--judge",
        "rubric",
        "--arm",
        "rated",
    ]
    env = dict(os.environ)
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while (len(lines_of(path)) < 5 or len(server.requests) < 6) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert len(lines_of(path)) == 5
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    server.hold_after = None
    server.release.set()
    before = len(server.requests)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "35 judged now, 5 already judged (40/40)" in done.stdout
    assert len(server.requests) - before == 35  # nothing judged twice
    ids = [json.loads(line)["id"] for line in lines_of(path)]
    assert sorted(ids) == [qid(i) for i in range(N)]


def test_a_line_cut_by_a_kill_is_dropped_and_judged_again(
    runner: CliRunner, llm_project: Path
) -> None:
    path = llm_project / "judgements/rubric/rated.jsonl"
    invoke(runner, "knowledge", "judge", SUITE, "--judge", "rubric", "--arm", "rated")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:10]) + "\n" + lines[10][:25])  # a torn eleventh line
    result = invoke(runner, "knowledge", "judge", SUITE, "--judge", "rubric", "--arm", "rated")
    assert result.exit_code == 0, result.output
    assert "30 judged now, 10 already judged, 1 stale removed (40/40)" in result.output
    assert path.read_text().splitlines() == lines  # the same verdicts, in suite order
