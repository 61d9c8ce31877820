"""The facts judge's matching, the kappa bootstrap, and the llm judge's call through inspect."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.errors import JudgeFailed
from flightdeck.params.sections import JudgeSpec
from flightdeck.rating.judge_calibration import KappaInterval, bootstrap_kappa
from flightdeck.rating.judge_llm import LlmJudge, parse_verdict, render_prompt
from flightdeck.rating.judgements import FactVerdict
from flightdeck.rating.judges import find_fact
from flightdeck.scoring.stats import cohens_kappa
from flightdeck.suite.records import Answer, Key, Question


@pytest.mark.parametrize(
    ("fact", "answer", "quote"),
    [
        pytest.param("JSONB support", "We chose it for jsonb support.", "jsonb support", id="case"),
        pytest.param("JSONB", "for ＪＳＯＮＢ columns", "ＪＳＯＮＢ", id="nfkc-full-width"),
        pytest.param("make release", "run `make`  release!", "make`  release", id="punctuation"),
        pytest.param("provider keys", "the provider key is", "provider key", id="plural"),
        pytest.param(
            "keys rotated", "we rotate keys; keys rotating daily", "keys rotating", id="inflection"
        ),
        pytest.param("per-team cost", "Per team, cost", "Per team, cost", id="hyphen-and-comma"),
        pytest.param("EUR 4,200", "the EUR 4.200 invoice", "EUR 4.200", id="number-punctuation"),
        pytest.param("keys rotated", "keys are rotated", None, id="word-between"),
        pytest.param("cost accounting", "cost is accounted per team", None, id="paraphrase"),
        pytest.param("value 1", "value 12", None, id="whole-words"),
        pytest.param("...", "anything ...", None, id="fact-without-words"),
    ],
)
def test_find_fact(fact: str, answer: str, quote: str | None) -> None:
    assert find_fact(fact, answer) == FactVerdict(fact, quote is not None, quote)


def sk_kappa(a: list[bool], b: list[bool]) -> float:
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(a, b))


# A hand-worked table: judge+/people+ 20, judge+/people- 5, judge-/people+ 3, judge-/people- 12.
# p_o = 32/40 = 0.8; p_judge = 25/40 = 0.625, p_people = 23/40 = 0.575;
# p_e = 0.625*0.575 + 0.375*0.425 = 0.359375 + 0.159375 = 0.51875;
# kappa = (0.8 - 0.51875) / (1 - 0.51875) = 0.28125 / 0.48125 = 0.584415...
JUDGE = [True] * 20 + [True] * 5 + [False] * 3 + [False] * 12
PEOPLE = [True] * 20 + [False] * 5 + [True] * 3 + [False] * 12


def test_kappa_by_hand_and_against_scikit_learn() -> None:
    k = cohens_kappa(JUDGE, PEOPLE)
    assert k.value == pytest.approx(0.28125 / 0.48125, abs=1e-12)
    assert k.value == pytest.approx(sk_kappa(JUDGE, PEOPLE), abs=1e-12)
    assert k.agreement == pytest.approx(0.8)


def test_bootstrap_interval_against_a_fixed_seed_loop_with_scikit_learn() -> None:
    """The same draws, one resample at a time, kappa by scikit-learn, numpy percentiles."""
    import numpy as np

    resamples, seed = 300, 7
    interval = bootstrap_kappa(JUDGE, PEOPLE, resamples=resamples, confidence=0.95, seed=seed)
    lo, hi = interval.lo, interval.hi
    assert lo is not None
    assert hi is not None
    idx = np.random.default_rng(seed).integers(0, len(JUDGE), (resamples, len(JUDGE)))
    values = []
    for row in idx:
        a, b = [JUDGE[i] for i in row], [PEOPLE[i] for i in row]
        if len(set(a)) == 1 and set(a) == set(b):
            continue  # p_e = 1: undefined
        values.append(sk_kappa(a, b))
    expected = np.percentile(values, [2.5, 97.5])
    assert interval.undefined_draws == resamples - len(values) == 0
    assert lo == pytest.approx(expected[0], abs=1e-12)
    assert hi == pytest.approx(expected[1], abs=1e-12)
    assert lo < 0.5844 < hi
    # Deterministic: the same seed gives equal floats; another seed another interval.
    again = bootstrap_kappa(JUDGE, PEOPLE, resamples=resamples, confidence=0.95, seed=seed)
    assert again == KappaInterval(lo, hi, undefined_draws=0)
    other = bootstrap_kappa(JUDGE, PEOPLE, resamples=resamples, confidence=0.95, seed=8)
    assert other.lo != lo


def test_bootstrap_edges() -> None:
    # n = 1: every resample has one label from both, p_e = 1, kappa undefined.
    assert bootstrap_kappa([True], [True], resamples=50, confidence=0.95, seed=0) == KappaInterval(
        None, None, undefined_draws=50
    )
    assert bootstrap_kappa([], [], resamples=10, confidence=0.95, seed=0) == KappaInterval(
        None, None, undefined_draws=10
    )
    # Perfect agreement with both labels present: kappa 1 wherever it is defined.
    perfect = bootstrap_kappa(
        [True, False] * 10, [True, False] * 10, resamples=200, confidence=0.95, seed=0
    )
    assert perfect == KappaInterval(1.0, 1.0, undefined_draws=0)


QUESTION = Question("q1", "Why Postgres?", "decision-why", {}, ())
KEY = Key("q1", "ADR 1: JSONB.", ("JSONB support", "ADR 1"), (), None)
ANSWER = Answer("q1", "We chose Postgres for {answer} JSONB support.", (), "0" * 64)


def test_the_prompt_is_filled_in_once() -> None:
    template = "Q: {question}\nKEY: {answer_key}\nFACTS:\n{facts}\nA: {answer}\n"
    assert render_prompt(template, QUESTION, KEY, ANSWER) == (
        "Q: Why Postgres?\nKEY: ADR 1: JSONB.\nFACTS:\n1. JSONB support\n2. ADR 1\n"
        "A: We chose Postgres for {answer} JSONB support.\n"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param({"facts": []}, "record_verdict needs facts", id="no-contradicts"),
        pytest.param(
            {"facts": [{"number": 1, "present": True, "quote": "x"}], "contradicts_key": False},
            r"no verdict on fact\(s\) 2",
            id="a-fact-missing",
        ),
        pytest.param(
            {"facts": [{"number": 3, "present": True, "quote": "x"}], "contradicts_key": False},
            "fact number 3 is not 1..2",
            id="bad-number",
        ),
    ],
)
def test_a_malformed_tool_call_is_no_verdict(arguments: dict, message: str) -> None:
    with pytest.raises(JudgeFailed, match=message):
        parse_verdict(arguments, KEY)


def llm_spec(tmp_path, template: str = "FACTS:\n{facts}\nANSWER:\n{answer}\n") -> JudgeSpec:  # type: ignore[no-untyped-def]
    prompt = tmp_path / "rubric.md"
    prompt.write_text(template)
    return JudgeSpec("rubric", "llm", "mockllm/model", prompt, 0.0)


def test_llm_judge_through_mockllm(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = [
        ModelOutput.for_tool_call(
            "mockllm/model",
            "record_verdict",
            {
                "facts": [
                    {"number": 1, "present": True, "quote": "JSONB support"},
                    {"number": 2, "present": False, "quote": ""},
                ],
                "contradicts_key": False,
            },
        ),
        ModelOutput.for_tool_call(
            "mockllm/model",
            "record_verdict",
            {
                "facts": [
                    {"number": 2, "present": True, "quote": "ADR 1"},
                    {"number": 1, "present": True, "quote": "JSONB"},
                ],
                "contradicts_key": True,
            },
        ),
        ModelOutput.from_content("mockllm/model", "I think it is fine."),
    ]
    for output in outputs:  # given usage, mockllm counts no tokens (tiktoken would download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    judge = LlmJudge(llm_spec(tmp_path), model=model)
    try:
        first = judge(QUESTION, KEY, ANSWER)
        assert first.correct is False
        assert first.facts == (
            FactVerdict("JSONB support", True, "JSONB support"),
            FactVerdict("ADR 1", False, None),
        )
        second = judge(QUESTION, KEY, ANSWER)  # every fact present, but it contradicts the key
        assert [f.present for f in second.facts] == [True, True]
        assert second.correct is False
        with pytest.raises(JudgeFailed, match="the model did not call record_verdict"):
            judge(QUESTION, KEY, ANSWER)
    finally:
        judge.close()


def test_a_prompt_without_the_answer_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from flightdeck.errors import InputError

    with pytest.raises(InputError, match=r"the prompt has no \{answer\} placeholder"):
        LlmJudge(llm_spec(tmp_path, "FACTS: {facts}"))


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        pytest.param("nosuch/x", r"\(Model API nosuch", id="inspect-cannot-open"),
        pytest.param(
            "openai-api/nokey/m",
            r"\(openai-api/nokey/m reads NOKEY_BASE_URL; set it",
            id="the-shared-name-rule",
        ),
    ],
)
def test_a_judge_model_that_cannot_be_opened_names_params_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, reason: str
) -> None:
    from dataclasses import replace

    from flightdeck.errors import InputError

    monkeypatch.delenv("NOKEY_BASE_URL", raising=False)
    judge = LlmJudge(replace(llm_spec(tmp_path), model=model))
    try:
        with pytest.raises(
            InputError, match=rf"^params.yaml: judge 'rubric': cannot open model '{model}' {reason}"
        ):
            judge(QUESTION, KEY, ANSWER)
    finally:
        judge.close()
