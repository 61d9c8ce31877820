"""One fault, one line: bad input a review found printed twice, exited 1, or named no line.

`knowledge check` lists every problem, one line each: a questions or keys line that does not
read is not also reported as its partner's orphan, even when its id cannot be read (not an
object, nested too deeply) or is another line's (a duplicate id), and an empty file is one
line, not one more per id of the other file. params.yaml's aliases are refused when they
multiply the file (an anchor bomb) or hold themselves, and nesting past the interpreter's
limit is bad input, not a crash. A number JSON cannot read names its line in a document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject, write_jsonl

from flightdeck.cli import cli


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args))


def assert_error(result: Result, line: str) -> None:
    """Bad input: exit 2, exactly one stderr line, no traceback."""
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {line}\n"
    assert "Traceback" not in result.output


def check(runner: CliRunner, project: BuiltProject) -> Result:
    return invoke(runner, "knowledge", "check", str(project.suite))


def put_line(path: Path, index: int, text: str) -> None:
    lines = path.read_text().splitlines()
    lines[index] = text
    path.write_text("\n".join(lines) + "\n")


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- knowledge check: a bad line is not also its partner's orphan ---------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "[1, 2]", "expected a JSON object, got an array; write one object per line",
            id="not-object",
        ),
        pytest.param(
            "[" * 100_000 + "]" * 100_000, "JSON nested too deeply; write flat records",
            id="deep-nesting",
        ),
        pytest.param(
            '{"id": "q1",', "not JSON (Expecting property name enclosed in double quotes at "
            "column 13); write one object per line",
            id="bad-json-with-another-lines-id",
        ),
    ],
)  # fmt: skip
@pytest.mark.parametrize("name", ["questions.jsonl", "keys.jsonl"])
def test_a_line_that_does_not_read_is_one_line(
    runner: CliRunner, project: BuiltProject, name: str, text: str, message: str
) -> None:
    path = project.suite / name
    put_line(path, 1, text)  # q2's line
    assert_error(check(runner, project), f"{path}:2: {message}")


@pytest.mark.parametrize("name", ["questions.jsonl", "keys.jsonl"])
def test_a_duplicate_id_is_one_line(runner: CliRunner, project: BuiltProject, name: str) -> None:
    path = project.suite / name
    lines = records(path)
    lines[1]["id"] = "q1"  # q2's line now says q1: q2's partner is not an orphan
    write_jsonl(path, lines)
    assert_error(
        check(runner, project), f"{path}:2: duplicate id 'q1' (first on line 1); make ids unique"
    )


def test_a_duplicate_canary_is_one_line(runner: CliRunner, project: BuiltProject) -> None:
    keys = project.suite / "keys.jsonl"
    lines = records(keys)
    for number, key in enumerate(lines):
        key["canary"] = f"FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-{number:032x}"
    lines[1]["canary"] = lines[0]["canary"]  # q2's key is refused: its question is no orphan
    write_jsonl(keys, lines)
    assert_error(
        check(runner, project),
        f"{keys}:2: duplicate canary (first on line 1); remove the canaries and seal again",
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("questions.jsonl", "no questions", id="questions"),
        pytest.param("keys.jsonl", "no keys", id="keys"),
    ],
)
def test_an_empty_file_is_one_line(
    runner: CliRunner, project: BuiltProject, name: str, message: str
) -> None:
    path = project.suite / name
    path.write_text("\n")
    assert_error(check(runner, project), f"{path}: {message}; write one JSON object per line")


def test_more_orphans_than_unreadable_lines_are_all_listed(
    runner: CliRunner, project: BuiltProject
) -> None:
    questions, keys = project.suite / "questions.jsonl", project.suite / "keys.jsonl"
    put_line(questions, 1, "[1, 2]")  # q2's question does not read
    lines = records(keys)
    lines[3]["id"] = "q9"  # and a typo in q4's key: a second fault, wherever q2's key is
    write_jsonl(keys, lines)
    result = check(runner, project)
    assert result.exit_code == 2, result.output
    orphan = "has no question in questions.jsonl; the two files need the same ids"
    assert result.stderr.splitlines() == [
        f"error: {questions}:2: expected a JSON object, got an array; write one object per line",
        f"error: {questions}:4: id 'q4' has no key in keys.jsonl; the two files need the same ids",
        f"error: {keys}:2: id 'q2' {orphan}",
        f"error: {keys}:4: id 'q9' {orphan}",
    ]


def test_an_orphan_beside_a_bad_line_that_names_its_id_is_listed(
    runner: CliRunner, project: BuiltProject
) -> None:
    questions, keys = project.suite / "questions.jsonl", project.suite / "keys.jsonl"
    lines = records(questions)
    lines[1]["kind"] = "nope"  # q2's question is bad but says it is q2
    write_jsonl(questions, lines)
    lines = records(keys)
    lines[3]["id"] = "q9"
    write_jsonl(keys, lines)
    got = check(runner, project).stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in got] == [
        f"{questions}:2",
        f"{questions}:4",
        f"{keys}:4",
    ]


# --- params.yaml: aliases that multiply the file, or hold themselves ------------------------

PARAMS = "seed: 0\nresamples: 2000\nholdouts: holdouts\nrepos:\n  sdlc: repos/sdlc\n"
BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{before}'] * 9)}]\n"
    for before, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def status(runner: CliRunner, project: BuiltProject) -> Result:
    return invoke(runner, "knowledge", "status", str(project.suite))


def test_an_anchor_bomb_is_refused_on_its_line(runner: CliRunner, project: BuiltProject) -> None:
    # 9**9 (387 million) values from a file of a few hundred characters
    text = PARAMS + "a: &a [x, x, x, x, x, x, x, x, x]\n" + BOMB
    (project.root / "params.yaml").write_text(text)
    # 9 values on lines 1-5, a: 1 + 10, b: 1 + 91: 112; c's fourth *b (91 values each) takes
    # the count to 477, past the file's 447 characters
    assert_error(
        status(runner, project),
        f"params.yaml:8: alias *b makes the file stand for more values than its {len(text):,} "
        'characters: aliases of anchors that hold aliases multiply (a "billion laughs"); '
        "write the values out",
    )


def test_aliases_that_stand_for_fewer_values_than_the_file_has_characters_are_read(
    runner: CliRunner, project: BuiltProject
) -> None:
    people = (
        "people:\n  p1: &p1\n    from: x.csv\n    by: ada\n    model: m\n"
        "    date: 2026-11-01\n    snapshot: s/\n"
        "  p2: &p2\n    <<: *p1\n    from: y.csv\n"
        "  p3:\n    <<: *p2\n    from: z.csv\n"  # an alias of an anchor that holds one
    )
    (project.root / "params.yaml").write_text(PARAMS + people)
    result = status(runner, project)
    assert result.exit_code in (0, 1), result.output  # a verdict, not bad input
    assert result.stderr == ""


def test_an_alias_inside_its_own_anchor_is_refused(
    runner: CliRunner, project: BuiltProject
) -> None:
    (project.root / "params.yaml").write_text(PARAMS + "arms: &a [x, *a]\n")
    assert_error(
        status(runner, project),
        "params.yaml:6: alias *a is inside its own anchor &a (a value that holds itself); "
        "write the value out",
    )


def test_yaml_nested_past_the_interpreter_is_bad_input(
    runner: CliRunner, project: BuiltProject
) -> None:
    nested = "[" * 100_000 + "]" * 100_000
    (project.root / "params.yaml").write_text(PARAMS + f"arms: {nested}\n")
    assert_error(
        status(runner, project), "params.yaml:6: YAML nested too deeply; write flatter values"
    )


# --- a number JSON cannot read, on its line ---------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("number", "what"),
    [
        pytest.param(HUGE, "an integer of 5,000 digits (more than 4,300)", id="huge-int"),
        pytest.param(
            f"-{HUGE}", "an integer of 5,000 digits (more than 4,300)", id="huge-negative-int"
        ),
        pytest.param("1e999", "a number too large for a float ('1e999')", id="huge-float"),
    ],
)
def test_a_number_json_cannot_read_names_its_line_in_the_holdouts_manifest(
    runner: CliRunner, project: BuiltProject, number: str, what: str
) -> None:
    seal = invoke(runner, "knowledge", "seal", str(project.suite), "--holdouts", "holdouts")
    assert seal.exit_code == 0, seal.output
    path = project.root / "holdouts" / "manifest.json"
    text = path.read_text()
    assert '"format": 1' in text
    assert "\n" in text.strip()  # a document of several lines
    # the same digits earlier, in a string, are not the number
    text = text.replace("{", '{"note": "' + number + '",', 1).replace(
        '"format": 1', '"format": ' + number
    )
    path.write_text(text)
    line = next(
        n for n, t in enumerate(text.splitlines(), start=1) if t.lstrip().startswith('"format"')
    )
    assert line > 1
    assert_error(
        status(runner, project),
        f"holdouts/manifest.json:{line}: holds {what}; write a smaller number, or the number "
        "as a string",
    )


def test_a_control_character_in_params_yaml_is_one_line(
    runner: CliRunner, project: BuiltProject
) -> None:
    """PyYAML's reader refuses it as the loader is made, in a message of two lines."""
    (project.root / "params.yaml").write_text(PARAMS + "seed: 1\x00\n")
    assert_error(
        status(runner, project),
        "params.yaml:6: not YAML (character U+0000 is not allowed in YAML); remove it",
    )
