"""`flightdeck init` (#15): the files a project needs, never an overwrite, only in git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from tests.gitrepo import git_env

from flightdeck.cli import cli

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = [
    "params.yaml",
    "dvc.yaml",
    ".gitattributes",
    ".github/workflows/knowledge-evals.yml",
    "suites/.gitkeep",
    "holdouts/.gitkeep",
]


def git_init(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--quiet", str(folder)], env=git_env(), check=True)
    return folder


# A pin as a team passes it: flightdeck's repository at one full commit.
PIN = "git+https://github.com/acme/flightdeck@0123456789abcdef0123456789abcdef01234567"


def init(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, ["init", *args, "--no-dvc", "--install", PIN])


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
    }


def test_init_writes_the_project_files(runner: CliRunner, tmp_path: Path) -> None:
    root = git_init(tmp_path / "team")
    result = init(runner, str(root), "--suite", "team-gold-v1")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[: len(WRITTEN)] == [f"wrote {root}/{p}" for p in WRITTEN]
    assert (root / "dvc.yaml").read_text() == (ROOT / "dvc.yaml").read_text()
    assert (root / ".gitattributes").read_text() == (ROOT / ".gitattributes").read_text()
    assert (
        root / ".gitignore"
    ).read_text() == "# flightdeck init\n.venv\n.flightdeck/\ndvc_plots/\n"
    assert (root / "suites/.gitkeep").read_bytes() == b""
    params = yaml.safe_load((root / "params.yaml").read_text())
    assert params["suite"] == "team-gold-v1"
    assert set(params) >= {"repos", "harnesses", "people", "arms", "baseline", "candidate"}
    workflow = yaml.safe_load((root / ".github/workflows/knowledge-evals.yml").read_text())
    steps = " ".join(
        str(step.get("run", "")) for job in workflow["jobs"].values() for step in job["steps"]
    )
    for command in (
        "dvc repro",
        "dvc metrics diff --md",
        "flightdeck knowledge gate",
        "flightdeck knowledge show",
        "gh pr comment",
    ):
        assert command in steps, command
    # the params flightdeck reads from the template parse, and name what dvc.yaml needs
    from flightdeck.params import load_params

    loaded = load_params(root / "params.yaml")
    assert loaded.warnings == ()
    assert loaded.harnesses == {
        "baseline-repo-search": "python -m flightdeck experiment agent repo-search"
    }


def test_gitignore_entries_are_appended_without_duplicates(
    runner: CliRunner, tmp_path: Path
) -> None:
    root = git_init(tmp_path / "team")
    (root / ".gitignore").write_text("/.venv/\n*.pyc")  # no newline at the end
    assert init(runner, str(root)).exit_code == 0
    assert (root / ".gitignore").read_text() == (
        "/.venv/\n*.pyc\n# flightdeck init\n.flightdeck/\ndvc_plots/\n"
    )
    assert init(runner, str(root), "--force").exit_code == 0
    assert (root / ".gitignore").read_text().count("dvc_plots/") == 1


@pytest.mark.parametrize(
    "existing", ["params.yaml", "dvc.yaml", ".github/workflows/knowledge-evals.yml"]
)
def test_an_existing_file_is_refused_and_nothing_changes(
    runner: CliRunner, tmp_path: Path, existing: str
) -> None:
    root = git_init(tmp_path / "team")
    (root / existing).parent.mkdir(parents=True, exist_ok=True)
    (root / existing).write_text("mine\n")
    before = tree(root)
    result = init(runner, str(root))
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {root / existing}: already exists; flightdeck init never overwrites a file: "
        "move it away, or pass --force to replace it\n"
    )
    assert "Traceback" not in result.output
    assert tree(root) == before
    forced = init(runner, str(root), "--force")
    assert forced.exit_code == 0, forced.output
    assert (root / existing).read_text() != "mine\n"


def test_init_outside_a_git_repository_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    result = runner.invoke(
        cli, ["init", str(folder)], env={"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    )
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {folder}: not inside a git repository; run `git init` first (the pipeline's "
        "outputs are git-tracked)\n"
    )
    assert list(folder.iterdir()) == []


def test_init_runs_dvc_init_once(runner: CliRunner, tmp_path: Path) -> None:
    root = git_init(tmp_path / "team")
    env = {"DVC_NO_ANALYTICS": "1", "DVC_SITE_CACHE_DIR": str(tmp_path / "site")}
    result = runner.invoke(cli, ["init", str(root), "--install", PIN], env=env)
    assert result.exit_code == 0, result.output
    assert "ran dvc init" in result.output
    assert (root / ".dvc" / "config").is_file()


def test_docs_ci_shows_the_workflow_init_writes() -> None:
    from flightdeck.tasks.init import install_requirement, template

    pin = install_requirement(ROOT, PIN)
    workflow = (
        template("knowledge-evals.yml.tmpl")
        .replace("__INSTALL_NOTE__", pin.note)
        .replace("__INSTALL__", pin.requirement)
    )
    assert workflow.rstrip() in (ROOT / "docs" / "ci.md").read_text()
