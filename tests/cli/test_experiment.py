"""`flightdeck experiment run` and `experiment agent repo-search`, end to end."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.builders import FILES_AS_OF, BuiltProject, sha
from tests.cli_calls import invoke
from tests.processes import live_command_lines

from flightdeck.cli import cli
from flightdeck.suite.records import read_answers, read_meta
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

HARNESSES = Path(__file__).parents[1] / "data" / "harnesses"
REPO_SEARCH = shlex.join([sys.executable, "-m", "flightdeck", "experiment", "agent", "repo-search"])


def harness(name: str, *args: str) -> str:
    return shlex.join([sys.executable, str(HARNESSES / name), *args])


def run(runner: CliRunner, project: BuiltProject, command: str, *extra: str) -> Result:
    return invoke(
        runner,
        "experiment",
        "run",
        str(project.suite),
        "--arm",
        "arm1",
        "--harness",
        command,
        *extra,
    )


def answer_lines(project: BuiltProject, arm: str = "arm1") -> list[dict[str, Any]]:
    path = project.suite / "answers" / f"{arm}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def seal_suite(project: BuiltProject) -> None:
    seal(project.folder, repos=RepoSet({"sdlc": project.repo}, project.root / "cache"))


def unsealed_warning(project: BuiltProject) -> str:
    return (
        f"warning: {project.suite} is not sealed; answers to an unsealed suite cannot be "
        "scored until it is\n"
    )


def test_run_with_the_repo_search_agent(runner: CliRunner, project: BuiltProject) -> None:
    result = run(runner, project, REPO_SEARCH, "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "demo-v1 / arm1: 4 of 4 questions answered (4 of 4 trials this run succeeded, "
        "0 answered before)\n"
        f"answers: {project.suite / 'answers' / 'arm1.jsonl'}\n"
    )
    assert sorted(result.stderr.splitlines())[0].startswith("q1: ok (")
    path = project.suite / "answers" / "arm1.jsonl"
    by_id = {a.id: a for a in read_answers(path, ["q1", "q2", "q3", "q4"])}
    q1 = by_id["q1"].citations[0]
    assert q1.uri.startswith("sdlc/docs/adr/0001-database.md#L")
    # the hash of the file at as_of, not at the later commit that edited it
    assert q1.sha256 == sha(FILES_AS_OF["docs/adr/0001-database.md"])
    assert "JSONB" in by_id["q1"].answer
    meta = read_meta(project.suite / "answers" / "arm1.meta.json")
    assert meta.fields["model"] == "none (flightdeck repo-search, BM25)"
    assert meta.fields["knowledge_snapshot"] == {"sdlc": [project.as_of]}
    trace = (project.root / "traces" / "demo-v1" / "arm1" / "q1.log").read_text()
    assert "==> FLIGHTDECK_TRACE <==\nrepo-search: 5 files read, 0 skipped" in trace


def test_failures_exit_1_with_a_summary(runner: CliRunner, project: BuiltProject) -> None:
    control = project.root / "fail"
    control.mkdir()
    (control / "q3").touch()
    command = harness("answer.py", "--fail-if-exists", str(control))
    result = run(runner, project, command, "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[2:] == [
        f"1 failed (recorded in {Path('runs/demo-v1/arm1.jsonl')}):",
        "  q3: exit status 1 (stderr: told to fail on q3) [trace: traces/demo-v1/arm1/q3.log]",
        "Rerun the same command to retry only the failed and missing questions.",
    ]
    (control / "q3").unlink()
    again = run(runner, project, command, "--json")
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert summary["ran"] == 1
    assert summary["answered"] == 4
    assert summary["failed"] == []
    assert again.stderr.startswith(
        unsealed_warning(project) + "resuming: 3 of 4 questions already answered\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--harness", "no-such-harness-xyz"],
            "error: --harness: 'no-such-harness-xyz' is not an executable file or a command on "
            "PATH; check the command\n",
            id="unknown-command",
        ),
        pytest.param(
            ["--harness", "true", "--repo", "sdlc"],
            "error: --repo: 'sdlc' is not NAME=PATH; e.g. --repo sdlc=../sdlc\n",
            id="bad-repo-option",
        ),
        pytest.param(
            ["--harness", "true", "--repo", "sdlc=nowhere"],
            "error: nowhere: repository 'sdlc' not found at this path; fix repos: in "
            "params.yaml or --repo sdlc=PATH\n",
            id="missing-repo",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    runner: CliRunner, project: BuiltProject, args: list[str], message: str
) -> None:
    seal_suite(project)  # a sealed suite: no warning, and the seal is no obstacle
    result = runner.invoke(cli, ["experiment", "run", str(project.suite), "--arm", "a", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr == message
    assert "Traceback" not in result.output


def test_a_sealed_suite_that_changed_is_refused_before_any_trial(
    runner: CliRunner, project: BuiltProject
) -> None:
    seal_suite(project)
    with (project.suite / "questions.jsonl").open("a") as questions:
        questions.write("\n")
    result = runner.invoke(
        cli, ["experiment", "run", str(project.suite), "--arm", "a", "--harness", "true"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {project.suite / 'questions.jsonl'}: changed after sealing (it no longer "
        "matches manifest.json); a changed question is a new suite version (demo-v2), never "
        "an edit: restore the file\n"
    )
    assert not (project.suite / "answers").exists()


def test_an_unsealed_suite_is_run_with_a_warning(runner: CliRunner, project: BuiltProject) -> None:
    result = run(runner, project, harness("answer.py"), "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == unsealed_warning(project)
    assert len(answer_lines(project)) == 4


def test_the_meta_says_who_ran_the_arm(
    runner: CliRunner, project: BuiltProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--by, else git's user.name of the project repository, else the login name."""
    import getpass

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # only the project's own config
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    seal_suite(project)
    command = harness("answer.py")
    suite = str(project.suite)

    def by_of(arm: str, *extra: str) -> str:
        args = ["experiment", "run", suite, "--arm", arm, "--harness", command, *extra]
        assert invoke(runner, *args).exit_code == 0
        return str(read_meta(project.suite / "answers" / f"{arm}.meta.json").fields["by"])

    assert by_of("no-git") == getpass.getuser()  # the project is not a git repository yet
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    assert by_of("no-name") == getpass.getuser()  # a repository without user.name
    subprocess.run(
        ["git", "-C", str(project.root), "config", "user.name", "Grace Hopper"], check=True
    )
    assert by_of("signed") == "Grace Hopper"
    assert by_of("chosen", "--by", "ci-nightly") == "ci-nightly"
    meta_bytes = (project.suite / "answers" / "chosen.meta.json").read_bytes()
    assert meta_bytes.endswith(b"}\n")
    assert (
        json.loads(meta_bytes) == read_meta(project.suite / "answers" / "chosen.meta.json").fields
    )


def test_the_agent_reads_the_task_from_the_environment(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sdlc" / "docs").mkdir(parents=True)
    (workspace / "sdlc" / "docs" / "owners.md").write_text("Ada owns the billing service.\n")
    (workspace / "sdlc" / "docs" / "other.md").write_text("Nothing here.\n")
    task = {"id": "q1", "question": "Who owns billing?", "kind": "who-owns"}
    monkeypatch.setenv("FLIGHTDECK_TASK", json.dumps(task))
    monkeypatch.setenv("FLIGHTDECK_WORKSPACE", str(workspace))
    monkeypatch.setenv("FLIGHTDECK_RESULT", str(tmp_path / "result.json"))
    monkeypatch.setenv("FLIGHTDECK_TRACE", str(tmp_path / "trace.log"))
    result = invoke(runner, "experiment", "agent", "repo-search")
    assert result.exit_code == 0, result.output
    output = json.loads(result.stdout)
    assert output == json.loads((tmp_path / "result.json").read_text())
    assert output["citations"] == [
        {"uri": "sdlc/docs/owners.md#L1-L1", "sha256": sha("Ada owns the billing service.\n")}
    ]
    log = (tmp_path / "trace.log").read_text()
    assert "query words: own bill" in log  # stems, as the whole-passage mode counts them
    assert "kind: who-owns" in log  # the task's kind reaches the search (#24)


def test_the_agent_reads_the_task_from_stdin(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "a.md").write_text("deploy with make release\n")
    task = json.dumps({"id": "q", "question": "How do we deploy?"})
    result = runner.invoke(
        cli, ["experiment", "agent", "repo-search", "--workspace", str(tmp_path)], input=task
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["citations"][0]["uri"] == "r/a.md#L1-L1"


def test_the_agent_refuses_a_task_that_is_not_json(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        cli, ["experiment", "agent", "repo-search", "--workspace", str(tmp_path)], input="hello"
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "error: <stdin>: the task is not JSON (Expecting value at column 1); pass the question "
        "record as JSON\n"
    )


def command_lines(marker: str) -> dict[int, str]:
    """Live processes whose command line holds ``marker`` (any pid namespace, seen from here)."""
    lines = live_command_lines().items()
    return {pid: c.decode(errors="replace") for pid, c in lines if marker.encode() in c}


def processes_naming(marker: str) -> list[int]:
    return list(command_lines(marker))


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 120  # a bound on a hang, not a timing assertion
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def held_trials(project: BuiltProject) -> list[str]:
    """The "holding <id>" lines of running trials' FLIGHTDECK_TRACE files."""
    logs = (project.root / ".flightdeck" / "workspaces").glob("run-*/trial-*/out/trace.log")
    lines = []
    for log in logs:
        with contextlib.suppress(OSError):
            lines += [x for x in log.read_text().splitlines() if x.startswith("holding")]
    return lines


def test_sigkill_mid_run_loses_no_finished_trial_and_a_rerun_does_the_rest(
    project: BuiltProject,
) -> None:
    """Kill the runner with SIGKILL after two answers landed; the sandboxed harness dies
    with it (bubblewrap's --die-with-parent) and the rerun runs only the rest."""
    seal_suite(project)
    gate = project.root / "hold"
    gate.mkdir()
    for qid in ("q3", "q4"):  # q1 and q2 land; q3 holds until killed, so q4 never starts
        (gate / qid).touch()
    command = harness("answer.py", "--hold-if-exists", str(gate))
    argv = [sys.executable, "-m", "flightdeck", "experiment", "run", str(project.suite)]
    argv += ["--arm", "arm1", "--harness", command, "--jobs", "1"]
    answers = project.suite / "answers" / "arm1.jsonl"
    proc = subprocess.Popen(argv, cwd=project.root, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: held_trials(project) or proc.poll() is not None, "q3 to hold")
        assert held_trials(project) == ["holding q3"]
        assert processes_naming(str(gate)), "the held harness is not running"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    wait_for(lambda: not processes_naming(str(gate)), "the sandboxed harness to die")
    landed = [json.loads(line)["id"] for line in answers.read_bytes().splitlines()]
    assert landed == ["q1", "q2"]
    assert (project.root / ".flightdeck" / "workspaces").exists()

    for qid in ("q3", "q4"):
        (gate / qid).unlink()
    rerun = subprocess.run(argv, cwd=project.root, capture_output=True, text=True, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stderr.startswith(f"resuming: {len(landed)} of 4 questions already answered")
    final = [line["id"] for line in answer_lines(project)]
    assert sorted(final) == ["q1", "q2", "q3", "q4"]
    assert final[: len(landed)] == landed
    ledger = (project.root / "runs" / "demo-v1" / "arm1.jsonl").read_text().splitlines()
    second_run = {json.loads(line)["run"] for line in ledger[-(4 - len(landed)) :]}
    assert len(second_run) == 1
    assert list((project.root / ".flightdeck" / "workspaces").iterdir()) == []


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_runner_kills_running_harnesses_and_exits_130(
    project: BuiltProject, signum: signal.Signals, sandbox: str
) -> None:
    pidfile = project.root / "child.pid"
    command = harness("misbehave.py", "orphan", str(pidfile))
    argv = [sys.executable, "-m", "flightdeck", "experiment", "run", str(project.suite)]
    argv += ["--arm", "arm1", "--harness", command, "--jobs", "1", "--sandbox", sandbox]
    proc = subprocess.Popen(argv, cwd=project.root, stderr=subprocess.PIPE, text=True)

    def child_started() -> bool:
        return any("time.sleep(60)" in marker for marker in command_lines(str(pidfile)).values())

    try:
        wait_for(lambda: child_started() or proc.poll() is not None, "the harness's child")
        time.sleep(0.1)  # the child is there; let the harness reach its sleep
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.endswith("interrupted\n")
    wait_for(lambda: not processes_naming(str(pidfile)), "the harness and its child to die")
    ledger = (project.root / "runs" / "demo-v1" / "arm1.jsonl").read_text().splitlines()
    assert [json.loads(line)["reason"] for line in ledger] == ["killed: the run was interrupted"]
    assert list((project.root / ".flightdeck" / "workspaces").iterdir()) == []


def test_params_give_an_arm_its_network_and_variables_and_flags_override(
    runner: CliRunner, project: BuiltProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FD_KEY", "k-123")
    with (project.root / "params.yaml").open("a") as params:
        params.write("harness_sandbox:\n  arm1: {network: true, pass_env: [FD_KEY]}\n")
    command = shlex.join(
        [
            sys.executable,
            "-c",
            "import os, json; print(json.dumps({'answer': os.environ.get("
            "'FD_KEY', 'unset'), 'citations': []}))",
        ]
    )
    result = run(runner, project, command, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["sandbox"]["mode"] == "bwrap"
    assert summary["sandbox"]["network"] is True
    assert summary["sandbox"]["pass_env"] == ["FD_KEY"]
    assert {a["answer"] for a in answer_lines(project)} == {"k-123"}
    other = invoke(
        runner,
        "experiment",
        "run",
        str(project.suite),
        "--arm",
        "arm2",
        "--harness",
        command,
        "--sandbox",
        "none",
    )
    assert other.exit_code == 0, other.output
    assert "sandbox: none (the arm ran without a sandbox)\n" in other.stdout
    meta = read_meta(project.suite / "answers" / "arm2.meta.json").fields["sandbox"]
    assert meta["note"] == "arm ran without a sandbox"


def test_a_bad_sandbox_setting_in_params_is_one_line(
    runner: CliRunner, project: BuiltProject
) -> None:
    with (project.root / "params.yaml").open("a") as params:
        params.write("harness_sandbox:\n  arm1: {network: yes-please}\n")
    result = runner.invoke(
        cli, ["experiment", "run", str(project.suite), "--arm", "arm1", "--harness", "true"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "error: params.yaml:10: harness_sandbox.arm1.network has a bad value 'yes-please'\n"
    )


def test_bind_paths_from_params_and_flags_are_readable_and_recorded(
    runner: CliRunner, project: BuiltProject, tmp_path: Path
) -> None:
    shared, extra = project.root / "config" / "llm", tmp_path / "extra"
    shared.mkdir(parents=True)
    extra.mkdir()
    (shared / "prompt.txt").write_text("from params")
    (extra / "note.txt").write_text("from the flag")
    with (project.root / "params.yaml").open("a") as params:
        params.write("harness_sandbox:\n  arm1: {bind: [config/llm]}\n")
    code = (
        "import json; from pathlib import Path; print(json.dumps({'answer': "
        f"Path({str(shared / 'prompt.txt')!r}).read_text() + ' / ' + "
        f"Path({str(extra / 'note.txt')!r}).read_text(), 'citations': []}}))"
    )
    command = shlex.join([sys.executable, "-c", code])
    result = run(runner, project, command, "--bind", str(extra), "--json")
    assert result.exit_code == 0, result.output
    assert {a["answer"] for a in answer_lines(project)} == {"from params / from the flag"}
    assert json.loads(result.stdout)["sandbox"]["bind"] == sorted([str(shared), str(extra)])


def test_a_bind_over_the_suite_is_one_line_exit_2(runner: CliRunner, project: BuiltProject) -> None:
    result = runner.invoke(
        cli,
        ["experiment", "run", str(project.suite), "--arm", "arm1", "--harness", "true"]
        + ["--bind", str(project.root)],
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == unsealed_warning(project) + (
        f"error: --bind: {project.root} holds or lies in {project.suite}, which a score "
        "depends on; bind a folder that does not\n"
    )


def test_a_harness_s_terminal_escapes_never_reach_the_terminal(
    runner: CliRunner, project: BuiltProject
) -> None:
    result = run(runner, project, harness("misbehave.py", "escape-stderr"), "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.output
    assert "\x07" not in result.output
    assert "(stderr: boom \\x1b[2J\\x1b]0;owned\\x07 \\x1b[31mred)" in result.stdout


def test_an_output_cap_is_an_option_and_named_in_the_failure(
    runner: CliRunner, project: BuiltProject
) -> None:
    command = harness("misbehave.py", "big-stdout")
    result = run(runner, project, command, "--jobs", "1", "--max-output-mb", "1")
    assert result.exit_code == 1, result.output
    assert (
        "stdout reached the 1 MiB output cap (--max-output-mb); nothing past the cap was kept"
        in result.stdout
    )
    again = run(runner, project, command, "--jobs", "1", "--max-output-mb", "8")
    assert again.exit_code == 0, again.output


def test_a_disk_that_refuses_a_trace_fails_that_trial_alone_and_a_rerun_retries_it(
    project: BuiltProject,
) -> None:
    """The runner's own writes refused, as on a full disk: RLIMIT_FSIZE on the runner makes
    writing a 3 MiB trace fail (EFBIG) where the old runner died with exit 3."""
    command = harness("misbehave.py", "big-stdout-on", "q2")
    argv = [sys.executable, "-m", "flightdeck", "experiment", "run", str(project.suite)]
    argv += ["--arm", "arm1", "--harness", command, "--jobs", "2", "--max-output-mb", "4"]
    # A soft limit of 2.5 MiB on the runner's files (the harness may raise its own to 4 MiB).
    limited = ["prlimit", f"--fsize={5 << 19}:unlimited", "--", *argv]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run(limited, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "  q2: could not write its trace traces/demo-v1/arm1/q2.log: File too large" in (
        done.stdout
    )
    assert sorted(a["id"] for a in answer_lines(project)) == ["q1", "q3", "q4"]
    again = subprocess.run(
        argv[:-2] + ["--max-output-mb", "8"], capture_output=True, text=True, env=env, check=False
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resuming: 3 of 4 questions already answered" in again.stderr
    assert sorted(a["id"] for a in answer_lines(project)) == ["q1", "q2", "q3", "q4"]


@pytest.mark.slow
def test_a_scored_arm_runs_again_only_to_the_same_answers(
    runner: CliRunner, project: BuiltProject
) -> None:
    seal_suite(project)
    assert run(runner, project, REPO_SEARCH).exit_code == 0
    answers = project.suite / "answers" / "arm1.jsonl"
    scored = answers.read_bytes()
    (project.suite / "scores.jsonl").write_text(
        json.dumps({"arm": "arm1", "answers_sha256": sha(scored.decode()), "scored_at": "D1"})
        + "\n"
    )
    # `dvc repro -f` removes the stage's outputs: the deterministic rerun gives the same bytes.
    meta_path = project.suite / "answers" / "arm1.meta.json"
    first_date = json.loads(meta_path.read_text())["date"]
    answers.unlink()
    again = run(runner, project, REPO_SEARCH)
    assert again.exit_code == 0, again.output
    assert answers.read_bytes() == scored
    assert not (project.suite / "answers" / ".arm1.rerun.jsonl").exists()
    # (#21) the summary names the real file, and the same answers keep their date
    assert f"answers: {answers}\n" in again.stdout
    assert ".rerun" not in again.output
    assert json.loads(meta_path.read_text())["date"] == first_date
    # A scored arm with a question left to answer would change: refused before any trial.
    answers.write_bytes(b"".join(scored.splitlines(keepends=True)[:-1]))
    result = runner.invoke(
        cli, ["experiment", "run", str(project.suite), "--arm", "arm1", "--harness", REPO_SEARCH]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith(
        f"error: {answers}: arm 'arm1' was scored on D1; its answers cannot change: import or "
        "run them under a new arm name\n"
    )
    # A rerun that gives other answers is kept aside, and the scored file is not replaced.
    (project.suite / "scores.jsonl").write_text(
        json.dumps({"arm": "arm1", "answers_sha256": "0" * 64, "scored_at": "D2"}) + "\n"
    )
    answers.unlink()
    differs = runner.invoke(
        cli, ["experiment", "run", str(project.suite), "--arm", "arm1", "--harness", REPO_SEARCH]
    )
    assert differs.exit_code == 2, differs.output
    rerun = project.suite / "answers" / ".arm1.rerun.jsonl"
    assert differs.stderr.endswith(
        f"error: {answers}: arm 'arm1' was scored on D2; this run's answers differ from the "
        f"scored ones (this run's are in {rerun}, to compare; arm1.jsonl is left as it was): "
        "its answers cannot change, so run them under a new arm name\n"
    )
    assert not answers.exists()
    assert (project.suite / "answers" / ".arm1.rerun.jsonl").read_bytes() == scored


def test_a_rerun_keeps_the_committed_meta_date(tmp_path: Path) -> None:
    """(#21) `dvc repro -f` removes the meta too: the date comes from its committed version."""
    from tests.gitrepo import git_env

    from flightdeck.arms.run_files import previous_meta_date

    folder = tmp_path / "answers"
    folder.mkdir()
    meta = folder / "arm1.meta.json"
    meta.write_text(json.dumps({"runner": "harness", "date": "2026-11-20T10:00:00Z"}))
    env = git_env()
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "meta"]):
        subprocess.run(["git", "-C", str(tmp_path), *args], env=env, check=True)
    meta.write_text(json.dumps({"runner": "harness", "date": "2026-11-21T10:00:00Z"}))
    assert previous_meta_date(meta) == "2026-11-21T10:00:00Z"  # the file, while it is there
    meta.unlink()
    assert previous_meta_date(meta) == "2026-11-20T10:00:00Z"  # then git's
    assert previous_meta_date(tmp_path / "nowhere" / "x.meta.json") is None
