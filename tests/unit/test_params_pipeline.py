"""params.yaml keys that drive the pipeline (#15): harnesses, people, the comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject

from flightdeck.cli import cli
from flightdeck.errors import InputError
from flightdeck.params import load_params
from flightdeck.params.sections import PersonArm

PERSON = """people:
  chat:
    from: exports/a.csv
    by: Sam Ortiz
    model: Chat (m-1)
    date: {date}
    snapshot: attachments
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("date", ['"2024-06-24"', "2024-06-24"], ids=["quoted", "yaml-date"])
def test_people_are_read_with_paths_from_the_project_root(tmp_path: Path, date: str) -> None:
    params = load_params(write(tmp_path, PERSON.format(date=date)))
    assert params.people == {
        "chat": PersonArm(
            "chat",
            tmp_path / "exports/a.csv",
            "Sam Ortiz",
            "Chat (m-1)",
            "2024-06-24",
            tmp_path / "attachments",
        )
    }
    assert params.warnings == ()


def test_comparison_keys_are_read(tmp_path: Path) -> None:
    params = load_params(
        write(
            tmp_path,
            "harnesses:\n  lexical: python -m flightdeck experiment agent repo-search\n"
            "baseline: lexical\ncandidate: chat\npinned: lexical\n",
        )
    )
    assert (params.baseline, params.candidate, params.pinned) == ("lexical", "chat", "lexical")
    assert params.harnesses == {"lexical": "python -m flightdeck experiment agent repo-search"}


BAD = [
    pytest.param(
        PERSON.format(date='"2024-06-24"').replace("by:", "bye:"),
        "params.yaml:2: person arm 'chat': unknown key 'bye' (a typo?); it takes from, by, "
        "model, date, snapshot",
        id="unknown-key",
    ),
    pytest.param(
        PERSON.format(date='"2024-06-24"').replace("    snapshot: attachments\n", ""),
        "params.yaml:2: person arm 'chat' needs snapshot: (add it)",
        id="missing-key",
    ),
    pytest.param(
        "baseline: lexical\n",
        "params.yaml:1: give baseline: and candidate: together (add candidate:)",
        id="baseline-alone",
    ),
    pytest.param(
        "baseline: a\ncandidate: a\n",
        "params.yaml:2: the candidate is the baseline; name another arm",
        id="same-arm",
    ),
    pytest.param(
        "harnesses:\n  lexical: 3\n",
        "params.yaml:1: harnesses must map arm names to commands",
        id="harness-not-a-command",
    ),
    pytest.param(
        "pinned: ../x\n",
        "params.yaml:1: arm name '../x' holds '/'; use letters, digits and . _ @ + - only "
        "(the name becomes a file name, answers/<arm>.jsonl)",
        id="pinned-bad-name",
    ),
    # the one arm-name rule (project.check_arm_name), not a copy that allowed any length
    pytest.param(
        "baseline: " + "a" * 101 + "\ncandidate: b\n",
        "params.yaml:1: arm name 'aaaaaaaaaaaaaaaaaaaa'... is 101 characters; use at most 100",
        id="baseline-too-long",
    ),
    pytest.param(
        "people:\n  -x:\n    from: a.jsonl\n",
        "params.yaml:2: arm name '-x' must start with a letter or digit (a leading . hides its "
        "files, a leading - reads as a flag)",
        id="person-arm-leading-dash",
    ),
    pytest.param(
        "pinned: 5\n",
        "params.yaml:1: pinned must be an arm name",
        id="pinned-not-a-string",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_pipeline_keys_name_their_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_params(path)
    assert str(caught.value) == f"{tmp_path}/{message}"


def test_gate_without_a_pinned_arm_says_where_to_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "candidate: chat\npinned: null\n")
    (tmp_path / "suites" / "s").mkdir(parents=True)
    result = CliRunner().invoke(cli, ["knowledge", "gate", "suites/s"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --pinned: name the pinned arm: --pinned ARM, or pinned: in params.yaml\n"
    )


def test_score_and_gate_take_the_arms_from_params(runner: CliRunner, project: BuiltProject) -> None:
    from tests.cli.test_knowledge import seal

    seal(runner, project)
    project.write_arm("lexical", [True, False, False, True])
    project.write_arm("chat", [True, True, True, False])
    params = project.root / "params.yaml"
    params.write_text(
        params.read_text()
        + "arms: [lexical, chat]\nbaseline: lexical\ncandidate: chat\npinned: lexical\n"
    )
    scored = runner.invoke(cli, ["knowledge", "score", str(project.suite)], catch_exceptions=False)
    assert scored.exit_code == 0, scored.output
    assert "chat - lexical, correctness: +25.0 points" in scored.output
    # one arm named on the command line: the params' comparison needs both, so none is made
    alone = runner.invoke(
        cli, ["knowledge", "score", str(project.suite), "--arm", "chat", "--json", "one.json"]
    )
    assert alone.exit_code == 0, alone.output
    assert json.loads((project.root / "one.json").read_text())["comparisons"] == {}
    gate = runner.invoke(cli, ["knowledge", "gate", str(project.suite)])
    assert gate.exit_code in (0, 1), gate.output
    assert "chat - lexical = +25.0 points" in gate.output
