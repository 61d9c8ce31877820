"""Attacks found by trying the sandbox as an outside harness would, each through the real
``experiment run`` under bubblewrap, in a project outside /tmp beside other checkouts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.gitrepo import git_env
from tests.unit.test_sandbox import HARNESSES, SECRET, outcomes, outside, project, run

from flightdeck.suite.records import read_meta

__all__ = ["outside", "project"]  # fixtures, used by name


def _checkout(folder: Path) -> Path:
    """A teammate's clone of the suite: a git folder and the sealed keys in it."""
    keys = folder / "suites" / "demo-v1" / "keys.jsonl"
    keys.parent.mkdir(parents=True)
    keys.write_text(json.dumps({"id": "q1", "answer_key": SECRET}) + "\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True, env=git_env())
    return keys


def _installed(prefix: Path) -> Path:
    """hostile.py as ``prefix/bin/agent``, a script whose #! is this interpreter."""
    (prefix / "bin").mkdir(parents=True)
    agent = prefix / "bin" / "agent"
    agent.write_text(f"#!{sys.executable}\n" + (HARNESSES / "hostile.py").read_text())
    agent.chmod(0o755)
    return agent


@pytest.mark.parametrize("lib", ["lib", "lib/python3.11/site-packages"])
def test_a_harness_in_home_bin_beside_a_home_lib_does_not_bind_home(
    project: dict[str, Any], outside: Path, monkeypatch: pytest.MonkeyPatch, lib: str
) -> None:
    """``~/bin/agent`` with a ``~/lib`` (or a ``pip --prefix ~``) once bound all of $HOME as
    the agent's installation: a teammate's clone under ~/src and every host secret there."""
    home = outside / "home"
    (home / lib).mkdir(parents=True)
    keys = _checkout(home / "src" / "teammate")
    (home / ".netrc").write_text("machine example.com password hunter2\n")
    _installed(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{os.environ['PATH']}")
    plan = outside / "plan.json"
    plan.write_text(
        json.dumps({"read": [str(keys), str(home / ".netrc")], "write": [str(home / "n")]})
    )
    result = run(project, f"agent --plan {plan}")
    assert not result.failed, result.failed
    got = outcomes(project)
    assert got[f"read {keys}"] == "ENOENT"
    assert got[f"read {home / '.netrc'}"] == "ENOENT"
    assert got[f"write {home / 'n'}"] == "ok"  # the private $HOME, not the host's
    assert not (home / "n").exists()
    bound = read_meta(project["suite"] / "answers" / "arm1.meta.json").fields["sandbox"]["bound"]
    assert str(home) not in bound["harness"]
    assert str(home / "bin" / "agent") in bound["harness"]


def test_an_installation_folder_that_holds_checkouts_is_not_bound(
    project: dict[str, Any], outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/srv/work/bin/agent`` with a ``/srv/work/lib/python3.11``: a folder of checkouts that
    looks like a prefix is still not bound whole."""
    work = outside / "work"
    (work / "lib" / "python3.11").mkdir(parents=True)
    keys = _checkout(work / "ci-workspace")
    _installed(work)
    monkeypatch.setenv("PATH", f"{work / 'bin'}:{os.environ['PATH']}")
    plan = outside / "plan.json"
    plan.write_text(json.dumps({"read": [str(keys)], "walk": [str(work)]}))
    result = run(project, f"agent --plan {plan}")
    assert not result.failed, result.failed
    got = outcomes(project)
    assert got[f"read {keys}"] == "ENOENT"
    assert got[f"walk {work}"] == "ok: 1"  # the agent alone


def test_no_sysctl_is_writable_inside_even_for_the_host_s_root(
    project: dict[str, Any], outside: Path
) -> None:
    """bubblewrap's own read-only cover of /proc/sys is skipped (the folder refuses writing
    even to root), so under a root runner (CI) every sysctl was writable: kernel.core_pattern
    would run a program of the harness's as root on the host. The hostname sysctl (of the
    sandbox's own UTS namespace) is really written; core_pattern only opened."""
    plan = outside / "plan.json"
    opened = ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/pressure/cpu"]
    plan.write_text(json.dumps({"write": ["/proc/sys/kernel/hostname"], "open_write": opened}))
    result = run(project, f"{sys.executable} {HARNESSES / 'hostile.py'} --plan {plan}")
    assert not result.failed, result.failed
    got = outcomes(project)
    refused = {"EROFS"} if os.getuid() == 0 else {"EROFS", "EACCES"}
    assert got["write /proc/sys/kernel/hostname"] in refused
    for path in opened:
        assert got[f"open-write {path}"] in refused | {"ENOENT"}, path
    assert got["open-write /proc/sys/kernel/core_pattern"] in refused


RUNNER = """
import json, sys
from pathlib import Path
from flightdeck.arms.runner import RunConfig, run_experiment
from flightdeck.params import Params
from flightdeck.project import Project
spec = json.loads(sys.argv[1])
root = Path(spec["root"])
repos = {k: Path(v) for k, v in spec["repos"].items()}
config = RunConfig(Path(spec["suite"]), "arm1", spec["command"], root=root)
project = Project(Params(root=root, repos=repos))  # its repos, the one way
print(json.dumps(run_experiment(config, repos=project.repos).failed))
"""


def test_flightdeck_s_own_prefix_is_not_bound_whole_when_it_is_home(
    project: dict[str, Any], outside: Path
) -> None:
    """A runner whose Python's prefix is $HOME (a venv made in $HOME, or an interpreter built
    with ``--prefix=$HOME``) bound all of $HOME as flightdeck's installation."""
    home = outside / "home"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True)
    keys = _checkout(home / "src" / "teammate")
    site = [p for p in sys.path if p.endswith("site-packages")]
    source = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": ":".join([source, *site])}
    plan = outside / "plan.json"
    plan.write_text(json.dumps({"read": [str(keys)], "walk": [str(home / "src")]}))
    spec = {
        "root": str(project["root"]),
        "suite": str(project["suite"]),
        "repos": {"sdlc": str(project["clone"]), "infra": str(project["bundle"])},
        "command": f"python {HARNESSES / 'hostile.py'} --plan {plan}",
    }
    process = subprocess.run(
        [str(home / "bin" / "python"), "-c", RUNNER, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout.splitlines()[-1]) == []
    got = outcomes(project)
    assert got[f"read {keys}"] == "ENOENT"
    assert got[f"walk {home / 'src'}"] == "ENOENT"
