"""Rating load follows the decision (#21): params.yaml's arms by default, --arm adds others.

A scratch run (an arm params.yaml does not score) would otherwise add its answers to every
rater's load; `--arm` used to rate one arm at a time, which let the rater tell the arms
apart. Now the chosen arms are always rated mixed in one blind order.
"""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject, answer

from flightdeck.cli import FlightdeckGroup
from flightdeck.cli.rating import agreement_command, rate_command
from flightdeck.project.paths import ProjectPaths
from flightdeck.rating.items import order_key, order_secret

PATHS = {"q1": "docs/adr/0001-database.md", "q2": "docs/runbooks/deploy.md"}
ARMS = ("arm-alpha", "arm-beta", "scratch-gamma")
RATE = "all\n\n\n"  # every fact present, accept "Correct? [Y/n]", no unsupported citation


@click.group(cls=FlightdeckGroup)
def root() -> None:
    """Test root: the real error handling."""


root.add_command(rate_command)
root.add_command(agreement_command)


@pytest.fixture
def three_arms(project: BuiltProject) -> BuiltProject:
    for arm in ARMS:
        project.write_answers(
            arm, [answer(project, q, f"{arm} says {q}", [p]) for q, p in PATHS.items()]
        )
    params = project.root / "params.yaml"
    params.write_text(params.read_text() + "arms: [arm-alpha, arm-beta]\n")
    return project


def rate(runner: CliRunner, project: BuiltProject, text: str, *args: str) -> Result:
    return runner.invoke(
        root, ["rate", str(project.suite), "--rater", "ada", "--tui", *args], input=text
    )


def shown_answers(result: Result) -> list[str]:
    return [line.strip() for line in result.output.splitlines() if " says q" in line]


def expected_order(project: BuiltProject, arms: tuple[str, ...]) -> list[str]:
    """ada's blind order over ``arms``, keyed by the project's rating-order secret."""
    secret = order_secret(ProjectPaths(project.root).rating_order_key)
    items = [(arm, q) for arm in arms for q in PATHS]
    items.sort(key=lambda i: order_key(project.suite.name, "ada", i[0], i[1], secret=secret))
    return [f"{arm} says {q}" for arm, q in items]


def test_rate_defaults_to_the_arms_params_yaml_scores(
    runner: CliRunner, three_arms: BuiltProject
) -> None:
    result = rate(runner, three_arms, RATE * 4)
    assert result.exit_code == 0, result.output
    assert "done: all 4 answers rated by ada" in result.output
    # both scored arms, interleaved in the one blind order; the scratch arm left out
    assert shown_answers(result) == expected_order(three_arms, ("arm-alpha", "arm-beta"))
    assert result.stderr.splitlines()[1:] == [
        "note: not in params.yaml arms, left out: scratch-gamma (--arm NAME adds one)"
    ]
    assert not (three_arms.suite / "labels" / "scratch-gamma.jsonl").exists()


def test_arm_adds_an_arm_mixed_blind_with_the_rest(
    runner: CliRunner, three_arms: BuiltProject
) -> None:
    result = rate(runner, three_arms, RATE * 6, "--arm", "scratch-gamma")
    assert result.exit_code == 0, result.output
    assert shown_answers(result) == expected_order(three_arms, ARMS)
    assert "note:" not in result.stderr
    # one blind order over all three arms (the sort above), never one arm after another


def test_a_params_arm_with_no_answers_is_named(runner: CliRunner, three_arms: BuiltProject) -> None:
    (three_arms.suite / "answers" / "arm-beta.jsonl").unlink()
    result = rate(runner, three_arms, RATE * 2)
    assert result.exit_code == 0, result.output
    assert shown_answers(result) == expected_order(three_arms, ("arm-alpha",))
    assert "note: params.yaml arms with no answers yet: arm-beta\n" in result.stderr


def test_no_params_arm_answered_is_refused(runner: CliRunner, three_arms: BuiltProject) -> None:
    for arm in ("arm-alpha", "arm-beta"):
        (three_arms.suite / "answers" / f"{arm}.jsonl").unlink()
    result = rate(runner, three_arms, RATE)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] + "\n" == (
        "error: params.yaml: none of its arms (arm-alpha, arm-beta) has answers here yet; "
        "run or import them first, or name an arm with --arm\n"
    )


def test_facts_ticked_are_stored_in_the_label(runner: CliRunner, three_arms: BuiltProject) -> None:
    # first answer: fact 1 only, then "not correct"; the rest: every fact
    result = rate(runner, three_arms, "1\nn\n\n" + RATE * 3)
    assert result.exit_code == 0, result.output
    first = shown_answers(result)[0]
    arm, qid = first.split(" says ")
    lines = (three_arms.suite / "labels" / f"{arm}.jsonl").read_text().splitlines()
    label = next(json.loads(x) for x in lines if json.loads(x)["id"] == qid)
    n_facts = len(
        next(
            json.loads(k)
            for k in (three_arms.suite / "keys.jsonl").read_text().splitlines()
            if json.loads(k)["id"] == qid
        )["required_facts"]
    )
    assert label["correct"] is False
    assert label["facts"] == [True] + [False] * (n_facts - 1)


def labelled_by(project: BuiltProject, arm: str, raters: dict[str, list[bool]]) -> None:
    project.write_labels(
        arm,
        [
            {"id": q, "rater": r, "correct": c, "unsupported": []}
            for r, marks in raters.items()
            for q, c in zip(PATHS, marks, strict=True)
        ],
    )


def test_agreement_defaults_to_the_params_arms(runner: CliRunner, three_arms: BuiltProject) -> None:
    for arm in ARMS:
        labelled_by(three_arms, arm, {"ada": [True, False], "bob": [True, True]})
    result = runner.invoke(root, ["agreement", str(three_arms.suite), "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(json.loads(result.stdout)["arms"]) == ["arm-alpha", "arm-beta"]
    assert "left out: scratch-gamma" in result.stderr
    added = runner.invoke(
        root, ["agreement", str(three_arms.suite), "--json", "--arm", "scratch-gamma"]
    )
    assert sorted(json.loads(added.stdout)["arms"]) == list(ARMS)
