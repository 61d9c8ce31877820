"""`flightdeck knowledge import-answers` through click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from tests.builders import FILES_AS_OF, FILES_LATER, BuiltProject, sha

from flightdeck.cli import FlightdeckGroup, cli
from flightdeck.cli.knowledge_import import import_answers_command
from flightdeck.suite.records import read_meta
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

ADR = "docs/adr/0001-database.md"


def command_group() -> tuple[click.Group, list[str]]:
    """The real `flightdeck knowledge` once import-answers is attached, else a stand-in."""
    knowledge = cli.commands.get("knowledge")
    if isinstance(knowledge, click.Group) and "import-answers" in knowledge.commands:
        assert knowledge.commands["import-answers"] is import_answers_command
        return cli, ["knowledge", "import-answers"]
    group = FlightdeckGroup(commands={"import-answers": import_answers_command})
    return group, ["import-answers"]


def invoke(runner: CliRunner, *args: str) -> Result:
    group, prefix = command_group()
    return runner.invoke(group, [*prefix, *args])


def attachments(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "attachments" / "sdlc" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "attachments"


def seal_suite(project: BuiltProject) -> None:
    seal(project.folder, repos=RepoSet({"sdlc": project.repo}, project.root / "cache"))


def common(project: BuiltProject, source: Path) -> list[str]:
    return [str(project.suite), "--arm", "projects", "--from", str(source), "--by", "ada"]


def import_from(
    runner: CliRunner, project: BuiltProject, source: Path, folder: Path, *, model: str = "m"
) -> Result:
    """``import-answers`` of ``source`` by ada on 2026-11-20, the snapshot in ``folder``."""
    args = ["--model", model, "--date", "2026-11-20", "--snapshot", str(folder)]
    return invoke(runner, *common(project, source), *args)


def test_import_from_csv_with_a_folder_snapshot(runner: CliRunner, project: BuiltProject) -> None:
    folder = attachments(project.root, FILES_AS_OF | FILES_LATER)  # one stale attachment
    source = project.root / "answers.csv"
    source.write_text(
        "id,answer,citations\n"
        f"q1,Postgres for JSONB,sdlc/{ADR}#L1-L3\n"
        "q2,make release,sdlc/docs/runbooks/deploy.md;sdlc/docs/imagined.md\n"
    )
    result = import_from(runner, project, source, folder, model="chat-model-1")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"demo-v1 / projects: imported 2 answers for 4 questions into "
        f"{project.suite / 'answers' / 'projects.jsonl'}\n"
        "unanswered (scored as missing): q3, q4\n"
        f"meta: {project.suite / 'answers' / 'projects.meta.json'}\n"
    )
    assert result.stderr == (
        f"warning: {project.suite} is not sealed; answers to an unsealed suite cannot be "
        "scored until it is\n"
        f"warning: {source}:3: sdlc/docs/imagined.md is not in the snapshot; "
        "recorded with the sha256 of no bytes\n"
    )
    lines = (project.suite / "answers" / "projects.jsonl").read_text().splitlines()
    q1 = json.loads(lines[0])
    assert q1["citations"] == [{"uri": f"sdlc/{ADR}#L1-L3", "sha256": sha(FILES_LATER[ADR])}]
    meta = read_meta(project.suite / "answers" / "projects.meta.json")
    assert meta.runner == "person"
    assert meta.fields["knowledge_snapshot"]["folder"] == folder.as_posix()


def test_import_with_snapshot_commits_and_json_output(
    runner: CliRunner, project: BuiltProject
) -> None:
    source = project.root / "answers.jsonl"
    source.write_text(json.dumps({"id": "q1", "answer": "x", "citations": [f"sdlc/{ADR}"]}) + "\n")
    result = invoke(
        runner,
        *common(project, source),
        "--model",
        "m",
        "--date",
        "2026-11-20T09:30:00+00:00",
        "--snapshot-commit",
        f"sdlc={project.as_of}",
        "--json",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["answered"] == ["q1"]
    assert payload["knowledge_snapshot"] == {"sdlc": [project.as_of]}
    assert payload["absent_citations"] == []


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        pytest.param(
            ["--snapshot-commit", "sdlc=abc"],
            "error: --snapshot-commit: 'sdlc=abc' is not REPO=<40-hex commit>; "
            "e.g. sdlc=$(git rev-parse v1.2)\n",
            id="short-commit",
        ),
        pytest.param(
            [],
            "error: --snapshot: give the documents the person had: --snapshot DIR or "
            "--snapshot-commit REPO=SHA\n",
            id="no-snapshot",
        ),
    ],
)
def test_bad_options_exit_2_with_one_line(
    runner: CliRunner, project: BuiltProject, extra: list[str], line: str
) -> None:
    seal_suite(project)
    source = project.root / "answers.jsonl"
    source.write_text(json.dumps({"id": "q1", "answer": "x", "citations": []}) + "\n")
    result = invoke(
        runner, *common(project, source), "--model", "m", "--date", "2026-11-20", *extra
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == line
    assert "Traceback" not in result.output


def test_a_bad_row_exits_2_naming_file_and_line(runner: CliRunner, project: BuiltProject) -> None:
    seal_suite(project)
    folder = attachments(project.root, FILES_AS_OF)
    source = project.root / "answers.jsonl"
    source.write_text('{"id": "q1", "answer": "x"}\n{"id": "q7", "answer": "y"}\n')
    result = import_from(runner, project, source, folder)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {source}:2: id 'q7' is not a question of this suite; fix the id or drop the row\n"
    )


def test_a_sealed_suite_that_changed_is_refused(runner: CliRunner, project: BuiltProject) -> None:
    seal_suite(project)
    keys = project.suite / "keys.jsonl"
    keys.write_text(keys.read_text().replace("@ada", "@bob"))
    source = project.root / "answers.jsonl"
    source.write_text(json.dumps({"id": "q1", "answer": "x", "citations": []}) + "\n")
    folder = attachments(project.root, FILES_AS_OF)
    result = import_from(runner, project, source, folder)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {keys}: changed after sealing (it no longer matches manifest.json); a changed "
        "question is a new suite version (demo-v2), never an edit: restore the file\n"
    )
    assert not (project.suite / "answers").exists()


def sealed_with_one_answer(project: BuiltProject) -> tuple[Path, Path]:
    """Seal the suite; an export answering q1 and the files at as_of to import it with."""
    seal_suite(project)
    source = project.root / "answers.jsonl"
    source.write_text(json.dumps({"id": "q1", "answer": "Postgres", "citations": []}) + "\n")
    return source, attachments(project.root, FILES_AS_OF)


def test_a_scored_arm_is_not_reimported_with_other_answers(
    runner: CliRunner, project: BuiltProject
) -> None:
    source, folder = sealed_with_one_answer(project)
    args = [*common(project, source), "--model", "m", "--date", "2026-11-20"]
    assert invoke(runner, *args, "--snapshot", str(folder)).exit_code == 0
    answers = project.suite / "answers" / "projects.jsonl"
    ledger = project.suite / "scores.jsonl"
    ledger.write_text(
        json.dumps(
            {
                "arm": "projects",
                "answers_sha256": sha(answers.read_text()),
                "scored_at": "2026-11-21T09:00:00Z",
            }
        )
        + "\n"
    )
    again = invoke(runner, *args, "--snapshot", str(folder), "--replace")
    assert again.exit_code == 0, again.output  # the same bytes: nothing changes
    before = answers.read_bytes()
    source.write_text(json.dumps({"id": "q1", "answer": "MySQL", "citations": []}) + "\n")
    result = invoke(runner, *args, "--snapshot", str(folder), "--replace")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {answers}: arm 'projects' was scored on 2026-11-21T09:00:00Z; its answers "
        "cannot change: import or run them under a new arm name\n"
    )
    assert answers.read_bytes() == before


def test_a_scored_arm_keeps_its_provenance_when_reimported(
    runner: CliRunner, project: BuiltProject
) -> None:
    """The same answers by another person or model would rewrite what the report says."""
    source, folder = sealed_with_one_answer(project)
    args = [*common(project, source), "--date", "2026-11-20", "--snapshot", str(folder)]
    assert invoke(runner, *args, "--model", "chat-model-1").exit_code == 0
    answers = project.suite / "answers" / "projects.jsonl"
    meta = project.suite / "answers" / "projects.meta.json"
    entry = {"arm": "projects", "answers_sha256": sha(answers.read_text())}
    ledger = project.suite / "scores.jsonl"
    ledger.write_text(json.dumps({**entry, "scored_at": "2026-11-21T09:00:00Z"}) + "\n")
    before = meta.read_bytes()
    result = invoke(runner, *args, "--model", "chat-model-2", "--replace")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {meta}: arm 'projects' was scored on 2026-11-21T09:00:00Z with model "
        "'chat-model-1'; a scored arm's provenance cannot change: give the same --model, or "
        "import under a new arm name\n"
    )
    assert meta.read_bytes() == before
    (folder / "sdlc" / "extra.md").write_text("exported later\n")
    result = invoke(runner, *args, "--model", "chat-model-1", "--replace")
    assert result.stderr == (
        f"error: {meta}: arm 'projects' was scored on 2026-11-21T09:00:00Z with another "
        "snapshot (its documents differ); a scored arm's provenance cannot change: give the "
        "same --snapshot, or import under a new arm name\n"
    )
    (folder / "sdlc" / "extra.md").unlink()
    moved = folder.rename(project.root / "exported")  # the same folder given by another path
    again = [*common(project, source), "--date", "2026-11-20", "--snapshot", str(moved)]
    result = invoke(runner, *again, "--model", "chat-model-1", "--replace")
    assert result.exit_code == 0, result.output


def import_csv(
    runner: CliRunner, project: BuiltProject, answer: str, name: str = "long.csv"
) -> Result:
    folder = attachments(project.root, FILES_AS_OF)
    source = project.root / name
    quoted = '"' + answer.replace('"', '""') + '"'
    source.write_text(f"id,answer,citations\nq2,short,\nq1,{quoted},sdlc/{ADR}\n")
    return import_from(runner, project, source, folder, model="chat-model-1")


def test_a_one_mebibyte_csv_answer_is_imported_whole(
    runner: CliRunner, project: BuiltProject
) -> None:
    # (#25) the csv module's default cell limit is 128 KiB; a long pasted reply is real
    line = 'Postgres, for "JSONB" support; see the ADR.\n'
    answer = (line * (2**20 // len(line) + 1))[: 2**20]
    assert len(answer.encode()) == 2**20
    result = import_csv(runner, project, answer)
    assert result.exit_code == 0, result.output
    records = [
        json.loads(text)
        for text in (project.suite / "answers" / "projects.jsonl").read_text().splitlines()
    ]
    assert [r["id"] for r in records] == ["q1", "q2"]
    assert records[0]["answer"] == answer


def test_an_answer_over_the_limit_is_refused_by_name(
    runner: CliRunner, project: BuiltProject
) -> None:
    from flightdeck.arms.people_rows import ANSWER_LIMIT

    seal_suite(project)
    result = import_csv(runner, project, "x" * (ANSWER_LIMIT + 1))
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {project.root / 'long.csv'}:3: a cell is longer than the answer-size limit "
        "(16 Mi characters); is this the right file?\n"
    )
    assert not (project.suite / "answers" / "projects.jsonl").exists()
    import csv

    assert csv.field_size_limit() == 128 * 1024  # the process-wide setting is put back
