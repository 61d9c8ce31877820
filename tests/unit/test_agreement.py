"""`knowledge agreement`: kappa per rater pair, prevalence, citation agreement, disagreements."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject, sha

from flightdeck.cli import FlightdeckGroup
from flightdeck.cli.rating import agreement_command
from flightdeck.errors import InputError
from flightdeck.rating.agreement import Disagreement, suite_agreement

ARM = "arm-x"
CITES = {
    "q1": ["sdlc/a.md#L1-L2", "sdlc/b.md"],
    "q2": ["sdlc/c.md"],
    "q3": ["sdlc/d.md"],
    "q4": ["sdlc/e.md"],
}


def lb(qid: str, rater: str, correct: bool, *unsupported: str) -> dict[str, Any]:
    return {"id": qid, "rater": rater, "correct": correct, "unsupported": list(unsupported)}


# ada and bob rate all four answers; cy rates q1 and q2 only.
LABELS = [
    lb("q1", "ada", True, "sdlc/a.md"),  # spanless entry: flags sdlc/a.md#L1-L2 (spec rule)
    lb("q2", "ada", True),
    lb("q3", "ada", False, "sdlc/d.md"),
    lb("q4", "ada", False),
    lb("q1", "bob", True, "sdlc/a.md#L1-L2"),
    lb("q2", "bob", False),
    lb("q3", "bob", False),
    lb("q4", "bob", False),
    lb("q1", "cy", True),
    lb("q2", "cy", True),
]


@pytest.fixture
def labelled(project: BuiltProject) -> BuiltProject:
    project.write_answers(
        ARM,
        [
            {
                "id": q,
                "answer": f"answer {q}",
                "citations": [{"uri": u, "sha256": sha(u)} for u in c],
            }
            for q, c in CITES.items()
        ],
    )
    project.write_labels(ARM, LABELS)
    return project


def test_hand_worked_pairs(labelled: BuiltProject) -> None:
    (arm,) = suite_agreement(labelled.folder).arms
    assert arm.raters == ("ada", "bob", "cy")
    assert arm.labels == 10
    by_pair = {p.raters: p for p in arm.pairs}
    assert list(by_pair) == [("ada", "bob"), ("ada", "cy"), ("bob", "cy")]

    # ada T T F F vs bob T F F F: p_o = 3/4; p_e = (2*1 + 2*3)/16 = 1/2; kappa = (3/4-1/2)/(1/2)
    ab = by_pair[("ada", "bob")]
    assert (ab.correct.value, ab.correct.agreement, ab.correct.n) == (0.5, 0.75, 4)
    # citations a b c d e: ada flags a d, bob flags a: agree 4/5; in 1/n^2 units
    # n*agree = 20, expected = 2*1 + 3*4 = 14, kappa = (20 - 14)/(25 - 14) = 6/11
    assert ab.unsupported.value == pytest.approx(6 / 11)
    assert (ab.unsupported.agreement, ab.unsupported.n) == (0.8, 5)

    # ada T T vs cy T T: every label the same, p_e = 1, kappa undefined
    ac = by_pair[("ada", "cy")]
    assert ac.correct.value is None
    assert ac.correct.agreement == 1.0
    assert ac.correct.reason is not None
    # citations a b c: ada T F F, cy F F F: agree 2/3, expected = 1*0 + 2*3 = 6, kappa = 0
    assert (ac.unsupported.value, ac.unsupported.n) == (0.0, 3)

    # bob T F vs cy T T: agree 1/2, expected = 1*2 + 1*0 = 2, kappa = (2 - 2)/(4 - 2) = 0
    bc = by_pair[("bob", "cy")]
    assert (bc.correct.value, bc.correct.agreement, bc.correct.n) == (0.0, 0.5, 2)


def test_prevalence_of_correct(labelled: BuiltProject) -> None:
    (arm,) = suite_agreement(labelled.folder).arms
    assert arm.prevalence == 5 / 10
    assert arm.prevalence_by_rater == {"ada": 0.5, "bob": 0.25, "cy": 1.0}


def test_disagreements_in_question_order(labelled: BuiltProject) -> None:
    (arm,) = suite_agreement(labelled.folder).arms
    assert arm.disagreements == (
        Disagreement("q1", "sdlc/a.md#L1-L2", {"ada": True, "bob": True, "cy": False}),
        Disagreement("q2", None, {"ada": True, "bob": False, "cy": True}),
        Disagreement("q3", "sdlc/d.md", {"ada": True, "bob": False}),
    )


def test_kappa_matches_scikit_learn(labelled: BuiltProject) -> None:
    from sklearn.metrics import cohen_kappa_score

    (arm,) = suite_agreement(labelled.folder).arms
    ada = [True, True, False, False]
    bob = [True, False, False, False]
    assert arm.pairs[0].correct.value == pytest.approx(cohen_kappa_score(ada, bob))


def test_labels_on_an_older_answer_are_flagged(labelled: BuiltProject) -> None:
    labels = [dict(label) for label in LABELS]
    labels[0]["answer_sha256"] = "0" * 64
    labelled.write_labels(ARM, labels)
    (arm,) = suite_agreement(labelled.folder).arms
    assert arm.stale == ("q1 (ada)",)


def test_an_arm_without_labels(labelled: BuiltProject) -> None:
    labelled.write_answers("arm-y", [{"id": "q1", "answer": "a", "citations": []}])
    result = suite_agreement(labelled.folder, arms=["arm-y"])
    (arm,) = result.arms
    assert (arm.raters, arm.labels, arm.pairs, arm.prevalence) == ((), 0, (), None)


def test_an_unknown_arm_is_an_input_error(labelled: BuiltProject) -> None:
    with pytest.raises(InputError, match=r"no labels or answers for arm 'nope'; arms here: arm-x"):
        suite_agreement(labelled.folder, arms=["nope"])


def test_a_duplicate_label_is_an_input_error(labelled: BuiltProject) -> None:
    labelled.write_labels(ARM, [*LABELS, LABELS[0]])
    with pytest.raises(InputError, match=r"arm-x.jsonl:11: duplicate label by rater 'ada'"):
        suite_agreement(labelled.folder)


# --- the command -------------------------------------------------------------------------


@click.group(cls=FlightdeckGroup)
def root() -> None:
    """Test root: the real error handling, with the agreement command attached."""


root.add_command(agreement_command)


def test_agreement_text(runner: CliRunner, labelled: BuiltProject) -> None:
    result = runner.invoke(root, ["agreement", str(labelled.suite)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "arm-x: 3 raters, 10 labels",
        "  rated correct: 50% of labels (ada 50%, bob 25%, cy 100%)",
        "  ada vs bob: correct kappa 0.50, agreement 75% over 4 answers; "
        "unsupported kappa 0.55, agreement 80% over 5 citations",
        "  ada vs cy: correct kappa n/a (undefined: both raters gave the same single label to "
        "every item (p_e = 1)), agreement 100% over 2 answers; "
        "unsupported kappa 0.00, agreement 67% over 3 citations",
        "  bob vs cy: correct kappa 0.00, agreement 50% over 2 answers; "
        "unsupported kappa 0.00, agreement 67% over 3 citations",
        "  disagreements to settle (3):",
        "    q1 unsupported sdlc/a.md#L1-L2: ada yes, bob yes, cy no",
        "    q2 correct: ada yes, bob no, cy yes",
        "    q3 unsupported sdlc/d.md: ada yes, bob no",
    ]


def test_agreement_json(runner: CliRunner, labelled: BuiltProject) -> None:
    result = runner.invoke(
        root, ["agreement", str(labelled.suite), "--arm", ARM, "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    arm = data["arms"][ARM]
    assert data["suite"] == "demo-v1"
    assert arm["prevalence"]["all"] == 0.5
    assert arm["pairs"][0] == {
        "raters": ["ada", "bob"],
        "correct": {"kappa": 0.5, "agreement": 0.75, "n": 4, "reason": None},
        "unsupported": {"kappa": 6 / 11, "agreement": 0.8, "n": 5, "reason": None},
    }
    assert arm["disagreements"][1] == {
        "id": "q2",
        "uri": None,
        "votes": {"ada": True, "bob": False, "cy": True},
    }


def test_agreement_bad_arm_exits_2(runner: CliRunner, labelled: BuiltProject) -> None:
    result = runner.invoke(root, ["agreement", str(labelled.suite), "--arm", "nope"])
    assert result.exit_code == 2
    path = Path(labelled.suite) / "labels" / "nope.jsonl"
    assert result.stderr == (
        f"error: {path}: no labels or answers for arm 'nope'; arms here: arm-x\n"
    )


def test_agreement_help_has_an_example(runner: CliRunner) -> None:
    result = runner.invoke(root, ["agreement", "--help"])
    assert "  Example:\n      flightdeck knowledge agreement suites/knowledge-gold-v1\n" in (
        result.output
    )


def test_without_answers_citations_are_not_compared(
    runner: CliRunner, project: BuiltProject
) -> None:
    project.write_labels(ARM, LABELS)
    (arm,) = suite_agreement(project.folder).arms
    unsupported = arm.pairs[0].unsupported
    assert (unsupported.value, unsupported.n) == (None, 0)
    assert unsupported.reason == "no answers/arm-x.jsonl lists the citations"
    assert arm.pairs[0].correct.value == 0.5
    result = runner.invoke(root, ["agreement", str(project.suite)], catch_exceptions=False)
    assert result.output.splitlines()[2] == (
        "  ada vs bob: correct kappa 0.50, agreement 75% over 4 answers; "
        "unsupported not compared (no answers/arm-x.jsonl lists the citations)"
    )
