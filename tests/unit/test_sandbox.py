"""The bubblewrap sandbox, with real processes: what a hostile harness can and cannot do."""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.gitrepo import make_bundle, make_git_repo

from flightdeck.arms import sandbox
from flightdeck.arms.runner import RunConfig, RunResult, run_experiment
from flightdeck.errors import InputError
from flightdeck.scoring.report import meta_lines
from flightdeck.suite.records import read_meta

HARNESSES = Path(__file__).parents[1] / "data" / "harnesses"
SECRET = "THE-SEALED-ANSWER-KEY-TEXT"


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Any]:
    """A project: a clone and a bundle of one repository, a suite with keys, holdouts."""
    clone = tmp_path / "repos" / "sdlc"
    (commit,) = make_git_repo(clone, [{"docs/a.md": "# A\n", "docs/b.md": "# B\n"}])
    (tmp_path / "demo").mkdir()
    bundle = make_bundle(clone, tmp_path / "demo" / "infra.bundle")
    suite = tmp_path / "suites" / "demo-v1"
    suite.mkdir(parents=True)
    question = {"id": "q1", "question": "?", "kind": "how-to", "as_of": {"sdlc": commit}}
    (suite / "questions.jsonl").write_text(json.dumps({**question, "scope": []}) + "\n")
    (suite / "keys.jsonl").write_text(json.dumps({"id": "q1", "answer_key": SECRET}) + "\n")
    holdouts = tmp_path / "holdouts"
    holdouts.mkdir()
    (holdouts / "manifest.json").write_text('{"canaries": "secret"}\n')
    results = tmp_path / "results" / "demo-v1"
    results.mkdir(parents=True)
    (results / "arm0.jsonl").write_text('{"id": "q1", "citations": [{"class": "valid"}]}\n')
    return {"root": tmp_path, "suite": suite, "clone": clone, "bundle": bundle}


@pytest.fixture
def listener() -> Iterator[str]:
    """A TCP server on this machine's loopback, outside any sandbox."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()


def hostile(project: dict[str, Any], listener: str) -> str:
    reads = [
        project["suite"] / "keys.jsonl",
        project["root"] / "holdouts" / "manifest.json",
        project["clone"] / ".git" / "HEAD",
        project["clone"] / "docs" / "a.md",
        project["bundle"],
        project["root"] / "results" / "demo-v1" / "arm0.jsonl",
    ]
    argv = [sys.executable, str(HARNESSES / "hostile.py"), "--connect", listener]
    argv += ["--env", "FD_TEST_SECRET"]
    for path in reads:
        argv += ["--read", str(path)]
    return shlex.join(argv)


def run(project: dict[str, Any], command: str, **options: Any) -> RunResult:
    repos = {"sdlc": project["clone"], "infra": project["bundle"]}
    config = RunConfig(
        project["suite"], options.pop("arm", "arm1"), command, root=project["root"], repos=repos
    )
    return run_experiment(RunConfig(**{**config.__dict__, **options}))


def outcomes(project: dict[str, Any], arm: str = "arm1") -> dict[str, str]:
    (line,) = (project["suite"] / "answers" / f"{arm}.jsonl").read_text().splitlines()
    return json.loads(json.loads(line)["answer"])  # type: ignore[no-any-return]


def test_a_hostile_harness_fails_at_every_attempt_and_its_answer_is_recorded(
    project: dict[str, Any], listener: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FD_TEST_SECRET", "s3cret")
    result = run(project, hostile(project, listener))
    assert not result.failed, result.failed
    got = outcomes(project)
    root, suite = project["root"], project["suite"]
    assert got[f"read {suite / 'keys.jsonl'}"] == "ENOENT"  # the suite folder is masked
    assert got[f"read {root / 'holdouts' / 'manifest.json'}"] == "ENOENT"
    assert got[f"read {project['clone'] / '.git' / 'HEAD'}"] == "ENOENT"
    assert got[f"read {project['clone'] / 'docs' / 'a.md'}"] == "ENOENT"  # the work tree too
    assert got[f"read {project['bundle']}"] == "EACCES"  # /dev/null (nodev) over the file
    assert got[f"read {root / 'results' / 'demo-v1' / 'arm0.jsonl'}"] == "ENOENT"
    assert got["write workspace file"] == "EROFS"
    assert got["create workspace file"] == "EROFS"
    assert got["chmod workspace file"] == "EROFS"
    assert got["remount workspace writable"] == "EPERM"  # no capabilities, even as root
    assert got["connect"] in ("ECONNREFUSED", "ENETUNREACH")  # its own network namespace
    assert got["env FD_TEST_SECRET"] == "unset"
    assert got["uid"] == f"ok: {os.getuid()}"  # root here is root there: the mounts hold
    meta = read_meta(suite / "answers" / "arm1.meta.json").fields["sandbox"]
    assert meta["mode"] == "bwrap"
    assert meta["network"] is False
    assert meta["pass_env"] == []


def test_an_out_file_left_as_a_symlink_is_not_followed_by_the_runner(
    project: dict[str, Any], listener: str
) -> None:
    """Masked inside, the keys are readable outside: the runner must not copy them in."""
    keys = project["suite"] / "keys.jsonl"
    command = hostile(project, listener) + " " + shlex.join(["--link-trace", str(keys)])
    result = run(project, command)
    ((qid, reason),) = [(o.id, o.reason) for o in result.failed]
    assert (qid, reason) == (
        "q1",
        "FLIGHTDECK_TRACE is a symlink, not a file; write the file itself",
    )
    trace = (project["root"] / "traces" / "demo-v1" / "arm1" / "q1.log").read_text()
    assert SECRET not in trace
    assert "(not copied: FLIGHTDECK_TRACE is a symlink, not a file; write the file" in trace
    assert (project["suite"] / "answers" / "arm1.jsonl").read_text() == ""


def test_the_keys_in_another_worktree_of_the_project_are_masked_too(
    project: dict[str, Any], listener: str
) -> None:
    """A trial run in one git worktree must not read the sealed keys of another by path."""
    import subprocess

    from tests.gitrepo import git_env

    root = project["root"]

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(root), *args], check=True, env=git_env(), capture_output=True
        )

    (root / ".gitignore").write_text("repos/\ndemo/\nworktrees/\n")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "suite")
    other = root / "worktrees" / "b"  # inside the project, so bound into the sandbox
    git("worktree", "add", "-q", str(other))
    keys = other / "suites" / "demo-v1" / "keys.jsonl"
    assert SECRET in keys.read_text()
    command = hostile(project, listener) + " " + shlex.join(["--read", str(keys)])
    result = run(project, command)
    assert not result.failed, result.failed
    assert outcomes(project)[f"read {keys}"] == "ENOENT"


def test_the_project_holdouts_folder_is_masked_when_params_misname_it(
    project: dict[str, Any], listener: str
) -> None:
    """``holdouts: holdout`` (a typo) must not leave the real registry readable."""
    manifest = project["root"] / "holdouts" / "manifest.json"
    result = run(project, hostile(project, listener), holdouts=project["root"] / "holdout")
    assert not result.failed, result.failed
    assert outcomes(project)[f"read {manifest}"] == "ENOENT"


def test_network_and_a_named_variable_reach_the_harness_only_when_asked(
    project: dict[str, Any], listener: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FD_TEST_SECRET", "s3cret")
    monkeypatch.setenv("FD_OTHER", "not passed")
    result = run(project, hostile(project, listener), network=True, pass_env=("FD_TEST_SECRET",))
    assert not result.failed, result.failed
    got = outcomes(project)
    assert got["connect"] == "ok"
    assert got["env FD_TEST_SECRET"] == "ok: s3cret"
    assert got[f"read {project['suite'] / 'keys.jsonl'}"] == "ENOENT"
    assert got["write workspace file"] == "EROFS"
    meta = read_meta(project["suite"] / "answers" / "arm1.meta.json").fields["sandbox"]
    assert (meta["network"], meta["pass_env"]) == (True, ["FD_TEST_SECRET"])


def test_resuming_with_other_sandbox_settings_is_refused(
    project: dict[str, Any], listener: str
) -> None:
    run(project, hostile(project, listener))
    questions = project["suite"] / "questions.jsonl"
    second = {**json.loads(questions.read_text()), "id": "q2"}
    with questions.open("a") as out:  # a question left to run
        out.write(json.dumps(second) + "\n")
    with pytest.raises(InputError, match=r"ran with sandbox bwrap \(network off, env -\), not"):
        run(project, hostile(project, listener), network=True)


@pytest.fixture
def broken_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bwrap first on PATH that fails the way it does without user namespaces."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")


@pytest.mark.usefixtures("broken_bwrap")
def test_where_bwrap_cannot_run_the_run_is_refused_unless_sandbox_none(
    project: dict[str, Any], listener: str
) -> None:
    with pytest.raises(InputError, match=r"--sandbox none") as caught:
        run(project, hostile(project, listener))
    assert "No permissions to create new namespace" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not (project["suite"] / "answers" / "arm1.jsonl").exists()
    result = run(project, hostile(project, listener), sandbox="none")
    (failed,) = result.failed  # nothing stopped its writes; the check after the trial did
    assert (
        failed.reason == "changed its read-only workspace (new.txt); later trials get a fresh copy"
    )
    seen = (project["root"] / failed.trace).read_text()
    assert f'read {project["suite"] / "keys.jsonl"}\\": \\"ok' in seen  # nothing stopped it
    assert "sandbox: arm ran without a sandbox" in seen
    assert 'env FD_TEST_SECRET\\": \\"unset' in seen  # the environment is still as named
    meta = read_meta(project["suite"] / "answers" / "arm1.meta.json")
    assert meta.fields["sandbox"]["mode"] == "none"
    assert meta.fields["sandbox"]["note"] == "arm ran without a sandbox"
    (line,) = meta_lines(SimpleNamespace(arm="arm1", meta=meta))  # type: ignore[arg-type]
    assert "arm ran without a sandbox" in line


def test_the_bwrap_command_line_masks_mounts_and_confines(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "keys.jsonl").write_text("k")
    policy = sandbox.SandboxPolicy(
        masked=(tmp_path / "suites", tmp_path / "suites" / "keys.jsonl", Path("/etc/hostname")),
        visible=(tmp_path,),
    )
    argv = sandbox.bwrap_argv(
        policy,
        ["harness", "--x"],
        mounts=[("sdlc", tmp_path / "t")],
        out_dir=tmp_path,
        cwd=tmp_path,
    )
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("--tmpfs", str(tmp_path / "suites")) in pairs
    assert str(tmp_path / "suites" / "keys.jsonl") not in argv  # inside a mask already
    assert ("/dev/null", "/etc/hostname") in pairs
    assert ("--tmpfs", "/tmp") in pairs
    assert argv.index(str(tmp_path / "suites")) > argv.index("/tmp")  # after /tmp is replaced
    assert (str(tmp_path / "t"), f"{sandbox.WORKSPACE}/sdlc") in pairs
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert ("--cap-drop", "ALL") in pairs
    assert "--share-net" not in argv
    assert argv[-3:] == ["--", "harness", "--x"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        pytest.param(["1X"], "'1X' is not an environment variable name", id="digit"),
        pytest.param(["A-B"], "'A-B' is not an environment variable name", id="dash"),
        pytest.param(["FLIGHTDECK_TASK"], "FLIGHTDECK_TASK is set by the runner", id="ours"),
    ],
)
def test_pass_env_names_are_checked(names: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        sandbox.check_env_names(names)


def test_flightdeck_s_own_source_under_tmp_stays_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install cloned under /tmp (as CI may) must not vanish under the private /tmp."""
    import flightdeck
    from flightdeck.arms.sandbox import visible_paths

    package = tmp_path / "clone" / "src" / "flightdeck"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.setattr(flightdeck, "__file__", str(package / "__init__.py"))
    assert (tmp_path / "clone" / "src").resolve() in visible_paths(tmp_path / "project", [])


def test_the_suites_beside_a_symlinked_suite_folder_are_masked(tmp_path: Path) -> None:
    real = tmp_path / "data" / "demo-v1"
    real.mkdir(parents=True)
    (real / "keys.jsonl").write_text("{}\n")
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "demo-v1").symlink_to(real)
    (suites / "demo-v2").mkdir()
    (suites / "demo-v2" / "keys.jsonl").write_text("{}\n")
    masked = sandbox.masked_paths(
        root=tmp_path, suite_dir=suites / "demo-v1", repos=[], holdouts=None
    )
    assert real in masked
    assert (suites / "demo-v2").resolve() in masked
