"""The spec's scoring rules, one question at a time, and the decision rule's ``shown``.

Each case is worked by hand from the spec's wording: correctness is the raters' majority
(a tie is incorrect); a citation is fabricated, stale, unsupported or valid, the first that
applies; an answer is citation-valid when it cites something and every citation is valid;
a missing answer is incorrect and invalid.
"""

from __future__ import annotations

from typing import Any

import pytest

from flightdeck.params import Params
from flightdeck.scoring.metrics import metrics_json
from flightdeck.scoring.outcomes import ScoreResult
from flightdeck.scoring.rules import ArmScore, compare_arms, score_arm
from flightdeck.suite.records import Answer, Key, Label, Question, Source

A_MD = "sdlc/docs/a.md"
B_MD = "sdlc/docs/b.md"
GOOD = "a" * 64  # the hash of a.md at as_of
OLD = "b" * 64  # another version of a.md
B_HASH = "c" * 64


def question(qid: str = "q1") -> Question:
    return Question(
        id=qid, question="Why?", kind="decision-why", as_of={"sdlc": "f" * 40}, scope=()
    )


def key(qid: str = "q1") -> Key:
    return Key(
        id=qid,
        answer_key="Because.",
        required_facts=("because",),
        valid_sources=(Source(uri=A_MD, sha256=GOOD), Source(uri=B_MD, sha256=B_HASH)),
        canary=None,
    )


def answer(qid: str, cites: list[tuple[str, str]]) -> Answer:
    return Answer(
        id=qid,
        answer="Because.",
        citations=tuple(Source(uri=u, sha256=h) for u, h in cites),
        sha256="0" * 64,
    )


def labels(qid: str, votes: dict[str, bool], flags: dict[str, tuple[str, ...]]) -> list[Label]:
    return [
        Label(
            id=qid,
            rater=rater,
            correct=correct,
            unsupported=flags.get(rater, ()),
            answer_sha256=None,
        )
        for rater, correct in votes.items()
    ]


def one_question(
    cites: list[tuple[str, str]] | None,
    votes: dict[str, bool],
    flags: dict[str, tuple[str, ...]] | None = None,
) -> ArmScore:
    answers = {} if cites is None else {"q1": answer("q1", cites)}
    return score_arm(
        "arm",
        [question()],
        {"q1": key()},
        answers,
        [] if cites is None else labels("q1", votes, flags or {}),
        confidence=0.95,
    )


YES2 = {"ada": True, "bob": True}


@pytest.mark.parametrize(
    ("cites", "votes", "flags", "correct", "classes", "citation_valid"),
    [
        pytest.param([(A_MD, GOOD)], YES2, {}, True, ["valid"], True, id="both-yes-valid"),
        pytest.param(
            [(A_MD, GOOD)], {"ada": True, "bob": False}, {}, False, ["valid"], True, id="tie"
        ),
        pytest.param(
            [(A_MD, GOOD)],
            {"ada": True, "bob": False, "cy": True},
            {},
            True,
            ["valid"],
            True,
            id="majority-of-three-yes",
        ),
        pytest.param(
            [(A_MD, GOOD)],
            {"ada": False, "bob": True, "cy": False},
            {},
            False,
            ["valid"],
            True,
            id="majority-of-three-no",
        ),
        pytest.param(
            [("sdlc/docs/other.md", GOOD)], YES2, {}, True, ["fabricated"], False, id="fabricated"
        ),
        pytest.param([(A_MD, OLD)], YES2, {}, True, ["stale"], False, id="stale"),
        pytest.param(
            [(A_MD, GOOD)],
            YES2,
            {"bob": (A_MD,)},
            True,
            ["unsupported"],
            False,
            id="unsupported-by-one-rater",
        ),
        pytest.param(
            [(A_MD + "#L2-L4", GOOD)],
            YES2,
            {},
            True,
            ["valid"],
            True,
            id="span-matches-its-file",
        ),
        pytest.param(
            # fabricated comes first: a rater's flag on a fabricated citation changes nothing
            [("sdlc/docs/other.md", GOOD)],
            YES2,
            {"ada": ("sdlc/docs/other.md",)},
            True,
            ["fabricated"],
            False,
            id="fabricated-before-unsupported",
        ),
        pytest.param(
            # stale comes before unsupported
            [(A_MD, OLD)],
            YES2,
            {"ada": (A_MD,)},
            True,
            ["stale"],
            False,
            id="stale-before-unsupported",
        ),
        pytest.param(
            [(A_MD, GOOD), (B_MD, OLD)],
            YES2,
            {},
            True,
            ["valid", "stale"],
            False,
            id="one-bad-citation-spoils-the-answer",
        ),
        pytest.param(
            [(A_MD, GOOD), (B_MD, B_HASH)],
            YES2,
            {},
            True,
            ["valid", "valid"],
            True,
            id="every-citation-valid",
        ),
        pytest.param([], YES2, {}, True, [], False, id="uncited-is-invalid"),
    ],
)
def test_scoring_rules(
    cites: list[tuple[str, str]],
    votes: dict[str, bool],
    flags: dict[str, tuple[str, ...]],
    correct: bool,
    classes: list[str],
    citation_valid: bool,
) -> None:
    score = one_question(cites, votes, flags)
    (result,) = score.results
    assert result.answered
    assert result.votes == votes
    assert result.correct is correct
    assert [str(cls) for _, cls in result.citations] == classes
    assert result.citation_valid is citation_valid
    assert score.correctness.value == (1.0 if correct else 0.0)
    assert score.citation_validity.value == (1.0 if citation_valid else 0.0)
    expected_counts = dict.fromkeys(("fabricated", "stale", "unsupported", "valid"), 0)
    for name in classes:
        expected_counts[name] += 1
    assert score.citations == expected_counts
    assert score.uncited == (1 if not cites else 0)
    assert score.missing == 0


def test_a_missing_answer_is_incorrect_and_invalid() -> None:
    score = one_question(None, {})
    (result,) = score.results
    assert (result.answered, result.correct, result.citation_valid) == (False, False, False)
    assert result.votes == {}
    assert result.citations == ()
    assert (score.n, score.answered, score.missing, score.uncited) == (1, 0, 1, 0)
    assert score.correctness.value == 0.0


def arm(name: str, outcomes: list[bool]) -> ArmScore:
    """An arm whose answers are right (and validly cited) exactly where ``outcomes`` says."""
    questions = [question(f"q{i}") for i in range(len(outcomes))]
    keys = {q.id: key(q.id) for q in questions}
    answers, all_labels = {}, []
    for q, right in zip(questions, outcomes, strict=True):
        answers[q.id] = answer(q.id, [(A_MD, GOOD if right else OLD)])
        all_labels += labels(q.id, {"ada": right, "bob": right}, {})
    return score_arm(name, questions, keys, answers, all_labels, confidence=0.95)


def compare(
    baseline: ArmScore, candidate: ArmScore, threshold: float, rule: str = "percentile"
) -> Any:
    """The percentile rule unless told: its verdict is the seeded lower bound itself, so the
    cases below can be worked by hand (the calibrated rule is tested in test_decision)."""
    return compare_arms(
        baseline,
        candidate,
        seed=0,
        resamples=500,
        confidence=0.95,
        threshold=threshold,
        decision=rule,
    )


def test_shown_when_every_resample_clears_the_threshold() -> None:
    # candidate right on all 10, baseline on none: every resampled difference is exactly 1.0
    comparison = compare(arm("base", [False] * 10), arm("cand", [True] * 10), 15)
    calibrated = compare(arm("base", [False] * 10), arm("cand", [True] * 10), 15, "calibrated")
    assert all(mc.shown for mc in calibrated.metrics.values())  # any rule shows 10 of 10
    for mc in comparison.metrics.values():
        assert (mc.diff, mc.lo, mc.hi) == (1.0, 1.0, 1.0)
        assert mc.shown is True
        assert mc.ruled_out is False
        assert (mc.candidate_only, mc.baseline_only) == (10, 0)
    assert comparison.metrics["correctness"].statement == (
        "baseline is shown to lose by at least 15 points on correctness"
    )
    assert comparison.metrics["citation_validity"].statement == (
        "baseline is shown to lose by at least 15 points on citation validity"
    )


@pytest.mark.parametrize(
    ("candidate", "threshold", "shown"),
    [
        # every resample gives 1.0: a lower bound equal to the threshold is shown (>=)
        pytest.param([True] * 4, 100, True, id="lower-bound-equals-threshold"),
        # 3 of 4: the difference is 0.75 and the lower bound below it, short of 100 points
        pytest.param([True, True, True, False], 100, False, id="short-of-threshold"),
        pytest.param([True, True, True, False], 0, True, id="zero-threshold"),
    ],
)
def test_shown_at_the_threshold(candidate: list[bool], threshold: float, shown: bool) -> None:
    comparison = compare(arm("base", [False] * 4), arm("cand", candidate), threshold)
    mc = comparison.metrics["correctness"]
    assert mc.shown is shown
    assert mc.shown == (mc.lo >= threshold / 100 - 1e-9)


def test_not_shown_and_ruled_out_when_the_arms_agree() -> None:
    # identical outcomes: every resampled difference is 0, far below 15 points
    comparison = compare(arm("base", [True, False] * 3), arm("cand", [True, False] * 3), 15)
    mc = comparison.metrics["correctness"]
    assert (mc.diff, mc.lo, mc.hi, mc.shown, mc.ruled_out) == (0.0, 0.0, 0.0, False, True)
    assert mc.statement == (
        "baseline is not shown to lose by 15 points on correctness; a loss of 15 points or "
        "more is ruled out"
    )


def test_metrics_json_says_shown_true_and_kappa_null() -> None:
    base = arm("base", [False] * 5)
    cand = arm("cand", [True] * 5)  # both raters always agree, and always say yes: p_e = 1
    comparison = compare(base, cand, 15)
    result = ScoreResult(
        suite="s",
        n=5,
        arms={"base": base, "cand": cand},
        comparisons=(comparison,),
        params=Params(),
    )
    data = metrics_json(result)
    assert data["comparisons"]["cand_vs_base"]["correctness"]["shown"] is True
    assert data["comparisons"]["cand_vs_base"]["citation_validity"]["shown"] is True
    for name in ("base", "cand"):
        assert data["arms"][name]["kappa"] is None  # undefined, never NaN
        assert data["arms"][name]["kappa_agreement"] == 1.0
        assert data["arms"][name]["kappa_n"] == 5
    assert base.kappa.reason  # the report says why instead of a number
