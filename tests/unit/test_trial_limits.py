"""Caps, hostile output and the runner's canary check, with real bwrap processes.

Each question's id names what the harness does (``misbehave.py by-id``), so one run holds
every attack beside a well-behaved trial; the project lives outside /tmp.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.builders import project_repos
from tests.gitrepo import make_git_repo
from tests.tree import gen

from flightdeck.arms.limits import Limits, escape_control
from flightdeck.arms.pids_cgroup import controller
from flightdeck.arms.runner import RunConfig, RunResult, run_experiment
from flightdeck.holdouts.manifest import load_manifest, manifest_path
from flightdeck.holdouts.registry import register_suite
from flightdeck.suite.schema import CANARY_PREFIX

HARNESSES = Path(__file__).parents[1] / "data" / "harnesses"
CANARY = CANARY_PREFIX + "fedcba9876543210fedcba9876543210"
MIB = 1 << 20
CAPS = Limits(output_mb=2, tmp_mb=1, memory_mb=512, processes=1024)


@pytest.fixture
def root() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="flightdeck-limits-test-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def make_project(root: Path, ids: list[str]) -> dict[str, Any]:
    clone = root / "repos" / "sdlc"
    (commit,) = make_git_repo(clone, [{"docs/a.md": "# A\n"}])
    suite = root / "suites" / "demo-v1"
    record = {"question": "?", "kind": "how-to", "as_of": {"sdlc": commit}, "scope": []}
    gen(suite, {"questions.jsonl": [{"id": qid, **record} for qid in ids]})
    register_suite(
        root / "holdouts", suite="demo-v1", manifest_sha256="1" * 64, canaries={ids[0]: CANARY}
    )
    return {"root": root, "suite": suite, "clone": clone}


def run(project: dict[str, Any], *args: str, **options: Any) -> RunResult:
    command = shlex.join([sys.executable, str(HARNESSES / "misbehave.py"), "by-id", *args])
    config = RunConfig(
        project["suite"],
        "arm1",
        command,
        root=project["root"],
        jobs=2,
        timeout=120,
        limits=CAPS,
    )
    config = RunConfig(**{**config.__dict__, **options})
    return run_experiment(config, repos=project_repos(config.root, {"sdlc": project["clone"]}))


def ledger_ids(project: dict[str, Any]) -> list[list[str]]:
    """The trial ids of each run, from the runs ledger."""
    runs: dict[str, list[str]] = {}
    path = project["root"] / "runs" / "demo-v1" / "arm1.jsonl"
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        runs.setdefault(entry["run"], []).append(entry["id"])
    return [sorted(ids) for ids in runs.values()]


OUTPUT_CAP = "reached the 2 MiB output cap (--max-output-mb); nothing past the cap was kept"
EXPECTED = {
    "big-stdout": "stdout " + OUTPUT_CAP,
    "huge-result": "FLIGHTDECK_RESULT " + OUTPUT_CAP,
    "fill-out": "FLIGHTDECK_RESULT " + OUTPUT_CAP,
    # Python ignores SIGXFSZ, so the harness sees EFBIG and dies of it; the cap is named
    "sparse-trace": (
        "exit status 1 (stderr: OSError: [Errno 27] File too large) (each file it writes is "
        "capped at 2 MiB: --max-output-mb)"
    ),
    "many-files": (
        "its out folder grew past the 2 MiB output cap (--max-output-mb); the trial was killed"
    ),
    "fill-tmp": (
        "exit status 1 (stderr: writing /tmp/fill: No space left on device) (the private "
        "/tmp and $HOME hold 1 MiB each: --max-tmp-mb)"
    ),
    "bigint": (
        "stdout is not the result JSON: it holds an integer of 5,000 digits (more than 4,300)"
    ),
    "surrogate": (
        "stdout is not the result JSON: it holds an unpaired surrogate escape (\\ud800-\\udfff)"
    ),
    "bad-utf8": "stdout is not UTF-8 (byte 13)",
}


def test_every_cap_and_hostile_output_fails_its_trial_alone_and_a_rerun_retries_only_them(
    root: Path,
) -> None:
    project = make_project(root, ["ok", *EXPECTED, "alloc"])
    result = run(project)
    reasons = {o.id: o.reason for o in result.failed}
    alloc = reasons.pop("alloc")
    assert reasons == EXPECTED
    assert alloc is not None
    assert alloc.endswith("(the memory cap is 512 MiB per process: --max-memory-mb)")
    assert "MemoryError" in alloc
    answers = (project["suite"] / "answers" / "arm1.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in answers] == ["ok"]
    for trace in (root / "traces" / "demo-v1" / "arm1").iterdir():  # nothing past the cap
        info = trace.stat()
        assert max(info.st_size, info.st_blocks * 512) < 4 * CAPS.output_bytes + 64 << 10, trace
    sparse = root / "traces" / "demo-v1" / "arm1" / "sparse-trace.log"
    assert sparse.stat().st_size < 64 << 10  # the 3 GiB sparse log never existed
    again = run(project)
    assert sorted(o.id for o in again.outcomes) == sorted([*EXPECTED, "alloc"])
    first, second = ledger_ids(project)
    assert "ok" in first
    assert "ok" not in second  # the rerun retried only the failed trials


def test_a_higher_cap_on_a_rerun_lets_a_capped_trial_through(root: Path) -> None:
    project = make_project(root, ["ok", "big-stdout"])
    (failed,) = run(project).failed
    assert failed.id == "big-stdout"
    rerun = run(project, limits=Limits(output_mb=8, tmp_mb=1, memory_mb=512))
    assert not rerun.failed, rerun.failed
    assert [o.id for o in rerun.outcomes] == ["big-stdout"]


@pytest.mark.parametrize("mode", ["canary-result", "canary-stderr", "canary-trace"])
def test_a_canary_in_anything_a_trial_wrote_fails_it_and_voids_the_suite(
    root: Path, mode: str
) -> None:
    project = make_project(root, [mode, "ok"])
    (root / "stolen.txt").write_text(CANARY)  # as a file: a trace header shows the command
    result = run(project, str(root / "stolen.txt"))
    (failed,) = result.failed
    trace = root / "traces" / "demo-v1" / "arm1" / f"{mode}.log"
    lines = trace.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if CANARY in text)
    shown = trace.relative_to(root)
    assert failed.id == mode
    assert failed.reason == (
        f"its output holds a canary of suite 'demo-v1' (question {mode!r}) at {shown}:{line}; "
        "the suite is now void"
    )
    assert [o.id for o in result.outcomes if o.ok] == ["ok"]  # a clean trace: no false hit
    assert not (project["suite"] / "answers" / "arm1.jsonl").read_text().count(CANARY)
    manifest = load_manifest(manifest_path(root / "holdouts"))
    entry = manifest.suites["demo-v1"]
    assert entry.status == "void"
    assert entry.evidence is not None
    assert (entry.evidence.file, entry.evidence.line) == (str(trace), line)
    void = manifest.history[-1]
    assert (void.event, void.suite) == ("void", "demo-v1")
    assert void.evidence is not None
    assert (void.evidence.file, void.evidence.line) == (str(trace), line)
    scans = (root / "holdouts" / "scans.jsonl").read_text().splitlines()  # history apart (#21)
    assert json.loads(scans[-1])["hits"] == 1


def test_a_clean_run_leaves_the_registry_as_it_was(root: Path) -> None:
    project = make_project(root, ["ok"])
    before = manifest_path(root / "holdouts").read_bytes()
    assert not run(project).failed
    assert manifest_path(root / "holdouts").read_bytes() == before


def test_control_characters_are_escaped_for_the_terminal() -> None:
    raw = "boom \x1b[2J\x1b]0;owned\x07 \u202e\x85 ok"
    assert escape_control(raw) == "boom \\x1b[2J\\x1b]0;owned\\x07 \\u202e\\x85 ok"


def test_the_meta_records_the_caps_and_how_each_holds(root: Path) -> None:
    project = make_project(root, ["ok"])
    run(project)
    meta = json.loads((project["suite"] / "answers" / "arm1.meta.json").read_text())
    limits = meta["sandbox"]["limits"]
    assert (limits["output_mb"], limits["tmp_mb"], limits["memory_mb"]) == (2, 1, 512)
    if controller() is not None:  # root here: a pids cgroup (#20), which holds for root too
        expected = "yes: a pids cgroup per trial"
    else:
        expected = "no: flightdeck runs as root" if os.getuid() == 0 else "yes: RLIMIT_NPROC"
    assert limits["processes_enforced"].startswith(expected)
    assert meta["canary_check"] == (
        f"every trial's trace, against {manifest_path(root / 'holdouts')}"
    )


def test_the_process_cap_holds_for_an_ordinary_user(root: Path) -> None:
    """RLIMIT_NPROC, set inside the sandbox's user namespace, stops a fork bomb at the cap.

    Real root is exempt (a kernel rule the meta states), so as root the sandbox is started as
    ``nobody`` with setpriv, as an ordinary operator would run it.
    """
    import subprocess

    from flightdeck.arms import sandbox, sandbox_paths

    out = root / "out"
    out.mkdir()
    os.chmod(root, 0o755)
    os.chmod(out, 0o777)
    policy = sandbox.SandboxPolicy(
        system=tuple(sandbox_paths.system_binds()),
        limits=Limits(processes=16),
        bwrap=shutil.which("bwrap") or "bwrap",
        prlimit=shutil.which("prlimit") or "prlimit",
    )
    bomb = "n=0; for i in $(seq 64); do sleep 3 & n=$((n+1)); done; wait; echo started $n"
    argv = sandbox.bwrap_argv(policy, ["sh", "-c", bomb], mounts=[], out_dir=out, cwd=Path("/"))
    if os.getuid() == 0:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert "Cannot fork" in proc.stderr, (proc.returncode, proc.stderr)
    assert "started 64" not in proc.stdout


FORK_CAP = Limits(output_mb=2, tmp_mb=1, memory_mb=512, processes=40)


_SLEEPS = itertools.count()


def sleep_marker() -> str:
    """A ``sleep`` duration no other test, worker or engineer on this machine uses now: the
    pid of this process and a count, so that counting it machine-wide counts only ours."""
    return f"31.{os.getpid():07d}{next(_SLEEPS):03d}"


def sleepers(marker: str) -> list[str]:
    """The processes still alive anywhere on the machine that run ``sleep MARKER``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()]:
            found.append(proc.name)
    return found


@pytest.mark.skipif(controller() is None, reason="no pids cgroup can be made here")
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_fork_bomb_fails_its_trial_with_the_process_cap_named(root: Path, sandbox: str) -> None:
    """A pids cgroup per trial caps processes for root too, and sees a refused fork even when
    the harness swallows the error and answers (fork-500-quiet)."""
    where = controller()
    assert where is not None
    project = make_project(root, ["ok", "fork-500", "fork-500-quiet"])
    marker = sleep_marker()
    result = run(project, marker, sandbox=sandbox, limits=FORK_CAP)
    reasons = {o.id: o.reason or "" for o in result.failed}
    assert sorted(reasons) == ["fork-500", "fork-500-quiet"]
    for reason in reasons.values():
        assert reason.startswith(
            "it tried to run more than 40 processes and threads at once (the process cap, "
            "--max-processes); "
        ), reason
        assert int(reason.split("; ")[1].split()[0]) >= 1  # forks refused, counted by the kernel
    assert [o.id for o in result.outcomes if o.ok] == ["ok"]
    assert sleepers(marker) == []  # every child killed with its trial
    left = [p.name for p in where.parent.glob(f"flightdeck-{os.getpid()}-*")]
    assert left == []  # every trial's group removed


@pytest.mark.skipif(controller() is None, reason="no pids cgroup can be made here")
def test_a_trial_group_kills_a_process_that_left_the_session() -> None:
    """``setsid`` escapes the trial's process group, never its cgroup."""
    import subprocess

    from flightdeck.arms.pids_cgroup import trial_group

    group = trial_group(5, sandboxed=False)
    assert group is not None
    marker = sleep_marker()
    script = f"setsid sleep {marker} > /dev/null 2>&1 < /dev/null & echo started"
    out = subprocess.run(group.wrap(["sh", "-c", script]), capture_output=True, text=True)
    assert out.stdout == "started\n"
    deadline = time.monotonic() + 10  # the escapee may not have exec'd sleep when sh returns
    while not sleepers(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(sleepers(marker)) == 1  # outlived its parent, outside the session
    assert (group.path / "pids.max").read_text().strip() == "5"
    group.close()
    assert sleepers(marker) == []
    assert not group.path.exists()
