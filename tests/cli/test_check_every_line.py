"""`knowledge check` lists every problem of every line in one run, spans past the end of a
file are refused, and a short commit is named in full (#21)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tests.builders import FILES_AS_OF, BuiltProject, sha, write_jsonl
from tests.cli.test_seal_checks import assert_refused, edit, invoke, snapshot


def test_check_reads_on_past_bad_lines(runner: CliRunner, project: BuiltProject) -> None:
    questions, keys = project.suite / "questions.jsonl", project.suite / "keys.jsonl"
    edit(questions, 0, kind="decison-why")  # a kind typo on line 1
    edit(questions, 3, scope=["docs/*.md"])  # and a scope problem after it
    lines = questions.read_text().splitlines()
    lines[2] = lines[2][:-1]  # line 3: JSON cut short
    questions.write_text("\n".join(lines) + "\n")
    edit(keys, 1, required_facts=[])  # a bad key line
    edit(keys, 3, valid_sources=[{"uri": "sdlc/CODEOWNERS", "sha256": "0" * 64}])
    before = snapshot(project)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    assert result.exit_code == 2
    got = result.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in got] == [
        f"{questions}:1",
        f"{questions}:3",
        f"{questions}:4",
        f"{keys}:2",
        f"{keys}:4",
    ]
    assert got[0] == (
        f"error: {questions}:1: kind 'decison-why' is unknown; use one of "
        "decision-why, blocker, what-changed, how-to, who-owns"
    )
    assert got[2].endswith("write it as <repo>/<path>, e.g. sdlc/docs/*.md")
    assert got[3] == f"error: {keys}:2: required_facts is empty; list at least one"
    assert got[4].startswith(f"error: {keys}:4: valid source 'sdlc/CODEOWNERS' has sha256 ")
    # the questions of lines 1 and 3 (bad JSON) still have their keys: no orphans reported
    assert not any("has no question" in line for line in got)
    assert snapshot(project) == before


def test_a_duplicate_id_and_a_bad_line_are_both_listed(
    runner: CliRunner, project: BuiltProject
) -> None:
    questions = project.suite / "questions.jsonl"
    records = [json.loads(x) for x in questions.read_text().splitlines()]
    records[1]["kind"] = "nope"
    records.append(dict(records[0]))  # q1 again, on line 6
    write_jsonl(questions, records)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    got = result.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in got] == [
        f"{questions}:2",
        f"{questions}:{len(records)}",
    ]
    assert got[1] == (
        f"error: {questions}:{len(records)}: duplicate id 'q1' (first on line 1); make ids unique"
    )


def test_check_counts_every_bad_line_past_the_cap(runner: CliRunner, project: BuiltProject) -> None:
    questions = project.suite / "questions.jsonl"
    first = json.loads(questions.read_text().splitlines()[0])
    bad = [dict(first, id=f"x{i}", kind="nope") for i in range(70)]
    write_jsonl(questions, [json.loads(x) for x in questions.read_text().splitlines()] + bad)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    lines = result.stderr.splitlines()
    assert len(lines) == 51
    assert lines[-1] == "error: ... and 20 more problems"


@pytest.mark.parametrize(
    ("uri", "refused"),
    [
        pytest.param("sdlc/CODEOWNERS#L1-L2", False, id="last-line"),
        pytest.param("sdlc/CODEOWNERS#L2", False, id="single-last-line"),
        pytest.param("sdlc/CODEOWNERS#L1-L3", True, id="one-past"),
        pytest.param("sdlc/CODEOWNERS#L40-L900", True, id="far-past"),
        pytest.param("sdlc/CODEOWNERS#L3", True, id="single-past"),
    ],
)
def test_a_span_past_the_end_of_the_file_is_refused(
    runner: CliRunner, project: BuiltProject, uri: str, refused: bool
) -> None:
    # CODEOWNERS at as_of has 2 lines ("docs/ @ada\nsrc/ @grace\n")
    digest = sha(FILES_AS_OF["CODEOWNERS"])
    edit(project.suite / "keys.jsonl", 2, valid_sources=[{"uri": uri, "sha256": digest}])
    if not refused:
        assert invoke(runner, "knowledge", "check", str(project.suite)).exit_code == 0
        return
    end = uri.rsplit("L", 1)[1]
    assert_refused(
        runner,
        project,
        f"{project.suite / 'keys.jsonl'}:3: valid source {uri!r} names line {end}, past the end "
        f"of the file at as_of {project.as_of[:12]} (2 lines); fix the span",
    )


def test_a_short_commit_is_named_in_full(runner: CliRunner, project: BuiltProject) -> None:
    short = project.as_of[:7]
    edit(project.suite / "questions.jsonl", 0, as_of={"sdlc": short})
    assert_refused(
        runner,
        project,
        f"{project.suite / 'questions.jsonl'}:1: as_of commit for 'sdlc' must be a full 40-hex "
        f"commit, got {short!r}; {short!r} is {project.as_of} in 'sdlc': write that",
    )
