"""What the CI workflow `flightdeck init` writes installs (#21): this project, pinned.

`flightdeck` on the package index is an unrelated project, so the distribution is
`flightdeck-evals`, and the workflow installs it at one full commit or from a wheel the
team committed: never a bare name an index resolves. The check reads the written YAML and
every `pip install` line of every step, as a reviewer would.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from packaging.requirements import InvalidRequirement, Requirement
from tests.gitrepo import git_env

from flightdeck.cli import cli
from flightdeck.tasks import init as project_init

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
PIN = f"git+https://github.com/acme/flightdeck@{COMMIT}"
WORKFLOW = Path(".github/workflows/knowledge-evals.yml")


def pip_requirements(workflow: dict[str, Any]) -> list[str]:
    """Every requirement of every `pip install` command in the workflow's run steps."""
    found = []
    for job in workflow["jobs"].values():
        for step in job.get("steps", []):
            script = str(step.get("run", "")).replace("\\\n", " ")  # continued lines
            for line in script.splitlines():
                if "pip" not in line:
                    continue  # a line that cannot install (and may not be shlex's syntax)
                words = shlex.split(line, comments=True)
                for i, word in enumerate(words[:-1]):
                    if word.endswith("pip") and words[i + 1] == "install":
                        found += [w for w in words[i + 2 :] if not w.startswith("-")]
    return found


def unpinned(requirement: str) -> str | None:
    """Why pip could fetch something else than one fixed build, or None when it cannot."""
    if requirement.endswith(".whl") and "://" not in requirement:
        return None if requirement.startswith("./") else "a wheel path outside the checkout"
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return "not a requirement pip reads as pinned"
    if parsed.url is None:
        return f"a name from the package index ({parsed.name})"
    if not re.fullmatch(r"git\+(https|ssh)://\S+@[0-9a-f]{40}", parsed.url):
        return "a URL not pinned to a full commit"
    return None


def test_the_checker_fails_on_index_installs() -> None:
    # the checker itself: every way to install a moving or foreign build is caught
    bad = {
        "flightdeck==0.1.0": "a name from the package index (flightdeck)",
        "flightdeck-evals": "a name from the package index (flightdeck-evals)",
        "flightdeck-evals>=0.1": "a name from the package index (flightdeck-evals)",
        "flightdeck-evals @ git+https://github.com/acme/flightdeck@v0.1.0": "a URL not pinned to a full commit",
        "flightdeck-evals @ git+https://github.com/acme/flightdeck@main": "a URL not pinned to a full commit",
        "flightdeck-evals @ git+https://github.com/acme/flightdeck@0123456": "a URL not pinned to a full commit",
    }
    assert {r: unpinned(r) for r in bad} == bad
    assert unpinned(f"flightdeck-evals @ {PIN}") is None
    assert unpinned("./ci/flightdeck_evals-0.1.0-py3-none-any.whl") is None
    old = yaml.safe_load(
        'jobs: {a: {steps: [{run: "pip install --quiet \\"$X\\"\\n.venv/bin/pip install -q flightdeck==0.1.0"}]}}'
    )
    assert pip_requirements(old) == ["$X", "flightdeck==0.1.0"]


def test_the_distribution_is_named_apart_from_the_index_project() -> None:
    assert metadata.distribution("flightdeck-evals").read_text("top_level.txt") in (
        None,
        "flightdeck\n",
    )
    # (an editable install lists its dist-info and the egg-info of src/: one name, twice)
    assert set(metadata.packages_distributions()["flightdeck"]) == {"flightdeck-evals"}
    entry = [e for e in metadata.entry_points(group="console_scripts") if e.name == "flightdeck"]
    assert [e.value for e in entry] == ["flightdeck.cli:main"]
    assert 'name = "flightdeck-evals"' in (ROOT / "pyproject.toml").read_text()


def git_init(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--quiet", str(folder)], env=git_env(), check=True)
    return folder


def written(root: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((root / WORKFLOW).read_text())
    return loaded


def test_init_pins_the_commit_it_is_given(runner: CliRunner, tmp_path: Path) -> None:
    root = git_init(tmp_path / "team")
    result = runner.invoke(cli, ["init", str(root), "--no-dvc", "--install", PIN])
    assert result.exit_code == 0, result.output
    workflow = written(root)
    requirements = pip_requirements(workflow)
    assert requirements == [f"flightdeck-evals @ {PIN}"]
    assert [unpinned(r) for r in requirements] == [None]


def test_the_job_that_runs_the_pipeline_cannot_write(runner: CliRunner, tmp_path: Path) -> None:
    root = git_init(tmp_path / "team")
    assert runner.invoke(cli, ["init", str(root), "--no-dvc", "--install", PIN]).exit_code == 0
    workflow = written(root)
    assert workflow["permissions"] == {}  # nothing unless a job asks
    runs = {
        name: " ".join(str(s.get("run", "")) for s in job["steps"])
        for name, job in workflow["jobs"].items()
    }
    evals = workflow["jobs"]["evals"]
    assert "dvc repro" in runs["evals"]
    assert evals["permissions"] == {"contents": "read"}
    assert evals["steps"][0]["with"]["persist-credentials"] is False
    # the only write permission is the comment job's, and that job runs no project code
    comment = workflow["jobs"]["comment"]
    assert comment["permissions"] == {"pull-requests": "write"}
    assert not any("checkout" in str(s.get("uses", "")) for s in comment["steps"])
    assert "gh pr comment" in runs["comment"]
    for forbidden in ("dvc", "flightdeck", "pip", "python"):
        assert forbidden not in runs["comment"].replace("flightdeck init", "")
    assert "gh pr comment" not in runs["evals"]


def test_init_pins_a_committed_wheel(runner: CliRunner, tmp_path: Path) -> None:
    root = git_init(tmp_path / "team")
    wheel = root / "ci" / "flightdeck_evals-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK")
    result = runner.invoke(cli, ["init", str(root), "--no-dvc", "--install", "ci/" + wheel.name])
    assert result.exit_code == 0, result.output
    assert pip_requirements(written(root)) == ["./ci/flightdeck_evals-0.1.0-py3-none-any.whl"]


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        pytest.param(
            "git+https://github.com/acme/flightdeck@v0.1.0",
            "'git+https://github.com/acme/flightdeck@v0.1.0' can move or names the package index",
            id="tag",
        ),
        pytest.param(
            "flightdeck==0.1.0",
            "'flightdeck==0.1.0' can move or names the package index",
            id="index-name",
        ),
        pytest.param(
            "git+https://github.com/acme/flightdeck@0123456",
            "'git+https://github.com/acme/flightdeck@0123456' can move or names the package index",
            id="short-commit",
        ),
    ],
)
def test_a_pin_that_can_move_is_refused(
    runner: CliRunner, tmp_path: Path, pin: str, message: str
) -> None:
    root = git_init(tmp_path / "team")
    result = runner.invoke(cli, ["init", str(root), "--no-dvc", "--install", pin])
    assert result.exit_code == 2
    assert result.stderr == f"error: --install: {message}; {project_init.INSTALL_FIX}\n"
    assert not (root / WORKFLOW).exists()  # refused before anything is written


def test_a_wheel_that_is_not_there_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    root = git_init(tmp_path / "team")
    args = [
        "init",
        str(root),
        "--no-dvc",
        "--install",
        "ci/flightdeck_evals-0.1.0-py3-none-any.whl",
    ]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: {root}/ci/flightdeck_evals-0.1.0-py3-none-any.whl: no such wheel;"
    )


def test_without_install_a_local_checkout_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    # this test's own flightdeck is an editable install of a folder: CI could not fetch it
    root = git_init(tmp_path / "team")
    result = runner.invoke(cli, ["init", str(root), "--no-dvc"])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: --install: flightdeck-evals was installed from the local folder {ROOT}"
    )
    assert result.stderr.endswith(f"; {project_init.INSTALL_FIX}\n")
    assert [p.name for p in root.iterdir()] == [".git"]


def fake_distribution(tmp_path: Path, direct_url: dict[str, Any]) -> metadata.Distribution:
    """A real dist-info folder, as pip writes one for `pip install git+URL@rev` (PEP 610)."""
    info = tmp_path / "site" / "flightdeck_evals-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: flightdeck-evals\nVersion: 0.1.0\n"
    )
    (info / "direct_url.json").write_text(json.dumps(direct_url))
    return metadata.PathDistribution(info)


def test_without_install_a_git_install_pins_its_own_commit(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = fake_distribution(
        tmp_path,
        {
            "url": "https://github.com/acme/flightdeck",
            "vcs_info": {"vcs": "git", "requested_revision": "v0.1.0", "commit_id": COMMIT},
        },
    )
    asked: list[str] = []

    def distribution(name: str) -> metadata.Distribution:
        asked.append(name)
        return dist

    monkeypatch.setattr(metadata, "distribution", distribution)
    root = git_init(tmp_path / "team")
    result = runner.invoke(cli, ["init", str(root), "--no-dvc"])
    assert result.exit_code == 0, result.output
    assert asked == ["flightdeck-evals"]
    # the commit pip resolved, not the tag it was asked for (a tag can move)
    assert pip_requirements(written(root)) == [f"flightdeck-evals @ {PIN}"]
    assert f"commit {COMMIT}, the flightdeck that ran init" in (root / WORKFLOW).read_text()
