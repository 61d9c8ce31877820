"""The calibration file is its Structs' record (#23): it reads back as written, byte for byte.

A file flightdeck wrote reads into :class:`Calibration` and writes back the same bytes; one
written before labels stored fact ticks (#21) still reads, and still lets ``score --judge``
take an unrated arm's correctness from it; a file that is not JSON, or that the Structs
refuse, is one line naming the file and the command that writes it again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli.test_judge import SUITE, assert_error, invoke, judged

from flightdeck.rating.calibration_format import (
    Calibration,
    read_calibration,
    write_calibration,
)

__all__ = ["judged"]  # a fixture, used by name

FIX = f"run `flightdeck knowledge calibrate {SUITE} --judge facts`"


@pytest.fixture
def calibrated(runner: CliRunner, judged: Path) -> Path:
    """The judged suite's facts judge, judged on both arms and calibrated (kappa 0.8)."""
    arms = ["--arm", "rated", "--arm", "fresh"]
    assert invoke(runner, "knowledge", "judge", SUITE, "--judge", "facts", *arms).exit_code == 0
    assert invoke(runner, "knowledge", "calibrate", SUITE, "--judge", "facts").exit_code == 0
    return judged / "judgements" / "facts" / "calibration.json"


def _score(runner: CliRunner) -> str:
    result = invoke(runner, "knowledge", "score", SUITE, "--arm", "fresh", "--judge", "facts")
    assert result.exit_code == 0, result.output
    return result.output


def test_a_calibration_reads_back_as_written(calibrated: Path, tmp_path: Path) -> None:
    record = read_calibration(calibrated, fix=FIX)
    assert isinstance(record, Calibration)
    assert (record.judge.name, record.n, record.min_raters) == ("facts", 40, 2)
    assert record.table.judge_correct_people_correct == 18  # the hand-worked table
    assert record.facts.available is False
    write_calibration(tmp_path / "again.json", record)
    assert (tmp_path / "again.json").read_bytes() == calibrated.read_bytes()


def test_a_calibration_older_than_fact_ticks_still_reads(
    runner: CliRunner, calibrated: Path, tmp_path: Path
) -> None:
    words = _score(runner)
    value = json.loads(calibrated.read_text())
    # what calibrate wrote under facts before #21: available and reason only
    value["facts"] = {"available": False, "reason": "the people's labels carry no fact ticks"}
    calibrated.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")
    old = read_calibration(calibrated, fix=FIX)
    write_calibration(tmp_path / "old.json", old)
    assert (tmp_path / "old.json").read_bytes() == calibrated.read_bytes()
    assert _score(runner) == words  # score --judge takes it as before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            {"min_raters": "2"},
            "not a calibration flightdeck wrote (Expected `int`, got `str` - at `$.min_raters`)",
            id="wrong-type",
        ),
        pytest.param(
            {"n": None},
            "not a calibration flightdeck wrote (Expected `int`, got `null` - at `$.n`)",
            id="null-count",
        ),
        pytest.param(
            {"judge": {"name": "facts"}},
            "not a calibration flightdeck wrote (Object missing required field `kind` - at "
            "`$.judge`)",
            id="judge-cut-short",
        ),
        pytest.param(
            {"table": None},
            "not a calibration flightdeck wrote (Expected `object`, got `null` - at `$.table`)",
            id="no-table",
        ),
    ],
)
def test_a_file_the_structs_refuse_is_one_line(
    runner: CliRunner, calibrated: Path, change: dict[str, object], message: str
) -> None:
    value = json.loads(calibrated.read_text()) | change
    calibrated.write_text(json.dumps(value))
    assert_error(
        invoke(runner, "knowledge", "score", SUITE, "--arm", "fresh", "--judge", "facts"),
        f"{SUITE}/judgements/facts/calibration.json: {message}; {FIX} to write it again",
    )


def test_a_file_that_is_not_json_gets_the_strict_readers_words(
    runner: CliRunner, calibrated: Path
) -> None:
    calibrated.write_text('{"n": 40, "n": 41}')
    assert_error(
        invoke(runner, "knowledge", "score", SUITE, "--arm", "fresh", "--judge", "facts"),
        f"{SUITE}/judgements/facts/calibration.json: duplicate key 'n' in one object; keep one "
        "(JSON readers disagree on which of two equal keys wins)",
    )
