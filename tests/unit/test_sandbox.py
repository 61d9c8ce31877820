"""The bubblewrap sandbox, with real processes: what a hostile harness can and cannot do."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.builders import project_repos
from tests.gitrepo import make_bundle, make_git_repo
from tests.tree import gen

from flightdeck.arms import sandbox, sandbox_paths
from flightdeck.arms.runner import RunConfig, RunResult, run_experiment
from flightdeck.errors import InputError
from flightdeck.holdouts.registry import register_suite
from flightdeck.scoring.report import meta_lines
from flightdeck.suite.records import read_meta
from flightdeck.suite.schema import CANARY_PREFIX

HARNESSES = Path(__file__).parents[1] / "data" / "harnesses"
SECRET = "THE-SEALED-ANSWER-KEY-TEXT"


CANARY = CANARY_PREFIX + "0123456789abcdef0123456789abcdef"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside /tmp: the old sandbox's private /tmp hid everything under it by chance."""
    base = Path("/var/tmp")
    assert not base.resolve().is_relative_to("/tmp")
    folder = Path(tempfile.mkdtemp(dir=base, prefix="flightdeck-sandbox-test-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project(outside: Path) -> dict[str, Any]:
    """A project outside /tmp: a clone and a bundle, a suite with keys, a real registry."""
    root = outside / "project"
    clone = root / "repos" / "sdlc"
    (commit,) = make_git_repo(clone, [{"docs/a.md": "# A\n", "docs/b.md": "# B\n"}])
    (root / "demo").mkdir()
    bundle = make_bundle(clone, root / "demo" / "infra.bundle")
    suite = root / "suites" / "demo-v1"
    question = {"id": "q1", "question": "?", "kind": "how-to", "as_of": {"sdlc": commit}}
    gen(
        suite,
        {
            "questions.jsonl": [{**question, "scope": []}],
            "keys.jsonl": [{"id": "q1", "answer_key": SECRET}],
        },
    )
    register_suite(
        root / "holdouts", suite="demo-v1", manifest_sha256="0" * 64, canaries={"q1": CANARY}
    )
    results = root / "results" / "demo-v1"
    results.mkdir(parents=True)
    (results / "arm0.jsonl").write_text('{"id": "q1", "citations": [{"class": "valid"}]}\n')
    return {"root": root, "suite": suite, "clone": clone, "bundle": bundle, "commit": commit}


@pytest.fixture
def listener() -> Iterator[str]:
    """A TCP server on this machine's loopback, outside any sandbox."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()


def hostile(project: dict[str, Any], listener: str, *extra: str) -> str:
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
    return shlex.join([*argv, *extra])


def run(project: dict[str, Any], command: str, **options: Any) -> RunResult:
    repos = {"sdlc": project["clone"], "infra": project["bundle"]}
    config = RunConfig(project["suite"], options.pop("arm", "arm1"), command, root=project["root"])
    config = RunConfig(**{**config.__dict__, **options})
    return run_experiment(config, repos=project_repos(config.root, repos))


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
    assert got[f"read {suite / 'keys.jsonl'}"] == "ENOENT"  # the suite folder is not there
    assert got[f"read {root / 'holdouts' / 'manifest.json'}"] == "ENOENT"
    assert got[f"read {project['clone'] / '.git' / 'HEAD'}"] == "ENOENT"
    assert got[f"read {project['clone'] / 'docs' / 'a.md'}"] == "ENOENT"  # the work tree too
    assert got[f"read {project['bundle']}"] == "ENOENT"
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


@pytest.fixture
def host_socket(outside: Path) -> Iterator[tuple[str, str]]:
    """A unix socket file outside /tmp and an abstract one, both listening on the host."""
    path = str(outside / "host.sock")
    name = f"flightdeck-test-{os.getpid()}"
    servers = []
    for address in (path, "\0" + name):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen()
        servers.append(server)
    try:
        yield path, name
    finally:
        for server in servers:
            server.close()


def test_nothing_of_the_host_but_the_allow_list_exists_inside(
    project: dict[str, Any],
    listener: str,
    outside: Path,
    tmp_path: Path,
    host_socket: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second checkout, $HOME, /etc/shadow, reports, other arms' runs and traces, the cache
    of a first run, host folders and host sockets: none of it is there (all outside /tmp)."""
    root = project["root"]
    other = outside / "teammate-clone" / "suites" / "demo-v1"
    other.mkdir(parents=True)
    (other / "keys.jsonl").write_text(json.dumps({"id": "q1", "answer_key": SECRET}) + "\n")
    home = outside / "home"
    home.mkdir()
    (home / "token").write_text("host secret")
    (home / "token").chmod(0o600)
    monkeypatch.setenv("HOME", str(home))
    for name, text in (
        ("reports/demo-v1.md", "q1: marked correct"),
        ("traces/demo-v1/arm0/q1.log", "another arm"),
        ("runs/demo-v1/arm0.jsonl", "{}"),
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert not (root / ".flightdeck").exists()  # a fresh clone's first run
    unix, abstract = host_socket
    reads = [
        other / "keys.jsonl",
        home / "token",
        Path("/etc/shadow"),
        root / "reports" / "demo-v1.md",
        root / "traces" / "demo-v1" / "arm0" / "q1.log",
        root / "runs" / "demo-v1" / "arm0.jsonl",
    ]
    walks = [root / ".flightdeck", root, outside, home]
    walks += [Path(p) for p in ("/var", "/srv", "/mnt", "/media", "/run", "/opt", "/sys")]
    plan = {
        "read": [*map(str, reads), "/etc/hosts"],
        "walk": [str(path) for path in walks],
        "unix": [unix],
        "abstract": [abstract],
        "write": ["/tmp/scratch", str(home / "note")],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))  # named, so bound: in /tmp, aside
    result = run(project, hostile(project, listener, "--plan", str(tmp_path / "plan.json")))
    assert not result.failed, result.failed
    got = outcomes(project)
    for path in reads:
        assert got[f"read {path}"] == "ENOENT", path
    for path in walks:  # only the empty skeleton of folders down to the private $HOME
        assert got[f"walk {path}"] == ("ok: 0" if home.is_relative_to(path) else "ENOENT"), path
    assert (root / ".flightdeck").is_dir()  # made before the first trial, never visible
    assert got[f"write {home / 'note'}"] == "ok"
    assert not (home / "note").exists()
    assert got["write /tmp/scratch"] == "ok"
    assert got[f"unix {unix}"] == "ENOENT"  # no socket file of the host exists inside
    assert got[f"abstract {abstract}"] == "ECONNREFUSED"  # another network namespace
    assert got["read /etc/hosts"] == "ok"  # the runtime is there
    meta = read_meta(project["suite"] / "answers" / "arm1.meta.json").fields["sandbox"]
    assert meta["filesystem"].startswith("allow-list")
    assert "/etc/hosts" in meta["runtime"]
    assert "/etc/shadow" not in meta["runtime"]
    assert meta["private"][1] == str(home)
    assert meta["limits"]["output_mb"] == 64


def test_a_fresh_clone_s_first_run_shows_nothing_of_its_cache(
    project: dict[str, Any], listener: str, outside: Path, tmp_path: Path
) -> None:
    """CI runs a fresh clone: the bundle mirror the run makes in .flightdeck/ (commits newer
    than every as_of) must not be readable by the trials of that very first run."""
    import subprocess

    from tests.gitrepo import git_env

    def git(cwd: Path, *args: str) -> None:
        subprocess.run(
            ["git", "-C", str(cwd), *args], check=True, env=git_env(), capture_output=True
        )

    origin = project["root"]
    (origin / ".gitignore").write_text("repos/\n.flightdeck/\n")
    git(origin, "init", "-q")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "project")
    fresh = outside / "ci-workspace"
    git(outside, "clone", "-q", str(origin), str(fresh))
    assert not (fresh / ".flightdeck").exists()
    clone = {**project, "root": fresh, "suite": fresh / "suites" / "demo-v1"}
    clone["bundle"] = fresh / "demo" / "infra.bundle"
    plan = {"walk": [str(fresh / ".flightdeck"), str(origin / ".flightdeck")]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    result = run(clone, hostile(clone, listener, "--plan", str(tmp_path / "plan.json")))
    assert not result.failed, result.failed
    assert any((fresh / ".flightdeck").rglob("*"))  # the run did fill its cache
    got = outcomes(clone)
    assert got[f"walk {fresh / '.flightdeck'}"] == "ENOENT"
    assert got[f"walk {origin / '.flightdeck'}"] == "ENOENT"
    assert got[f"read {clone['bundle']}"] == "ENOENT"
    assert got[f"read {clone['suite'] / 'keys.jsonl'}"] == "ENOENT"


def test_a_bind_is_visible_read_only_and_recorded(
    project: dict[str, Any], listener: str, outside: Path
) -> None:
    shared = outside / "shared-docs"
    shared.mkdir()
    (shared / "guide.md").write_text("guide")
    plan = {"read": [str(shared / "guide.md")], "write": [str(shared / "new.md")]}
    (outside / "plan.json").write_text(json.dumps(plan))
    command = hostile(project, listener, "--plan", str(outside / "plan.json"))
    result = run(project, command, bind=(shared,))
    assert not result.failed, result.failed
    got = outcomes(project)
    assert got[f"read {shared / 'guide.md'}"] == "ok"
    assert got[f"write {shared / 'new.md'}"] == "EROFS"
    meta = read_meta(project["suite"] / "answers" / "arm1.meta.json").fields["sandbox"]
    assert meta["bind"] == [str(shared)]
    assert meta["bound"]["--bind"] == [str(shared)]


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("root", id="project-root"),
        pytest.param("suites", id="suites-folder"),
        pytest.param("holdouts", id="holdouts"),
        pytest.param("traces", id="traces"),
    ],
)
def test_a_bind_that_holds_what_a_score_depends_on_is_refused(
    project: dict[str, Any], listener: str, where: str
) -> None:
    root = project["root"]
    target = root if where == "root" else root / where
    target.mkdir(exist_ok=True)
    with pytest.raises(InputError, match=r"which a score depends on; bind a folder that does not"):
        run(project, hostile(project, listener), bind=(target,))
    assert not (project["suite"] / "answers" / "arm1.jsonl").exists()


def test_the_repositories_guarded_are_the_repo_set_s_the_trials_read(
    project: dict[str, Any], listener: str, outside: Path
) -> None:
    """The run's RepoSet is its one list of repositories: a clone it names outside the
    project is guarded like any, though no other setting of the run names it."""
    mirror = outside / "mirror"
    shutil.copytree(project["clone"], mirror / "sdlc")
    command = hostile(project, listener)
    config = RunConfig(project["suite"], "arm1", command, root=project["root"], bind=(mirror,))
    repos = project_repos(project["root"], {"sdlc": mirror / "sdlc"})
    guarded = re.escape(f"{mirror} holds or lies in {(mirror / 'sdlc').resolve()}, which")
    with pytest.raises(InputError, match=guarded):
        run_experiment(config, repos=repos)
    assert not (project["suite"] / "answers" / "arm1.jsonl").exists()


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


def test_the_bwrap_command_line_binds_only_the_allow_list(tmp_path: Path) -> None:
    policy = sandbox.SandboxPolicy(
        binds=(
            sandbox.Bind(tmp_path / "venv", tmp_path / "venv", "harness"),
            sandbox.Bind(tmp_path / "venv" / "bin" / "python", tmp_path / "venv/bin/python", "x"),
            sandbox.Bind(tmp_path / "real-docs", tmp_path / "docs", "--bind"),
        ),
        system=(("ro", "/usr", "/usr"), ("link", "usr/bin", "/bin")),
        home="/home/ada",
        prlimit="/usr/bin/prlimit",
    )
    argv = sandbox.bwrap_argv(
        policy,
        ["harness", "--x"],
        mounts=[("sdlc", tmp_path / "t")],
        out_dir=tmp_path / "out",
        cwd=tmp_path / "cwd",
    )
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("--ro-bind", "/") not in pairs  # nothing of the host root as a whole
    assert ("/usr", "/usr") in pairs
    assert ("usr/bin", "/bin") in pairs
    assert (str(tmp_path / "venv"), str(tmp_path / "venv")) in pairs
    assert str(tmp_path / "venv" / "bin" / "python") not in argv  # inside the venv's bind
    assert (str(tmp_path / "real-docs"), str(tmp_path / "docs")) in pairs
    assert (str(tmp_path / "t"), f"{sandbox.WORKSPACE}/sdlc") in pairs
    assert (str(tmp_path / "out"), sandbox.OUT) in pairs
    size = str(256 << 20)
    for private in ("/tmp", "/home/ada", "/dev/shm"):
        at = argv.index(private)
        assert argv[at - 1] == "--tmpfs"
        before = argv[at - 5 : at - 1]
        assert ["--size", size] in (before[:2], before[2:]), private
    assert ("--remount-ro", "/dev") in pairs
    assert ("--dir", str(tmp_path / "cwd")) in pairs
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert ("--cap-drop", "ALL") in pairs
    assert "--share-net" not in argv
    tail = argv[argv.index("--") + 1 :]
    assert tail == [
        "/usr/bin/prlimit",
        f"--fsize={64 << 20}",
        f"--as={8192 << 20}",
        "--nproc=1024",
        "--",
        "harness",
        "--x",
    ]


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


def test_flightdeck_s_own_installation_and_package_are_bound() -> None:
    """The harness's PATH starts with flightdeck's interpreter, so both are on the list."""
    import importlib.util

    found = sandbox_paths.flightdeck_paths()
    spec = importlib.util.find_spec("flightdeck")
    assert spec is not None
    assert spec.submodule_search_locations is not None
    assert Path(spec.submodule_search_locations[0]).resolve() in found
    assert Path(sys.prefix).resolve() in found
    assert Path(sys.base_prefix).resolve() in found


def test_the_suites_beside_a_symlinked_suite_folder_are_protected(tmp_path: Path) -> None:
    real = tmp_path / "data" / "demo-v1"
    real.mkdir(parents=True)
    (real / "keys.jsonl").write_text("{}\n")
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "demo-v1").symlink_to(real)
    (suites / "demo-v2").mkdir()
    (suites / "demo-v2" / "keys.jsonl").write_text("{}\n")
    protected = sandbox_paths.protected_paths(
        root=tmp_path, suite_dir=suites / "demo-v1", repos=[], holdouts=None
    )
    assert real in protected
    assert (suites / "demo-v2").resolve() in protected
    assert tmp_path.resolve() / ".flightdeck" in protected  # whether it exists yet or not
