"""params.yaml's plain values: the Struct is the rule, the words say what it refused (#23).

Each value's type, choices and range are msgspec constraints on one Struct; the message is
built from where msgspec refuses it and the words table, on the key's own line. A rule
msgspec cannot hold (points written as a proportion; a judge that must be declared) is a
check after decoding. Every message is pinned word for word, with its line.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from flightdeck.errors import InputError
from flightdeck.params import Params, load_params
from flightdeck.params.top_level import TopLevel


def refused(tmp_path: Path, text: str) -> InputError:
    path = tmp_path / "params.yaml"
    path.write_text("# the project's params\n" + text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_params(path)
    return caught.value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("resamples: 0\n", "resamples must be at least 1, got 0", id="resamples"),
        pytest.param(
            "confidence: 1\n", "confidence must be between 0 and 1, got 1.0", id="confidence"
        ),
        pytest.param(
            "confidence: .nan\n", "confidence must be between 0 and 1, got nan", id="confidence-nan"
        ),
        pytest.param(
            "threshold: 150\n", "threshold must be 0 to 100 points, got 150.0", id="threshold"
        ),
        pytest.param(
            "threshold: -.inf\n", "threshold must be 0 to 100 points, got -inf", id="threshold-inf"
        ),
        pytest.param(
            "threshold: 0.15\n",
            "threshold is in points, not a proportion: did you mean 15?",
            id="threshold-proportion",
        ),
        pytest.param("min_raters: 0\n", "min_raters must be at least 1, got 0", id="min-raters"),
        pytest.param("seed: -1\n", "seed must be non-negative, got -1", id="seed"),
        pytest.param(
            "decision: exact\n",
            "decision must be calibrated or percentile, got 'exact'",
            id="decision",
        ),
        pytest.param(
            "decision: 5\n", "decision must be calibrated or percentile, got 5", id="decision-int"
        ),
        pytest.param(
            "gate_margin: 101\n", "gate_margin must be 0 to 100 points, got 101.0", id="gate-margin"
        ),
        pytest.param(
            "gate_margin: 0.1\n",
            "gate_margin is in points, not a proportion: did you mean 10?",
            id="gate-margin-proportion",
        ),
        pytest.param(
            "judge_min_kappa: 1.5\n", "judge_min_kappa must be -1 to 1, got 1.5", id="kappa"
        ),
        pytest.param(
            "resamples: many\n",
            "resamples must be an integer, got 'many'; write a whole number",
            id="resamples-type",
        ),
        pytest.param(
            "confidence: high\n",
            "confidence must be a number, got 'high'; write a proportion such as 0.95",
            id="confidence-type",
        ),
        pytest.param("sandbox: docker\n", "sandbox must be bwrap or none", id="sandbox"),
        pytest.param("sandbox: [bwrap]\n", "sandbox must be bwrap or none", id="sandbox-list"),
        pytest.param(
            "harness_sandbox: [a]\n",
            "harness_sandbox must map arm names to {bind, network, network_allow, pass_env, "
            "sandbox}",
            id="harness-sandbox",
        ),
        pytest.param(
            "harness_sandbox:\n  a: true\n",
            "harness_sandbox must map arm names to {bind, network, network_allow, pass_env, "
            "sandbox}",
            id="harness-sandbox-entry",
        ),
        pytest.param(
            "harnesses: [a]\n", "harnesses must map arm names to commands", id="harnesses"
        ),
        pytest.param(
            "harnesses:\n  a: ' '\n", "harnesses must map arm names to commands", id="blank-command"
        ),
        pytest.param(
            "harnesses:\n  a: 5\n", "harnesses must map arm names to commands", id="int-command"
        ),
        pytest.param("baseline: [a]\n", "baseline must be an arm name", id="baseline"),
        pytest.param("candidate: 5\n", "candidate must be an arm name", id="candidate"),
        pytest.param("pinned: {a: 1}\n", "pinned must be an arm name", id="pinned"),
        pytest.param("judges: [a]\n", "judges must map names to {kind: ...}", id="judges"),
        pytest.param("people: [a]\n", "people must map arm names to {from, by, ...}", id="people"),
        pytest.param(
            "suite: [demo]\n",
            "suite must be a suite name, got ['demo']; write the name of a folder under suites/",
            id="suite-not-a-name",
        ),
        pytest.param(
            "judge: facts\n",
            "judge 'facts' is not declared under judges: (none declared); declare it or fix "
            "the name",
            id="judge-undeclared",
        ),
        pytest.param(
            "judges:\n  facts:\n    kind: facts\njudge: [facts]\n",
            "judge ['facts'] is not declared under judges: (facts); declare it or fix the name",
            id="judge-not-a-name",
        ),
    ],
)
def test_each_refused_value_is_said_on_its_line(tmp_path: Path, text: str, message: str) -> None:
    error = refused(tmp_path, text)
    assert error.message == message
    key = message.split()[0]  # every message starts with its key
    lines = ("# the project's params\n" + text).splitlines()
    assert error.line == next(n for n, t in enumerate(lines, 1) if t.startswith(f"{key}:"))


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        pytest.param("resamples", 0, "must be at least 1, got 0", id="resamples"),
        pytest.param("seed", -2, "must be non-negative, got -2", id="seed"),
        pytest.param("confidence", 1.5, "must be between 0 and 1, got 1.5", id="confidence"),
        pytest.param("threshold", 101.0, "must be 0 to 100 points, got 101.0", id="threshold"),
        pytest.param(
            "threshold", 0.15, "points, not a proportion: did you mean 15?", id="proportion"
        ),
        pytest.param("min_raters", 0, "must be at least 1, got 0", id="min-raters"),
        pytest.param("gate_margin", -1.0, "must be 0 to 100 points, got -1.0", id="gate-margin"),
    ],
)
def test_a_flag_is_refused_by_the_same_rule_in_its_own_words(
    tmp_path: Path, flag: str, value: float, message: str
) -> None:
    params = Params(root=tmp_path)
    with pytest.raises(InputError) as caught:
        params.with_overrides(**{flag: value})
    assert (caught.value.path, caught.value.line) == (f"--{flag.replace('_', '-')}", None)
    assert caught.value.message == message


def test_the_ranges_and_choices_are_the_structs() -> None:
    """One rule, one place: the ranges and choices are msgspec constraints on TopLevel."""
    schema = msgspec.json.schema(TopLevel)["$defs"]["TopLevel"]["properties"]

    def of(name: str) -> dict[str, object]:
        kinds = schema[name].get("anyOf", [schema[name]])
        return next(s for s in kinds if s.get("type") != "null")

    assert of("resamples") == {"type": "integer", "minimum": 1}
    assert of("seed") == {"type": "integer", "minimum": 0}
    assert of("confidence") == {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
    assert of("threshold") == of("gate_margin") == {"type": "number", "minimum": 0, "maximum": 100}
    assert of("judge_min_kappa") == {"type": "number", "minimum": -1, "maximum": 1}
    assert of("decision") == {"enum": ["calibrated", "percentile"]}
    assert of("sandbox") == {"enum": ["bwrap", "none"]}
