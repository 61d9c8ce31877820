"""Importing a person's answers: hashes from their snapshot, provenance, located errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.builders import FILES_AS_OF, FILES_LATER, BuiltProject, sha

from flightdeck.arms.people import ImportOptions, import_answers
from flightdeck.arms.people_rows import read_rows_with_format
from flightdeck.arms.snapshot import EMPTY_SHA256, folder_hash
from flightdeck.errors import InputError
from flightdeck.suite.records import read_answers, read_meta
from flightdeck.suite.repos import RepoSet

ADR = "docs/adr/0001-database.md"
DEPLOY = "docs/runbooks/deploy.md"


def snapshot(root: Path, files: dict[str, str]) -> Path:
    folder = root / "attachments"
    for name, text in files.items():
        path = folder / "sdlc" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def source(root: Path, name: str, content: str) -> Path:
    path = root / name
    path.write_text(content, encoding="utf-8")
    return path


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def do_import(project: BuiltProject, file: Path, **options: Any) -> Any:
    defaults: dict[str, Any] = {
        "by": "ada",
        "model": "chat-model-1",
        "date": "2026-11-20",
    }
    if "snapshot_commits" not in options and "snapshot_dir" not in options:
        defaults["snapshot_dir"] = snapshot(project.root, FILES_AS_OF)
    repos = options.pop("repos", {"sdlc": project.repo})
    how = ImportOptions(**(defaults | options))
    return import_answers(
        project.folder, "projects", file, how, repos=RepoSet(repos, project.folder.project.cache)
    )


def read(project: BuiltProject) -> dict[str, Any]:
    path = project.suite / "answers" / "projects.jsonl"
    return {json.loads(line)["id"]: json.loads(line) for line in path.read_text().splitlines()}


def test_jsonl_answers_are_hashed_from_the_snapshot_folder(project: BuiltProject) -> None:
    file = source(
        project.root,
        "answers.jsonl",
        jsonl(
            [
                {"id": "q2", "answer": "make release", "citations": [f"sdlc/{DEPLOY}#L3"]},
                {"id": "q1", "answer": "JSONB", "citations": [{"uri": f"sdlc/{ADR}"}]},
                {"id": "q3", "answer": "no idea", "citations": []},
            ]
        ),
    )
    result = do_import(project, file)
    got = read(project)
    assert list(got) == ["q1", "q2", "q3"]  # in the suite's order
    assert got["q1"]["citations"] == [{"uri": f"sdlc/{ADR}", "sha256": sha(FILES_AS_OF[ADR])}]
    assert got["q2"]["citations"][0]["sha256"] == sha(FILES_AS_OF[DEPLOY])
    assert result.unanswered == ["q4"]
    read_answers(project.suite / "answers" / "projects.jsonl", ["q1", "q2", "q3", "q4"])
    meta = read_meta(project.suite / "answers" / "projects.meta.json")
    assert meta.runner == "person"
    assert meta.fields["by"] == "ada"
    assert meta.fields["model"] == "chat-model-1"
    assert meta.fields["date"] == "2026-11-20"
    folder = project.root / "attachments"
    assert meta.fields["knowledge_snapshot"] == {
        "folder": folder.as_posix(),
        "sha256": folder_hash(folder)[0],
        "files": 5,
    }
    assert meta.fields["source"] == {"file": "answers.jsonl", "sha256": sha(file.read_text())}
    meta_bytes = (project.suite / "answers" / "projects.meta.json").read_bytes()
    assert meta_bytes.endswith(b"}\n")  # a text file: git and editors want the last newline


def test_the_folder_hash_is_the_documented_shell_pipeline(tmp_path: Path) -> None:
    folder = snapshot(tmp_path, {"b.md": "b\n", "a/z.md": "z\n", "a b.md": "space\n"})
    pipeline = (
        "find . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum"
    )
    shell = subprocess.run(
        pipeline, shell=True, cwd=folder, capture_output=True, text=True, check=True
    )
    assert folder_hash(folder) == (shell.stdout.split()[0], 3)


def test_a_stale_attachment_gets_the_stale_hash(project: BuiltProject) -> None:
    stale = FILES_AS_OF | FILES_LATER
    file = source(
        project.root, "a.jsonl", jsonl([{"id": "q1", "answer": "x", "citations": [f"sdlc/{ADR}"]}])
    )
    do_import(project, file, snapshot_dir=snapshot(project.root, stale))
    digest = read(project)["q1"]["citations"][0]["sha256"]
    assert digest == sha(FILES_LATER[ADR])
    assert digest != sha(FILES_AS_OF[ADR])


def test_a_file_behind_a_folder_symlink_is_not_in_the_snapshot(project: BuiltProject) -> None:
    """What a citation is hashed from is what the meta's snapshot hash covers, nothing else.

    The folder hash (like ``find -type f``) does not follow a symlinked folder, so a file
    behind one must not be hashed either: its bytes could change without the recorded
    snapshot changing.
    """
    folder = snapshot(project.root, {"CODEOWNERS": FILES_AS_OF["CODEOWNERS"]})
    elsewhere = project.root / "exported" / "docs" / "adr"
    elsewhere.mkdir(parents=True)
    (elsewhere / "0001-database.md").write_text(FILES_AS_OF[ADR])
    (folder / "sdlc" / "docs").symlink_to(project.root / "exported" / "docs")
    row = {"id": "q1", "answer": "x", "citations": [f"sdlc/{ADR}", "sdlc/CODEOWNERS"]}
    result = do_import(project, source(project.root, "a.jsonl", jsonl([row])), snapshot_dir=folder)
    assert folder_hash(folder)[1] == 1
    assert read(project)["q1"]["citations"] == [
        {"uri": f"sdlc/{ADR}", "sha256": EMPTY_SHA256},
        {"uri": "sdlc/CODEOWNERS", "sha256": sha(FILES_AS_OF["CODEOWNERS"])},
    ]
    assert [a.uri for a in result.absent] == [f"sdlc/{ADR}"]


@pytest.mark.parametrize("which", ["as_of", "later"])
def test_snapshot_commits_are_read_through_git(project: BuiltProject, which: str) -> None:
    commit = getattr(project, which)
    file = source(
        project.root, "a.jsonl", jsonl([{"id": "q1", "answer": "x", "citations": [f"sdlc/{ADR}"]}])
    )
    result = do_import(project, file, snapshot_commits={"sdlc": commit})
    expected = FILES_AS_OF[ADR] if which == "as_of" else FILES_LATER[ADR]
    assert read(project)["q1"]["citations"][0]["sha256"] == sha(expected)
    assert result.knowledge_snapshot == {"sdlc": [commit]}


def test_csv_with_separated_uris_and_a_multi_line_answer(project: BuiltProject) -> None:
    file = source(
        project.root,
        "answers.csv",
        "\ufeffid,answer,citations,notes\n"
        f'q1,"Postgres,\nfor JSONB",sdlc/{ADR}#L1-L3 ; sdlc/{DEPLOY}|sdlc/CODEOWNERS,checked\n'
        "\n"
        "q2,make release,,\n",
    )
    do_import(project, file)
    got = read(project)
    assert got["q1"]["answer"] == "Postgres,\nfor JSONB"
    assert [c["uri"] for c in got["q1"]["citations"]] == [
        f"sdlc/{ADR}#L1-L3",
        f"sdlc/{DEPLOY}",
        "sdlc/CODEOWNERS",
    ]
    assert got["q2"]["citations"] == []


def test_a_url_citation_keeps_its_given_hash(project: BuiltProject) -> None:
    url = {"uri": "https://wiki.example.com/db", "sha256": "A" * 64}
    file = source(project.root, "a.jsonl", jsonl([{"id": "q1", "answer": "x", "citations": [url]}]))
    do_import(project, file)
    assert read(project)["q1"]["citations"] == [{"uri": url["uri"], "sha256": "a" * 64}]


def test_a_citation_absent_from_the_snapshot_is_recorded_with_the_hash_of_nothing(
    project: BuiltProject,
) -> None:
    rows = [
        {"id": "q1", "answer": "x", "citations": [f"sdlc/{ADR}"]},
        {"id": "q2", "answer": "y", "citations": ["sdlc/docs/imagined.md#L2"]},
    ]
    file = source(project.root, "a.jsonl", jsonl(rows))
    result = do_import(project, file)
    assert read(project)["q2"]["citations"] == [
        {"uri": "sdlc/docs/imagined.md#L2", "sha256": EMPTY_SHA256}
    ]
    assert [(a.line, a.id, a.uri) for a in result.absent] == [(2, "q2", "sdlc/docs/imagined.md#L2")]
    meta = read_meta(project.suite / "answers" / "projects.meta.json")
    assert meta.fields["absent_citations"] == 1
    with pytest.raises(
        InputError, match=r"a.jsonl:2: citation 'sdlc/docs/imagined.md#L2' is not in"
    ):
        do_import(project, file, on_missing="error", replace=True)


def test_a_snapshot_holding_none_of_the_cited_files_is_refused(project: BuiltProject) -> None:
    file = source(
        project.root, "a.jsonl", jsonl([{"id": "q1", "answer": "x", "citations": [f"sdlc/{ADR}"]}])
    )
    with pytest.raises(InputError, match="none of the 1 cited files is in .*empty; check the"):
        do_import(project, file, snapshot_dir=_empty(project.root))


def _empty(root: Path) -> Path:
    (root / "empty").mkdir()
    return root / "empty"


ROW = {"id": "q1", "answer": "x", "citations": []}
BAD_ROWS = [
    pytest.param(
        jsonl([ROW, {**ROW, "id": "q9"}]), "a.jsonl:2: id 'q9' is not a question", id="unknown-id"
    ),
    pytest.param(
        jsonl([ROW, ROW]), "a.jsonl:2: second answer for 'q1' \\(first on line 1\\)", id="dup"
    ),
    pytest.param(jsonl([{**ROW, "answr": 1}]), "a.jsonl:1: unknown field 'answr'", id="field"),
    pytest.param(jsonl([{**ROW, "answer": 3}]), "a.jsonl:1: answer must be a string", id="answer"),
    pytest.param(jsonl([{**ROW, "id": ""}]), "a.jsonl:1: id must be a non-empty", id="empty-id"),
    pytest.param(
        jsonl([{**ROW, "citations": "sdlc/a.md"}]), "citations must be a list", id="citations"
    ),
    pytest.param(jsonl([{**ROW, "citations": [3]}]), "a.jsonl:1: citation 3 must be", id="item"),
    pytest.param(
        jsonl([{**ROW, "citations": ["infra/../a.md"]}]),
        "a.jsonl:1: citation 'infra/../a.md' has '..', '.' or an empty",
        id="other-repo-dotdot",
    ),
    pytest.param(
        jsonl([{**ROW, "citations": ["sdlc/../x.md"]}]), "has '..', '.' or an empty", id="dotdot"
    ),
    pytest.param(
        jsonl([{**ROW, "citations": [{"uri": "sdlc/a.md", "sha256": "0" * 64}]}]),
        "remove the sha256 of 'sdlc/a.md': it comes from the snapshot",
        id="repo-uri-with-sha",
    ),
    pytest.param("{not json\n", "a.jsonl:1: not JSON", id="not-json"),
    pytest.param("\n", "a.jsonl: no answers", id="empty"),
]


@pytest.mark.parametrize(("content", "match"), BAD_ROWS)
def test_bad_rows_name_the_file_and_line(project: BuiltProject, content: str, match: str) -> None:
    file = source(project.root, "a.jsonl", content)
    with pytest.raises(InputError, match=match):
        do_import(project, file)
    assert not (project.suite / "answers" / "projects.jsonl").exists()


BAD_CSV = [
    pytest.param("id,text\nq1,x\n", "a.csv:1: no 'answer' column", id="no-answer-column"),
    pytest.param("", "a.csv:1: empty file", id="empty"),
    pytest.param('id,answer\nq1,"a\nb"\n,x\n', "a.csv:4: id is empty", id="line-after-multiline"),
    pytest.param("id,answer\nq1,x,extra\n", "a.csv:2: 3 cells for 2 columns", id="cells"),
    pytest.param('id,answer\nq1,"x\n', "a.csv:2: not CSV", id="unclosed-quote"),
]


@pytest.mark.parametrize(("content", "match"), BAD_CSV)
def test_bad_csv_rows_name_the_line(project: BuiltProject, content: str, match: str) -> None:
    file = source(project.root, "a.csv", content)
    with pytest.raises(InputError, match=match):
        read_rows_with_format(file) if "not CSV" not in match else do_import(project, file)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        pytest.param({"date": "last tuesday"}, "--date: 'last tuesday' is not a date", id="date"),
        pytest.param({"by": " "}, "--by: is empty", id="by"),
        pytest.param({"snapshot_dir": None}, "give the documents the person had", id="none"),
        pytest.param(
            {"snapshot_commits": {"sdlc": "f" * 40}},
            "commit f{40} is not in repository 'sdlc'",
            id="unknown-commit",
        ),
        pytest.param(
            {"snapshot_commits": {"infra": "f" * 40}},
            "citations name repository 'sdlc'; add --snapshot-commit sdlc=<commit>",
            id="uncovered-repo",
        ),
        pytest.param({"arm": "a b"}, r"arm name 'a b' holds ' '; use letters", id="arm"),
    ],
)
def test_bad_options(project: BuiltProject, options: dict[str, Any], match: str) -> None:
    file = source(project.root, "a.jsonl", jsonl([{**ROW, "citations": [f"sdlc/{ADR}"]}]))
    arm = options.pop("arm", "projects")
    args: dict[str, Any] = {
        "by": "ada",
        "model": "m",
        "date": "2026-11-20",
        "snapshot_dir": snapshot(project.root, FILES_AS_OF),
    } | options
    if "snapshot_commits" in options:
        args.pop("snapshot_dir")
    repos = RepoSet({"sdlc": project.repo}, project.folder.project.cache)
    with pytest.raises(InputError, match=match):
        import_answers(project.folder, arm, file, ImportOptions(**args), repos=repos)


def test_both_snapshot_kinds_at_once_are_refused(project: BuiltProject) -> None:
    file = source(project.root, "a.jsonl", jsonl([ROW]))
    with pytest.raises(InputError, match="--snapshot DIR or --snapshot-commit"):
        do_import(
            project, file, snapshot_commits={"sdlc": project.as_of}, snapshot_dir=project.root
        )


def test_an_existing_arm_is_replaced_only_when_asked(project: BuiltProject) -> None:
    file = source(project.root, "a.jsonl", jsonl([ROW]))
    do_import(project, file)
    with pytest.raises(InputError, match="projects.jsonl: already exists; use a new arm name"):
        do_import(project, file)
    do_import(project, file, replace=True)


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="a.txt: unknown format; give a .jsonl, .csv or .tsv file"):
        read_rows_with_format(source(tmp_path, "a.txt", "x"))
