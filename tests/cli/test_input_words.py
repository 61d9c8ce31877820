"""Inputs that were accepted, or refused without a usable message, as a user meets them.

Each is one stderr line naming the file, the line and what to fix, exit 2, no traceback: a
label's ``time`` or a suite's ``registered_at`` that is no real date or time, a field of the
holdouts manifest, of a sealed suite's manifest or of an arm's meta file (on its line when
the file has several), params.yaml's plain values of the wrong type, and the scores ledger.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject
from tests.cli_calls import assert_error, invoke

from flightdeck.files.clock import format_utc
from flightdeck.files.jsonl import sha256_bytes


@pytest.fixture
def sealed(runner: CliRunner, project: BuiltProject) -> BuiltProject:
    """The project's suite sealed (holdouts/ registers it), with an arm ``a`` ready to score."""
    result = invoke(runner, "knowledge", "seal", str(project.suite), "--holdouts", "holdouts")
    assert result.exit_code == 0, result.output
    project.write_arm("a", [True] * 4)
    return project


def score(runner: CliRunner, project: BuiltProject) -> Result:
    return invoke(runner, "knowledge", "score", str(project.suite), "--arm", "a")


def line_of(path: Path, text: str) -> int:
    """The number of the first line of ``path`` that holds ``text``."""
    lines = path.read_text().splitlines()
    return next(n for n, line in enumerate(lines, start=1) if text in line)


def with_label_times(project: BuiltProject, times: list[str]) -> Path:
    path = project.suite / "labels" / "a.jsonl"
    labels = [json.loads(line) for line in path.read_text().splitlines()]
    for label, time in zip(labels, times, strict=False):
        label["time"] = time
    path.write_text("".join(json.dumps(label) + "\n" for label in labels))
    return path


# --- a time that is no real time ------------------------------------------------------------


def test_a_label_time_that_is_no_real_time_is_refused(
    runner: CliRunner, sealed: BuiltProject
) -> None:
    now = format_utc(datetime.now(UTC))
    labels = with_label_times(sealed, [now, "2026-13-45T99:00:00Z"])
    assert_error(
        score(runner, sealed),
        f"{labels}:2: time '2026-13-45T99:00:00Z' is not a date or time; write an ISO 8601 "
        "time such as 2026-12-01T14:25:28Z, or leave time out",
    )


def test_the_time_the_rating_tool_writes_is_read(runner: CliRunner, sealed: BuiltProject) -> None:
    # knowledge rate stamps a label with format_utc of its clock (rating/session.py)
    with_label_times(sealed, [format_utc(datetime.now(UTC))] * 8)
    result = score(runner, sealed)
    assert result.exit_code == 0, result.output


def test_a_registration_time_that_is_no_real_time_is_refused(
    runner: CliRunner, sealed: BuiltProject
) -> None:
    path = sealed.root / "holdouts" / "manifest.json"
    text = path.read_text()
    registered = json.loads(text)["suites"]["demo-v1"]["registered_at"]
    field = f'"registered_at": "{registered}"'
    path.write_text(text.replace(field, '"registered_at": "2026-13-45"'))
    result = invoke(runner, "knowledge", "status", str(sealed.suite))
    assert_error(
        result,
        f"holdouts/manifest.json:{line_of(path, '2026-13-45')}: suites.demo-v1.registered_at "
        "must be a UTC time such as 2026-12-01T14:25:28Z; restore the file from git",
    )


# --- the line of a refused field in a document ----------------------------------------------


def test_a_field_of_the_holdouts_manifest_is_named_on_its_line(
    runner: CliRunner, sealed: BuiltProject
) -> None:
    path = sealed.root / "holdouts" / "manifest.json"
    path.write_text(path.read_text().replace('"format": 1', '"format": "1"'))
    result = invoke(runner, "knowledge", "status", str(sealed.suite))
    line = line_of(path, '"format"')
    assert_error(
        result,
        f"holdouts/manifest.json:{line}: format must be 1, got '1'; restore the file from git",
    )


def test_a_field_of_a_sealed_manifest_is_named_on_its_line_with_the_fix(
    runner: CliRunner, sealed: BuiltProject
) -> None:
    path = sealed.suite / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "sealed_at": 5}, indent=2))
    result = invoke(runner, "knowledge", "status", str(sealed.suite))
    line = line_of(path, '"sealed_at"')
    assert_error(
        result,
        f"{path}:{line}: sealed_at must be a string, got 5; restore "
        "the file from git; a sealed suite is never edited (a change is a new version)",
    )


@pytest.mark.parametrize(
    ("indent", "where"),
    [pytest.param(2, True, id="several-lines"), pytest.param(None, False, id="one-line")],
)
def test_a_field_of_a_meta_file_is_named_on_its_line_when_it_has_several(
    runner: CliRunner, sealed: BuiltProject, indent: int | None, where: bool
) -> None:
    path = sealed.suite / "answers" / "a.meta.json"
    meta = json.loads(path.read_text())
    path.write_text(json.dumps({**meta, "date": "2026-13-45"}, indent=indent))
    date = line_of(path, '"date"')
    line = f":{date}" if where else ""
    assert_error(
        score(runner, sealed),
        f"{path}{line}: date '2026-13-45' is not a date; use YYYY-MM-DD or an ISO 8601 time",
    )


# --- params.yaml: what each plain value must be, and what to write ------------------------

PARAMS = (
    "seed: 0\nresamples: 2000\nconfidence: 0.95\nthreshold: 15\nmin_raters: 2\n"
    "gate_margin: 10\nholdouts: holdouts\nrepos:\n  sdlc: repos/sdlc\n"
)


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        pytest.param(
            "seed: 0", "seed: x", 1, "seed must be an integer, got 'x'; write a whole number",
            id="seed",
        ),
        pytest.param(
            "seed: 0", "seed: true", 1, "seed must be an integer, got True; write a whole number",
            id="seed-bool",
        ),
        pytest.param(
            "resamples: 2000", "resamples: 1.5", 2,
            "resamples must be an integer, got 1.5; write a whole number",
            id="resamples",
        ),
        pytest.param(
            "min_raters: 2", "min_raters: two", 5,
            "min_raters must be an integer, got 'two'; write a whole number",
            id="min-raters",
        ),
        pytest.param(
            "confidence: 0.95", "confidence: high", 3,
            "confidence must be a number, got 'high'; write a proportion such as 0.95",
            id="confidence",
        ),
        pytest.param(
            "threshold: 15", "threshold: [15]", 4,
            "threshold must be a number, got [15]; write points such as 15",
            id="threshold",
        ),
        pytest.param(
            "gate_margin: 10", "gate_margin: ten", 6,
            "gate_margin must be a number, got 'ten'; write points such as 10",
            id="gate-margin",
        ),
        pytest.param(
            "gate_margin: 10", "gate_margin: 10\njudge_min_kappa: x", 7,
            "judge_min_kappa must be a number, got 'x'; write a kappa from -1 to 1 such as 0.6",
            id="judge-min-kappa",
        ),
        pytest.param(
            "gate_margin: 10", "gate_margin: 10\narms: a", 7,
            "arms must be a list of arm names, got 'a'; write one `- NAME` line per arm",
            id="arms",
        ),
        pytest.param(
            "holdouts: holdouts", "holdouts: [h]", 7,
            "holdouts must be a folder path, got ['h']; write the folder's path, relative to "
            "params.yaml",
            id="holdouts",
        ),
        pytest.param(
            "  sdlc: repos/sdlc", "  sdlc: [1]", 8,
            "repos must be a mapping of names to paths, got {'sdlc': [1]}; write one "
            "`NAME: PATH` line per repository",
            id="repos",
        ),
    ],
)  # fmt: skip
def test_a_params_value_of_the_wrong_type_says_what_to_write(
    runner: CliRunner, project: BuiltProject, old: str, new: str, line: int, message: str
) -> None:
    (project.root / "params.yaml").write_text(PARAMS.replace(old, new))
    result = invoke(runner, "knowledge", "status", str(project.suite))
    assert_error(result, f"params.yaml:{line}: {message}")


# --- the scores ledger ------------------------------------------------------------------------

RESTORE = "restore the file from git (knowledge score appends it)"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        pytest.param(
            {"arm": "a"}, f"ledger record needs arm and answers_sha256; {RESTORE}", id="missing"
        ),
        pytest.param(
            {"arm": ["a"], "answers_sha256": "0" * 64},
            f"arm must be a string, got ['a']; {RESTORE}",
            id="arm-list",
        ),
        pytest.param(  # read as the text "[1]" before
            {"arm": "a", "answers_sha256": "0" * 64, "labels_sha256": [1]},
            f"labels_sha256 must be a string, got [1]; {RESTORE}",
            id="labels-list",
        ),
        pytest.param(
            {"arm": "a", "answers_sha256": "x"},
            f"answers_sha256 must be 64 hex digits, got 'x'; {RESTORE}",
            id="answers-not-hex",
        ),
    ],
)
def test_a_bad_ledger_record_is_named_on_its_line(
    runner: CliRunner, sealed: BuiltProject, record: dict[str, object], message: str
) -> None:
    ledger = sealed.suite / "scores.jsonl"
    ledger.write_text(json.dumps({"arm": "b", "answers_sha256": "1" * 64}) + "\n")
    ledger.write_text(ledger.read_text() + json.dumps(record) + "\n")
    assert_error(score(runner, sealed), f"{ledger}:2: {message}")


def test_a_ledger_record_with_a_field_of_a_newer_writer_is_read(
    runner: CliRunner, sealed: BuiltProject
) -> None:
    ledger = sealed.suite / "scores.jsonl"
    answers = sha256_bytes((sealed.suite / "answers" / "a.jsonl").read_bytes())
    old = {"arm": "a", "answers_sha256": answers, "scored_at": "2026-11-21T09:00:00Z", "new": 1}
    ledger.write_text(json.dumps(old) + "\n")
    result = score(runner, sealed)
    assert result.exit_code == 0, result.output
    recorded = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert recorded[0] == old  # kept as written
    assert [r["arm"] for r in recorded] == ["a", "a"]  # new labels: one more record
    assert score(runner, sealed).exit_code == 0
    assert len(ledger.read_text().splitlines()) == 2  # the same inputs: recorded once
