"""Seal refuses what can never work, and `knowledge check` lists every problem (issue 10)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.builders import FILES_AS_OF, BuiltProject, sha, write_jsonl
from tests.gitrepo import git_env

from flightdeck.cli import cli


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args))


def snapshot(project: BuiltProject) -> dict[str, bytes]:
    """Every file of the project outside the repository: nothing may change on a refusal."""
    return {
        str(p.relative_to(project.root)): p.read_bytes()
        for p in sorted(project.root.rglob("*"))
        if p.is_file() and "repos" not in p.relative_to(project.root).parts
    }


def assert_refused(runner: CliRunner, project: BuiltProject, line: str) -> None:
    before = snapshot(project)
    result = invoke(runner, "knowledge", "seal", str(project.suite))
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {line}\n"
    assert "Traceback" not in result.output
    assert snapshot(project) == before
    check = invoke(runner, "knowledge", "check", str(project.suite))
    assert check.exit_code == 2
    assert check.stderr == f"error: {line}\n"
    assert snapshot(project) == before


def edit(path: Path, index: int, **changes: Any) -> None:
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[index].update(changes)
    write_jsonl(path, lines)


def commit_special(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """Add (mode, object, path) index entries (symlinks, submodules) and commit them."""
    env = git_env(5)
    for mode, obj, path in entries:
        subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "update-index",
                "--add",
                "--cacheinfo",
                f"{mode},{obj},{path}",
            ],
            env=env,
            check=True,
        )
    subprocess.run(
        ["git", "-C", str(repo), "commit", "--quiet", "-m", "special"], env=env, check=True
    )
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], env=env, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_a_scope_without_its_repository_prefix_is_refused(
    runner: CliRunner, project: BuiltProject
) -> None:
    edit(project.suite / "questions.jsonl", 1, scope=["docs/runbooks/*.md"])
    assert_refused(
        runner,
        project,
        f"{project.suite / 'questions.jsonl'}:2: scope pattern 'docs/runbooks/*.md' does not "
        "start with a repository of as_of (sdlc); write it as <repo>/<path>, e.g. "
        "sdlc/docs/runbooks/*.md",
    )


def test_a_scope_that_matches_no_file_is_refused(runner: CliRunner, project: BuiltProject) -> None:
    edit(project.suite / "questions.jsonl", 1, scope=["sdlc/docs/runbook/*.md"])
    assert_refused(
        runner,
        project,
        f"{project.suite / 'questions.jsonl'}:2: scope pattern 'sdlc/docs/runbook/*.md' matches "
        f"no file of 'sdlc' at as_of {project.as_of[:12]}; fix the pattern",
    )


def test_a_source_outside_the_scope_is_refused(runner: CliRunner, project: BuiltProject) -> None:
    # runbooks/*.md does not reach runbooks/old/: no arm could read the source.
    edit(project.suite / "questions.jsonl", 1, scope=["sdlc/docs/runbooks/*.md"])
    old = "docs/runbooks/old/deploy-v0.md"
    edit(
        project.suite / "keys.jsonl",
        1,
        valid_sources=[{"uri": f"sdlc/{old}", "sha256": sha(FILES_AS_OF[old])}],
    )
    assert_refused(
        runner,
        project,
        f"{project.suite / 'keys.jsonl'}:2: valid source 'sdlc/docs/runbooks/old/deploy-v0.md' "
        "is outside the scope of question 'q2' (sdlc/docs/runbooks/*.md), so no arm could read it; "
        "widen the scope or fix the uri",
    )


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("sdlc/docs/../CODEOWNERS", id="dot-dot"),
        pytest.param("sdlc/./CODEOWNERS", id="dot"),
        pytest.param("sdlc//CODEOWNERS", id="double-slash"),
    ],
)
def test_a_source_path_that_is_not_normal_is_refused_on_its_line(
    runner: CliRunner, project: BuiltProject, uri: str
) -> None:
    edit(project.suite / "keys.jsonl", 2, valid_sources=[{"uri": uri, "sha256": "0" * 64}])
    assert_refused(
        runner,
        project,
        f"{project.suite / 'keys.jsonl'}:3: valid source {uri!r} is not a normal path (no "
        "'..', './', leading or double '/'); write <repo>/<path> as git shows it",
    )


def test_symlinks_and_submodules_are_refused_as_sources(
    runner: CliRunner, project: BuiltProject
) -> None:
    blob = (
        subprocess.run(
            ["git", "-C", str(project.repo), "hash-object", "-w", "--stdin"],
            input=b"CODEOWNERS",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    special = commit_special(
        project.repo, [("120000", blob, "OWNERS-LINK"), ("160000", project.as_of, "vendor/lib")]
    )
    questions = project.suite / "questions.jsonl"
    for index in (2, 3):
        edit(questions, index, as_of={"sdlc": special})
    edit(
        project.suite / "keys.jsonl",
        2,
        valid_sources=[{"uri": "sdlc/OWNERS-LINK", "sha256": "0" * 64}],
    )
    edit(
        project.suite / "keys.jsonl",
        3,
        valid_sources=[{"uri": "sdlc/vendor/lib", "sha256": "0" * 64}],
    )
    keys = project.suite / "keys.jsonl"
    before = snapshot(project)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: {keys}:3: valid source 'sdlc/OWNERS-LINK' is a symlink at as_of "
        f"{special[:12]}; workspaces leave symlinks out: cite its target",
        f"error: {keys}:4: valid source 'sdlc/vendor/lib' is a submodule at as_of "
        f"{special[:12]}; workspaces leave submodules out",
    ]
    assert snapshot(project) == before


def test_a_blob_missing_from_a_partial_clone_is_named_as_such(
    runner: CliRunner, project: BuiltProject, tmp_path: Path
) -> None:
    origin = tmp_path / "origin"
    shutil.copytree(project.repo, origin)
    subprocess.run(
        ["git", "-C", str(origin), "config", "uploadpack.allowFilter", "true"], check=True
    )
    partial = project.root / "repos" / "partial"
    subprocess.run(
        [
            "git",
            "clone",
            "--quiet",
            "--bare",
            "--filter=blob:none",
            f"file://{origin}",
            str(partial),
        ],
        env=git_env(),
        check=True,
        capture_output=True,
    )
    shutil.rmtree(origin)  # nothing to fetch the blobs from: as on a machine offline
    (project.root / "params.yaml").write_text("holdouts: holdouts\nrepos:\n  sdlc: repos/partial\n")
    keys = project.suite / "keys.jsonl"
    before = snapshot(project)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 4
    assert lines[0] == (
        f"error: {keys}:1: valid source 'sdlc/docs/adr/0001-database.md' exists at as_of "
        f"{project.as_of[:12]}, but the blob is not in this clone (a partial clone?); fetch it "
        "or point repos: at a full clone"
    )
    assert snapshot(project) == before


def test_an_as_of_repository_nobody_names_is_reported_at_its_question(
    runner: CliRunner, project: BuiltProject
) -> None:
    edit(project.suite / "questions.jsonl", 0, as_of={"sdlc": project.as_of, "wiki": "a" * 40})
    assert_refused(
        runner,
        project,
        f"{project.suite / 'questions.jsonl'}:1: as_of names repository 'wiki', which neither "
        "params.yaml repos: nor --repo names; add it (--repo wiki=PATH), or seal with "
        "--unchecked to seal without checking it",
    )


def test_check_lists_every_problem_in_file_and_line_order(
    runner: CliRunner, project: BuiltProject
) -> None:
    questions, keys = project.suite / "questions.jsonl", project.suite / "keys.jsonl"
    edit(questions, 3, scope=["docs/*.md"])
    edit(questions, 0, scope=["sdlc/nothing/**"])
    edit(keys, 2, valid_sources=[{"uri": "sdlc/CODEOWNERS", "sha256": "0" * 64}])
    before = snapshot(project)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: {questions}:1: scope pattern 'sdlc/nothing/**' matches no file of 'sdlc' at "
        f"as_of {project.as_of[:12]}; fix the pattern",
        f"error: {questions}:4: scope pattern 'docs/*.md' does not start with a repository of "
        "as_of (sdlc); write it as <repo>/<path>, e.g. sdlc/docs/*.md",
        f"error: {keys}:3: valid source 'sdlc/CODEOWNERS' has sha256 "
        f"{sha(FILES_AS_OF['CODEOWNERS'])} at as_of {project.as_of[:12]}, not {'0' * 64}; "
        "record the hash of the file at as_of",
    ]
    assert snapshot(project) == before


def test_a_repository_path_that_does_not_exist_is_reported_once(
    runner: CliRunner, project: BuiltProject
) -> None:
    (project.root / "params.yaml").write_text("repos:\n  sdlc: repos/sdlx\n")
    assert_refused(
        runner,
        project,
        "repos/sdlx: repository 'sdlc' not found at this path; fix repos: in params.yaml "
        "or --repo sdlc=PATH, or seal with --unchecked to seal without checking it",
    )


def test_a_named_repository_not_at_hand_seals_unchecked(
    runner: CliRunner, project: BuiltProject
) -> None:
    """A clone that is not on this machine: --unchecked seals and records it, as for a name."""
    (project.root / "params.yaml").write_text("repos:\n  sdlc: repos/sdlx\n")
    result = invoke(runner, "knowledge", "seal", str(project.suite), "--unchecked")
    assert result.exit_code == 0, result.output
    assert "0 sources checked" in result.stdout
    manifest = json.loads((project.suite / "manifest.json").read_text())
    assert manifest["unchecked_repos"] == ["sdlc"]


def test_check_on_a_sealed_suite_refuses_a_changed_file_as_seal_does(
    runner: CliRunner, project: BuiltProject
) -> None:
    assert invoke(runner, "knowledge", "seal", str(project.suite)).exit_code == 0
    check = invoke(runner, "knowledge", "check", str(project.suite))
    assert (check.exit_code, check.stdout) == (
        0,
        f"{project.suite}: every seal check passes; it is sealed and its files are intact\n",
    )
    edit(project.suite / "questions.jsonl", 0, question="Why Postgres, really?")
    assert_refused(
        runner,
        project,
        f"{project.suite / 'questions.jsonl'}: changed after sealing (it no longer matches "
        "manifest.json); a changed question is a new suite version (demo-v2), never an edit: "
        "restore the file",
    )


def test_check_passes_a_suite_that_would_seal_and_writes_nothing(
    runner: CliRunner, project: BuiltProject
) -> None:
    before = snapshot(project)
    result = invoke(runner, "knowledge", "check", str(project.suite))
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(
        "every seal check passes; seal it with `flightdeck knowledge seal`\n"
    )
    assert snapshot(project) == before
    assert invoke(runner, "knowledge", "seal", str(project.suite)).exit_code == 0


def test_check_caps_its_list_at_fifty(runner: CliRunner, project: BuiltProject) -> None:
    questions = project.suite / "questions.jsonl"
    edit(questions, 0, scope=[f"missing{i}/*.md" for i in range(60)])
    result = invoke(runner, "knowledge", "check", str(project.suite))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 51
    assert lines[-1] == "error: ... and 10 more problems"


def test_status_and_the_report_say_a_suite_was_sealed_unchecked(
    runner: CliRunner, project: BuiltProject
) -> None:
    params = project.root / "params.yaml"
    text = params.read_text()
    params.write_text("holdouts: holdouts\n")
    assert invoke(runner, "knowledge", "seal", str(project.suite), "--unchecked").exit_code == 0
    params.write_text(text)
    status = invoke(runner, "knowledge", "status", str(project.suite))
    assert "!! sealed --unchecked: its sources in sdlc were never checked at as_of" in status.stdout
    answers = [
        {"id": q, "answer": "x", "citations": [project.source("CODEOWNERS")]}
        for q in ("q1", "q2", "q3", "q4")
    ]
    project.write_answers("a", answers)
    project.write_meta("a")
    labels = [
        {"id": a["id"], "rater": r, "correct": True, "unsupported": []}
        for r in ("x", "y")
        for a in answers
    ]
    project.write_labels("a", labels)
    result = invoke(runner, "knowledge", "score", str(project.suite), "--arm", "a")
    assert result.exit_code == 0, result.output
    report = (project.root / "reports" / "demo-v1.md").read_text()
    assert (
        "**it was sealed --unchecked: its sources in sdlc were never checked at as_of**" in report
    )


def test_a_misspelt_as_of_repository_is_blamed_before_the_uris(
    runner: CliRunner, project: BuiltProject
) -> None:
    edit(project.suite / "questions.jsonl", 0, as_of={"sldc": project.as_of})
    result = invoke(runner, "knowledge", "seal", str(project.suite))
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {project.suite / 'questions.jsonl'}:1: as_of names repository 'sldc', which "
        "neither params.yaml repos: nor --repo names; add it (--repo sldc=PATH), or seal with "
        "--unchecked to seal without checking it\n"
    )
