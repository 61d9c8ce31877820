"""Import takes real exports (#15): sniffed CSV delimiters, URLs, repositories outside as_of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.builders import FILES_AS_OF, BuiltProject, labels_for, sha

from flightdeck.arms.people_rows import sniff_delimiter
from flightdeck.cli import cli
from flightdeck.scoring.fabricated import SPLIT as FABRICATED_SPLIT
from flightdeck.suite.citations import opaque_sha256
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

ADR = "docs/adr/0001-database.md"
DEPLOY = "docs/runbooks/deploy.md"
URL = "https://wiki.example.com/deploy?team=infra"


def attachments(root: Path) -> Path:
    for name, text in FILES_AS_OF.items():
        path = root / "attachments" / "sdlc" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "attachments"


def import_csv(runner: CliRunner, project: BuiltProject, text: str, name: str = "a.csv") -> Result:
    if not (project.suite / "manifest.json").exists():
        seal(
            project.folder,
            repos=RepoSet({"sdlc": project.repo}, project.root / "cache"),
            holdouts=project.root / "holdouts",
        )
    source = project.root / name
    source.write_text(text, encoding="utf-8")
    return runner.invoke(
        cli,
        [
            "knowledge",
            "import-answers",
            str(project.suite),
            "--arm",
            "projects",
            "--from",
            str(source),
            "--by",
            "ada",
            "--model",
            "chat-model-1",
            "--date",
            "2026-11-20",
            "--snapshot",
            str(attachments(project.root)),
        ],
    )


def answers(project: BuiltProject) -> dict[str, list[dict[str, str]]]:
    path = project.suite / "answers" / "projects.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: r["citations"] for r in lines}


EXPORTS = [
    pytest.param(",", id="comma"),
    pytest.param(";", id="semicolon"),
    pytest.param("\t", id="tab"),
]


@pytest.mark.parametrize("delimiter", EXPORTS)
def test_the_csv_delimiter_is_sniffed(
    runner: CliRunner, project: BuiltProject, delimiter: str
) -> None:
    # answers holding the other delimiters, quoted as spreadsheets write them
    rows = [
        ["id", "answer", "citations"],
        ["q1", '"Postgres, for JSONB; it said so"', f"sdlc/{ADR}#L1-L3"],
        ["q2", '"make release\tthen tag"', f"sdlc/{DEPLOY} | sdlc/CODEOWNERS"],
    ]
    text = "".join(delimiter.join(row) + "\n" for row in rows)
    result = import_csv(runner, project, text)
    assert result.exit_code == 0, result.output
    got = answers(project)
    assert got["q1"] == [{"uri": f"sdlc/{ADR}#L1-L3", "sha256": sha(FILES_AS_OF[ADR])}]
    assert [c["uri"] for c in got["q2"]] == [f"sdlc/{DEPLOY}", "sdlc/CODEOWNERS"]
    lines = (project.suite / "answers" / "projects.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["answer"] == "Postgres, for JSONB; it said so"
    assert json.loads(lines[1])["answer"] == "make release\tthen tag"


SNIFFED = [
    pytest.param("id,answer\nq1,x\n", ",", id="comma"),
    pytest.param("id;answer;citations\nq1;x, y;sdlc/a.md\n", ";", id="semicolon"),
    pytest.param("id\tanswer\nq1\tx; y, z\n", "\t", id="tab"),
    # the sniffer alone would take ',' here (more commas than tabs in the sample)
    pytest.param("id\tanswer\nq1\ta, b, c, d\nq2\te, f, g\n", "\t", id="header-decides"),
    pytest.param("id|answer\nq1|x\n", ",", id="pipe-not-taken"),
]


@pytest.mark.parametrize(("text", "expected"), SNIFFED)
def test_sniff_delimiter_takes_only_comma_semicolon_or_tab(text: str, expected: str) -> None:
    assert sniff_delimiter(text) == expected


def test_a_pipe_separated_file_is_refused_naming_the_column(
    runner: CliRunner, project: BuiltProject
) -> None:
    result = import_csv(runner, project, "id|answer|citations\nq1|x|\n")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {project.root / 'a.csv'}:1: no 'id' column; name the columns id,answer,citations\n"
    )
    assert not (project.suite / "answers").exists()


def test_url_citations_are_kept_opaque(runner: CliRunner, project: BuiltProject) -> None:
    result = import_csv(
        runner, project, f"id,answer,citations\nq2,make release,{URL} sdlc/{DEPLOY}\n"
    )
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert answers(project)["q2"] == [
        {"uri": URL, "sha256": opaque_sha256(URL)},
        {"uri": f"sdlc/{DEPLOY}", "sha256": sha(FILES_AS_OF[DEPLOY])},
    ]


def test_a_repository_outside_as_of_is_kept_warned_and_scored_fabricated(
    runner: CliRunner, project: BuiltProject
) -> None:
    # the key of q1 lists an opaque URL too, without a sha256: seal gives it the URL's hash
    keys = project.suite / "keys.jsonl"
    records = [json.loads(line) for line in keys.read_text().splitlines()]
    records[1]["valid_sources"].append({"uri": URL})
    keys.write_text("".join(json.dumps(r) + "\n" for r in records))
    seal(
        project.folder,
        repos=RepoSet({"sdlc": project.repo}, project.root / "cache"),
        holdouts=project.root / "holdouts",
    )
    text = (
        "id,answer,citations\n"
        f"q1,Postgres for JSONB,sdlc/{ADR} infra/{ADR}\n"
        f"q2,make release,{URL}\n"
        f"q3,@ada,sdlc/CODEOWNERS\n"
        f"q4,Python 3.9,sdlc/CHANGELOG.md\n"
    )
    result = import_csv(runner, project, text)
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"warning: {project.root / 'a.csv'}:2: citation 'infra/{ADR}' names a repository "
        "outside question q1's as_of (sdlc); kept, it scores as fabricated\n"
    )
    assert [c["uri"] for c in answers(project)["q1"]] == [f"sdlc/{ADR}", f"infra/{ADR}"]
    meta = json.loads((project.suite / "answers" / "projects.meta.json").read_text())
    assert meta["outside_citations"] == 1

    records = [{"id": q, "answer": "", "citations": []} for q in ("q1", "q2", "q3", "q4")]
    project.write_labels("projects", labels_for(records, {"ana": [True] * 4, "ravi": [True] * 4}))
    scored = runner.invoke(
        cli,
        ["knowledge", "score", str(project.suite), "--arm", "projects", "--json", "m.json"],
        catch_exceptions=False,
    )
    assert scored.exit_code == 0, scored.output
    citations = json.loads(Path("m.json").read_text())["arms"]["projects"]["citations"]
    # infra/... is fabricated; the URL matches q2's valid URL source, so it is valid
    assert citations == {
        "valid": 4,
        "fabricated": 1,
        "stale": 0,
        "unsupported": 0,
        **dict.fromkeys(FABRICATED_SPLIT, 0),
        "fabricated_no_such_file": 1,  # (#21) a repository outside as_of: nothing there
    }
