"""`knowledge rate --tui`: the same items, order and writes as the page, through prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject, answer

from flightdeck.cli import FlightdeckGroup
from flightdeck.cli import rating as rating_cli
from flightdeck.cli.rating import rate_command
from flightdeck.rating.session import RatingSession
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

PATHS = {
    "q1": "docs/adr/0001-database.md",
    "q2": "docs/runbooks/deploy.md",
    "q3": "CODEOWNERS",
    "q4": "CHANGELOG.md",
}
ARMS = ("arm-alpha", "arm-beta")
RATE = "all\n\n\n"  # every fact present, accept "Correct? [Y/n]", no unsupported citation


@click.group(cls=FlightdeckGroup)
def root() -> None:
    """Test root: the real error handling, with the rating command attached."""


root.add_command(rate_command)


def seal_suite(project: BuiltProject) -> None:
    seal(project.folder, repos=RepoSet({"sdlc": project.repo}, project.root / "cache"))


@pytest.fixture
def rated(project: BuiltProject) -> BuiltProject:
    for arm in ARMS:
        project.write_answers(
            arm, [answer(project, q, f"{arm[4:]} says {q}", [p]) for q, p in PATHS.items()]
        )
    return project


def rate(runner: CliRunner, project: BuiltProject, text: str, *args: str) -> Result:
    return runner.invoke(
        root, ["rate", str(project.suite), "--rater", "ada", "--tui", *args], input=text
    )


def labels(project: BuiltProject) -> list[dict[str, Any]]:
    out = []
    for arm in ARMS:
        path = project.suite / "labels" / f"{arm}.jsonl"
        if path.exists():
            out += [json.loads(line) | {"arm": arm} for line in path.read_text().splitlines()]
    return out


def order(project: BuiltProject) -> list[str]:
    """The answers in ada's order, as the web page would show them."""
    with RatingSession(
        project.folder, "ada", RepoSet({"sdlc": project.repo}, project.root / "cache")
    ) as s:
        return [s.view(i).answer for i in range(s.total)]


def test_rate_every_answer_in_the_terminal(runner: CliRunner, rated: BuiltProject) -> None:
    result = rate(runner, rated, RATE * 8)
    assert result.exit_code == 0, result.output
    assert "done: all 8 answers rated by ada" in result.output
    shown = [
        line for line in result.output.splitlines() if line.startswith("  ") and "says" in line
    ]
    assert [line.strip() for line in shown] == order(rated)
    got = labels(rated)
    assert len(got) == 8
    assert {(lb["arm"], lb["id"]) for lb in got} == {(a, q) for a in ARMS for q in PATHS}
    assert all(lb["correct"] and lb["unsupported"] == [] for lb in got)
    assert all(
        set(lb)
        == {"id", "rater", "correct", "unsupported", "answer_sha256", "time", "facts", "arm"}
        for lb in got
    )
    # (#21) the facts ticked go into the label, one per required fact in the key's order
    assert all(lb["facts"] == [True] * len(lb["facts"]) and lb["facts"] for lb in got)


def test_the_item_shows_question_key_facts_and_cited_lines(
    runner: CliRunner, rated: BuiltProject
) -> None:
    result = rate(runner, rated, "q\n")
    assert result.exit_code == 0, result.output
    first = order(rated)[0]
    qid = first.split()[-1]
    path = PATHS[qid]
    assert f"[1/8] {qid} (" in result.output
    assert f"Answer key: See {path}." in result.output
    assert f"  [1] sdlc/{path}\n" in result.output
    assert "        1 | " in result.output
    for arm in ARMS:
        assert arm not in result.output
    assert "stopped: 0 of 8 rated; run again to resume" in result.output


def test_quit_then_resume_at_the_fourth(runner: CliRunner, rated: BuiltProject) -> None:
    result = rate(runner, rated, RATE * 3 + "q\n")
    assert result.exit_code == 0, result.output
    assert "stopped: 3 of 8 rated" in result.output
    assert len(labels(rated)) == 3
    again = rate(runner, rated, "q\n")
    assert again.exit_code == 0, again.output
    assert "[4/8]" in again.output
    assert f"  {order(rated)[3]}\n" in again.output
    assert "[1/8]" not in again.output


def test_back_and_change_replaces_the_label(runner: CliRunner, rated: BuiltProject) -> None:
    # rate the first as correct, go back from the second, mark it incorrect with citation 1
    text = RATE + "b\n" + "none\n\n1\n" + "q\n"
    result = rate(runner, rated, text)
    assert result.exit_code == 0, result.output
    assert "Your label: correct; unsupported citations: none" in result.output
    (label,) = labels(rated)
    assert label["correct"] is False
    assert label["unsupported"] == [f"sdlc/{PATHS[label['id']]}"]


def test_the_verdict_can_be_overridden(runner: CliRunner, rated: BuiltProject) -> None:
    result = rate(runner, rated, "all\nn\n\nq\n")
    assert result.exit_code == 0, result.output
    (label,) = labels(rated)
    assert label["correct"] is False


def test_a_bad_fact_number_asks_again(runner: CliRunner, rated: BuiltProject) -> None:
    result = rate(runner, rated, "7\n1\n\n\nq\n")
    assert result.exit_code == 0, result.output
    assert "Error: '7' is not a number from 1 to 1" in result.output
    assert len(labels(rated)) == 1


def test_end_of_input_stops_without_losing_labels(runner: CliRunner, rated: BuiltProject) -> None:
    """End of input (``</dev/null``, a script's last line) stops as q does: exit 0, not 130."""
    result = rate(runner, rated, RATE * 2)
    assert result.exit_code == 0, result.output
    assert "stopped: 2 of 8 rated; run again to resume" in result.stderr
    assert "Traceback" not in result.output
    assert len(labels(rated)) == 2


def test_ctrl_c_stops_without_losing_labels_and_exits_130(
    runner: CliRunner, rated: BuiltProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C at the seventh prompt (the third answer's first): two rated, exit 130."""
    read_line = click.termui._readline_prompt
    prompts = iter(range(6))

    def ctrl_c_after_six(*args: Any) -> str:
        if next(prompts, None) is None:
            raise KeyboardInterrupt
        return read_line(*args)

    monkeypatch.setattr(click.termui, "_readline_prompt", ctrl_c_after_six)
    result = rate(runner, rated, RATE * 3)
    assert result.exit_code == 130, result.output
    assert "stopped: 2 of 8 rated; run again to resume" in result.stderr
    assert "Traceback" not in result.output
    assert len(labels(rated)) == 2


def test_no_browser_falls_back_to_the_terminal(
    runner: CliRunner, rated: BuiltProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rating_cli, "browser_available", lambda: False)
    result = runner.invoke(root, ["rate", str(rated.suite), "--rater", "ada"], input="q\n")
    assert result.exit_code == 0, result.output
    assert "no browser here: rating in the terminal" in result.output
    assert "[1/8]" in result.output


def test_nothing_left_to_rate(runner: CliRunner, rated: BuiltProject) -> None:
    seal_suite(rated)
    rate(runner, rated, RATE * 8)
    result = rate(runner, rated, "")
    assert result.exit_code == 0, result.output
    assert result.output == "nothing left to rate: ada has rated all 8 answers\n"


def test_an_unsealed_suite_is_rated_with_a_warning(runner: CliRunner, rated: BuiltProject) -> None:
    result = rate(runner, rated, RATE + "q\n")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"warning: {rated.suite} is not sealed; answers to an unsealed suite cannot be "
        "scored until it is\n"
    )
    assert len(labels(rated)) == 1


def test_a_sealed_suite_that_changed_is_refused(runner: CliRunner, rated: BuiltProject) -> None:
    seal_suite(rated)
    questions = rated.suite / "questions.jsonl"
    questions.write_text(questions.read_text().replace("deploy", "release"))
    result = rate(runner, rated, RATE)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {questions}: changed after sealing (it no longer matches manifest.json); a "
        "changed question is a new suite version (demo-v2), never an edit: restore the file\n"
    )
    assert labels(rated) == []


def test_repo_option_overrides_params(
    runner: CliRunner, rated: BuiltProject, tmp_path: Path
) -> None:
    (rated.root / "params.yaml").write_text("repos:\n  sdlc: nowhere\n")
    result = rate(runner, rated, "q\n", "--repo", f"sdlc={rated.repo}")
    assert result.exit_code == 0, result.output


def test_a_suite_without_answers_is_an_input_error(
    runner: CliRunner, project: BuiltProject
) -> None:
    seal_suite(project)
    result = rate(runner, project, "")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {project.suite / 'answers'}: no answers/<arm>.jsonl to rate; "
        "run or import an arm first\n"
    )
    assert "Traceback" not in result.output


def test_help_has_an_example(runner: CliRunner) -> None:
    result = runner.invoke(root, ["rate", "--help"])
    assert result.exit_code == 0
    assert "  Example:\n      flightdeck knowledge rate suites/knowledge-gold-v1 --rater ada\n" in (
        result.output
    )
