"""Sources hashed for the author, and `knowledge new` (#15)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.builders import FILES_AS_OF, QUESTIONS, BuiltProject, sha, write_jsonl
from tests.gitrepo import git_env

from flightdeck.cli import cli
from flightdeck.suite.citations import opaque_sha256

URL = "https://wiki.example.com/postgres"


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args))


def keys(project: BuiltProject) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in (project.suite / "keys.jsonl").read_text().splitlines()]


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "repos" not in p.relative_to(root).parts
    }


def drop_hashes(project: BuiltProject) -> None:
    records = keys(project)
    for record in records:
        for source in record["valid_sources"]:
            del source["sha256"]
    records[0]["valid_sources"].append({"uri": URL})
    write_jsonl(project.suite / "keys.jsonl", records)


def test_seal_computes_the_sha256_an_author_left_out(
    runner: CliRunner, project: BuiltProject
) -> None:
    drop_hashes(project)
    check = invoke(runner, "knowledge", "check", str(project.suite))
    assert check.exit_code == 0, check.output
    result = invoke(runner, "knowledge", "seal", str(project.suite))
    assert result.exit_code == 0, result.output
    sealed = keys(project)
    adr = "docs/adr/0001-database.md"
    assert sealed[0]["valid_sources"] == [
        {"uri": f"sdlc/{adr}", "sha256": sha(FILES_AS_OF[adr])},
        {"uri": URL, "sha256": opaque_sha256(URL)},
    ]
    # the hashes are those of the files at as_of, not at HEAD (which changed the ADR)
    for record, (_, _, _, path, _) in zip(sealed, QUESTIONS, strict=True):
        assert record["valid_sources"][0]["sha256"] == sha(FILES_AS_OF[path])
        assert record["canary"]
    # and everything downstream reads them as before: status, a second seal is a no-op
    again = invoke(runner, "knowledge", "seal", str(project.suite))
    assert again.exit_code == 0, again.output


def test_a_wrong_sha256_is_still_refused_when_others_are_left_out(
    runner: CliRunner, project: BuiltProject
) -> None:
    drop_hashes(project)
    records = keys(project)
    records[1]["valid_sources"][0]["sha256"] = "0" * 64
    write_jsonl(project.suite / "keys.jsonl", records)
    before = files(project.root)
    result = invoke(runner, "knowledge", "seal", str(project.suite))
    assert result.exit_code == 2
    path = "docs/runbooks/deploy.md"
    assert result.stderr == (
        f"error: {project.suite / 'keys.jsonl'}:2: valid source 'sdlc/{path}' has sha256 "
        f"{sha(FILES_AS_OF[path])} at as_of {project.as_of[:12]}, not {'0' * 64}; record the "
        "hash of the file at as_of\n"
    )
    assert files(project.root) == before


def test_a_missing_sha256_without_its_repository_is_refused_even_unchecked(
    runner: CliRunner, project: BuiltProject
) -> None:
    drop_hashes(project)
    (project.root / "params.yaml").write_text("holdouts: holdouts\n")
    before = files(project.root)
    result = invoke(runner, "knowledge", "seal", str(project.suite), "--unchecked")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {project.suite / 'keys.jsonl'}:1: valid source "
        "'sdlc/docs/adr/0001-database.md' has no sha256 and repository 'sdlc' is not at hand to "
        "compute it; give its sha256 or the repository (--repo sdlc=PATH)\n"
    )
    assert files(project.root) == before


def test_a_sealed_key_without_sha256_is_refused(runner: CliRunner, project: BuiltProject) -> None:
    assert invoke(runner, "knowledge", "seal", str(project.suite)).exit_code == 0
    records = keys(project)
    del records[2]["valid_sources"][0]["sha256"]
    write_jsonl(project.suite / "keys.jsonl", records)
    result = invoke(runner, "knowledge", "status", str(project.suite))
    # the seal no longer matches, and the keys reader never takes a sealed key without a hash
    from flightdeck.errors import InputError
    from flightdeck.suite.records import Canaries, read_keys

    with pytest.raises(InputError, match=r"keys.jsonl:3: each entry of valid_sources must be"):
        read_keys(project.suite / "keys.jsonl", canaries=Canaries.REQUIRED)
    with pytest.raises(
        InputError, match=r"keys.jsonl:3: valid source '.*' has no sha256, but the key has a canary"
    ):
        read_keys(project.suite / "keys.jsonl", canaries=Canaries.EITHER)  # it has a canary: sealed
    assert result.exit_code == 1


# --- knowledge new ----------------------------------------------------------------------


def tag(repo: Path, name: str, commit: str) -> None:
    subprocess.run(["git", "-C", str(repo), "tag", name, commit], env=git_env(), check=True)


REVS = [
    pytest.param(lambda p: "v1", id="tag"),
    pytest.param(lambda p: "main", id="branch-at-head"),
    pytest.param(lambda p: p.as_of[:7], id="short-hash"),
    pytest.param(lambda p: p.as_of, id="full-hash"),
]


@pytest.mark.parametrize("rev", REVS)
def test_new_resolves_the_revision_to_the_full_commit(
    runner: CliRunner, project: BuiltProject, rev
) -> None:  # type: ignore[no-untyped-def]
    tag(project.repo, "v1", project.as_of)
    given = rev(project)
    expected = project.later if given == "main" else project.as_of
    suite = project.root / "suites" / "team-v1"
    result = invoke(runner, "knowledge", "new", str(suite), "--as-of", f"sdlc={given}")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"sdlc: {given} is {expected}"
    question = json.loads((suite / "questions.jsonl").read_text())
    assert question["as_of"] == {"sdlc": expected}
    assert json.loads((suite / "keys.jsonl").read_text())["valid_sources"][0].keys() == {"uri"}
    readme = (suite / "README.md").read_text()
    assert f"- `sdlc` at `{expected}`" in readme
    # the example passes every seal check as written, its sha256 left for seal
    check = invoke(runner, "knowledge", "check", str(suite))
    assert check.exit_code == 0, check.output


def test_new_cites_a_readme_when_there_is_one(runner: CliRunner, project: BuiltProject) -> None:
    suite = project.root / "suites" / "team-v1"
    assert invoke(runner, "knowledge", "new", str(suite), "--as-of", "sdlc=main").exit_code == 0
    key = json.loads((suite / "keys.jsonl").read_text())
    # no README in the repository: the shallowest file, by name
    assert key["valid_sources"] == [{"uri": "sdlc/CHANGELOG.md"}]


REFUSED = [
    pytest.param(
        ["--as-of", "sdlc=v9"],
        "error: --as-of: 'v9' names no commit of repository 'sdlc' ({repo}) (an unknown tag or "
        "branch, or a short hash that is ambiguous); give a tag, a branch or a longer hash",
        id="unknown-rev",
    ),
    pytest.param(
        ["--as-of", "infra=main"],
        "error: --as-of: repository 'infra' is in neither params.yaml repos: nor --repo; add it "
        "(--repo infra=PATH)",
        id="unknown-repo",
    ),
    pytest.param(
        ["--as-of", "sdlc"],
        "error: --as-of: 'sdlc' is not REPO=REV; e.g. --as-of sdlc=v1.2 or sdlc=main",
        id="no-rev",
    ),
    pytest.param(
        ["--as-of", "sdlc=main", "--as-of", "sdlc=v1"],
        "error: --as-of: repository 'sdlc' is named twice; name it once",
        id="twice",
    ),
]


@pytest.mark.parametrize(("args", "line"), REFUSED)
def test_new_refusals(runner: CliRunner, project: BuiltProject, args: list[str], line: str) -> None:
    suite = project.root / "suites" / "team-v1"
    before = files(project.root)
    result = invoke(runner, "knowledge", "new", str(suite), *args)
    assert result.exit_code == 2, result.output
    assert result.stderr == line.format(repo="repos/sdlc") + "\n"
    assert "Traceback" not in result.output
    assert files(project.root) == before
    assert not suite.exists()


def test_new_never_overwrites_a_suite(runner: CliRunner, project: BuiltProject) -> None:
    before = files(project.root)
    result = invoke(runner, "knowledge", "new", str(project.suite), "--as-of", "sdlc=main")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {project.suite / 'questions.jsonl'}: already exists; a suite is never "
        "overwritten: pick a new suite name (…-v2)\n"
    )
    assert files(project.root) == before
