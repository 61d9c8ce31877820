"""The runner's guarantees, against real git repositories and misbehaving harnesses."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.builders import project_repos
from tests.gitrepo import make_git_repo
from tests.tree import gen

from flightdeck.arms.arm_meta import harness_path
from flightdeck.arms.protocol import ProtocolError, check_result, decode_result
from flightdeck.arms.run_files import repair_torn_line
from flightdeck.arms.runner import RunConfig, RunResult, run_experiment
from flightdeck.arms.trees import remove_stale
from flightdeck.arms.trial_output import trace_file_name
from flightdeck.arms.workspace import WorkspaceCache
from flightdeck.errors import InputError
from flightdeck.suite.records import (
    CANARY_PREFIX,
    Question,
    read_answers,
    read_meta,
    read_questions,
)
from flightdeck.suite.repos import RepoSet

HARNESSES = Path(__file__).parents[1] / "data" / "harnesses"
CANARY = CANARY_PREFIX + "0123456789abcdef0123456789abcdef"
SECRET_KEY = "THE-SEALED-ANSWER-KEY-TEXT"

SDLC_V1 = {
    "README.md": "# sdlc\n",
    "docs/adr/0001-db.md": "# Postgres\n\nWe chose Postgres.\n",
    "docs/runbooks/deploy.md": "# Deploy\n\nmake release\n",
    "docs/runbooks/old/deploy-v0.md": "# Old\n",
    "tools/run.sh": "#!/bin/sh\necho hi\n",
    # a suite committed inside the repository, and a file carrying a sealed canary
    "suites/other-v1/questions.jsonl": '{"id": "x"}\n',
    "suites/other-v1/keys.jsonl": f'{{"id": "x", "canary": "{CANARY}"}}\n',
    "notes/leak.txt": f"pasted by mistake: {CANARY}\n",
}
SDLC_V2 = {"docs/new-after-as-of.md": "# Too new\n", "docs/adr/0001-db.md": "# SQLite now\n"}
INFRA_V1 = {"terraform/main.tf": "resource {}\n"}


def harness(name: str, *args: str) -> str:
    return shlex.join([sys.executable, str(HARNESSES / name), *args])


def build(tmp_path: Path, questions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Two repositories and a suite; questions default to three over them."""
    sdlc = tmp_path / "repos" / "sdlc"
    infra = tmp_path / "repos" / "infra"
    s1, s2 = make_git_repo(sdlc, [SDLC_V1, SDLC_V2])
    (i1,) = make_git_repo(infra, [INFRA_V1])
    if questions is None:
        questions = [
            {"id": "q1", "as_of": {"sdlc": s1}, "scope": ["sdlc/docs/runbooks/*.md"]},
            {"id": "q2", "as_of": {"sdlc": s1, "infra": i1}, "scope": []},
            {"id": "q3", "as_of": {"sdlc": s1}, "scope": ["sdlc/docs/**"]},
        ]
    suite = tmp_path / "suites" / "demo-v1"
    commits = {"S1": s1, "S2": s2, "I1": i1}
    records = [
        {"question": f"What about {q['id']}?", "kind": "how-to", **q}
        | {"as_of": {k: commits.get(v, v) for k, v in q["as_of"].items()}}
        for q in questions
    ]
    keys = [
        {"id": q["id"], "answer_key": SECRET_KEY, "required_facts": ["x"], "canary": CANARY}
        for q in questions
    ]
    gen(suite, {"questions.jsonl": records, "keys.jsonl": keys})
    return {
        "root": tmp_path,
        "suite": suite,
        "repos": {"sdlc": sdlc, "infra": infra},
        "s1": s1,
        "s2": s2,
        "i1": i1,
    }


def run(env: dict[str, Any], command: str, **options: Any) -> RunResult:
    config = RunConfig(
        suite_dir=env["suite"],
        arm=options.pop("arm", "arm1"),
        command=command,
        root=env["root"],
        jobs=options.pop("jobs", 2),
        **options,
    )
    return run_experiment(config, repos=project_repos(config.root, env["repos"]))


def answers(env: dict[str, Any], arm: str = "arm1") -> dict[str, Any]:
    path = env["suite"] / "answers" / f"{arm}.jsonl"
    return {json.loads(line)["id"]: json.loads(line) for line in path.read_text().splitlines()}


def ledger(env: dict[str, Any], arm: str = "arm1") -> list[dict[str, Any]]:
    path = env["root"] / "runs" / "demo-v1" / f"{arm}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


# --- workspaces -----------------------------------------------------------------------------


def test_workspace_holds_only_the_scoped_files_at_as_of_read_only(tmp_path: Path) -> None:
    env = build(tmp_path)
    questions = read_questions(env["suite"] / "questions.jsonl")
    cache = WorkspaceCache(RepoSet(env["repos"], tmp_path / "cache"), tmp_path / "ws")
    try:
        files = {
            q.id: sorted(
                p.relative_to(cache.workspace(q)).as_posix()
                for p in cache.workspace(q).rglob("*")
                if p.is_file()
            )
            for q in questions
        }
        assert files["q1"] == ["sdlc/docs/runbooks/deploy.md"]
        assert files["q3"] == [
            "sdlc/docs/adr/0001-db.md",
            "sdlc/docs/runbooks/deploy.md",
            "sdlc/docs/runbooks/old/deploy-v0.md",
        ]
        assert files["q2"] == [
            "infra/terraform/main.tf",
            "sdlc/README.md",
            "sdlc/docs/adr/0001-db.md",
            "sdlc/docs/runbooks/deploy.md",
            "sdlc/docs/runbooks/old/deploy-v0.md",
            "sdlc/tools/run.sh",
        ]
        q2 = cache.workspace(questions[1])
        assert (q2 / "sdlc/docs/adr/0001-db.md").read_text() == SDLC_V1["docs/adr/0001-db.md"]
        assert not list(q2.rglob(".git"))
        for path in [q2, *q2.rglob("*")]:
            mode = stat.S_IMODE(path.stat().st_mode)
            assert not mode & 0o222, f"{path} is writable ({oct(mode)})"
        assert stat.S_IMODE((q2 / "sdlc/tools/run.sh").stat().st_mode) == 0o444
        omitted = [o for t in cache.trees() for o in t.omitted]
        assert ("sdlc/notes/leak.txt", "holds a sealed-key canary") in omitted
        assert ("sdlc/suites/other-v1/keys.jsonl", "inside a suite folder") in omitted
    finally:
        cache.close()
    assert not cache.root.exists()


def test_workspace_is_built_once_per_repository_commit_and_scope(tmp_path: Path) -> None:
    env = build(
        tmp_path,
        [
            {"id": "a", "as_of": {"sdlc": "S1"}, "scope": ["sdlc/docs/**"]},
            {"id": "b", "as_of": {"sdlc": "S1"}, "scope": ["sdlc/docs/**"]},
            {"id": "c", "as_of": {"sdlc": "S1"}, "scope": []},
            {"id": "d", "as_of": {"sdlc": "S2"}, "scope": []},
        ],
    )
    questions = read_questions(env["suite"] / "questions.jsonl")
    cache = WorkspaceCache(RepoSet(env["repos"], tmp_path / "cache"), tmp_path / "ws")
    try:
        paths = [cache.workspace(q) for q in questions]
        assert paths[0] == paths[1]
        assert len({paths[1], paths[2], paths[3]}) == 3
        assert len(cache.trees()) == 3
        assert (paths[3] / "sdlc/docs/new-after-as-of.md").is_file()
        assert not (paths[2] / "sdlc/docs/new-after-as-of.md").exists()
    finally:
        cache.close()


def test_stale_workspaces_of_dead_runs_are_removed(tmp_path: Path) -> None:
    dead = tmp_path / "run-999999999-abc"
    (dead / "x").mkdir(parents=True)
    (dead / "x" / "f").write_text("x")
    os.chmod(dead / "x", 0o555)
    mine = tmp_path / f"run-{os.getpid()}-abc"
    mine.mkdir()
    remove_stale(tmp_path)
    assert not dead.exists()
    assert mine.exists()


# --- trials ---------------------------------------------------------------------------------


def test_a_run_answers_every_question_and_writes_meta_traces_and_ledger(tmp_path: Path) -> None:
    env = build(tmp_path)
    result = run(env, harness("answer.py"), model="test-model")
    assert [o.id for o in result.outcomes] == ["q1", "q2", "q3"]
    assert not result.failed
    got = answers(env)
    assert got["q1"]["citations"][0]["uri"] == "sdlc/docs/runbooks/deploy.md#L1-L1"
    read_answers(env["suite"] / "answers" / "arm1.jsonl", ["q1", "q2", "q3"])
    meta = read_meta(env["suite"] / "answers" / "arm1.meta.json")
    assert meta.runner == "harness"
    assert meta.fields["command"] == harness("answer.py")
    assert meta.fields["model"] == "test-model"
    assert meta.fields["knowledge_snapshot"] == {"infra": [env["i1"]], "sdlc": [env["s1"]]}
    assert meta.fields["date"].endswith("Z")
    assert [e["status"] for e in ledger(env)] == ["ok", "ok", "ok"]
    trace = (tmp_path / "traces" / "demo-v1" / "arm1" / "q2.log").read_text()
    assert "==> stdout <==\nthinking..." in trace
    assert "file infra/terraform/main.tf" in trace  # the harness's own FLIGHTDECK_TRACE log
    assert not list((tmp_path / ".flightdeck" / "workspaces").iterdir())


def test_keys_and_canaries_never_reach_the_harness(tmp_path: Path) -> None:
    env = build(tmp_path)
    run(env, harness("answer.py"))
    for trace in (tmp_path / "traces" / "demo-v1" / "arm1").iterdir():
        header, _, seen = trace.read_text().partition("==> stdout <==")
        assert "task: " in seen
        assert SECRET_KEY not in header + seen
        assert CANARY_PREFIX not in header + seen
        assert "keys.jsonl" not in seen  # the harness never saw one; the header says why


def test_the_result_file_is_read_when_the_harness_writes_it(tmp_path: Path) -> None:
    env = build(tmp_path)
    result = run(env, harness("answer.py", "--result-file"))
    assert not result.failed
    assert answers(env)["q1"]["answer"] == "answer to q1"


FAILURES = [
    pytest.param("crash", "exit status 3 (stderr: Traceback: something broke)", id="crash"),
    pytest.param("segfault", "killed by SIGSEGV", id="segfault"),
    pytest.param("garbage", "stdout is not the result JSON", id="garbage"),
    pytest.param("silent", "stdout is empty", id="silent"),
    pytest.param("not-object", "result must be a JSON object, got list", id="not-object"),
    pytest.param("half-result", "FLIGHTDECK_RESULT is not the result JSON", id="half-result"),
    pytest.param("outside-repo", "names repository 'elsewhere', outside", id="outside-repo"),
    pytest.param("dotdot", "has '..', '.' or an empty segment", id="dotdot"),
    pytest.param("bad-sha", "needs a sha256 of 64 hex digits", id="bad-sha"),
    pytest.param(
        "dup-key",
        "stdout is not the result JSON: it has a duplicate key 'answer' in one object",
        id="dup-key",
    ),
    pytest.param("no-answer", "result needs an 'answer' string", id="no-answer"),
    pytest.param("bad-uri", "citation 'a.md' is not <repo>/<path>[#L<a>[-L<b>]]", id="bad-uri"),
    pytest.param("extra-field", "each citation must be {uri, sha256}, got", id="extra-field"),
    pytest.param(
        "bad-usage", "usage 'input_tokens' must be a non-negative integer", id="bad-usage"
    ),
]
# A timeout no trial that ends by itself comes near, however loaded the machine: a busy
# 2-core CI box once let a 1 s timeout win the race against a harness's own exit.
GENEROUS = 300.0


def test_failed_trials_are_recorded_with_reasons_and_the_others_still_land(
    tmp_path: Path,
) -> None:
    modes = ["ok", *(p.values[0] for p in FAILURES)]
    env = build(tmp_path, [{"id": m, "as_of": {"sdlc": "S1"}, "scope": []} for m in modes])
    result = run(env, harness("misbehave.py", "by-id"), timeout=GENEROUS, jobs=4)
    assert list(answers(env)) == ["ok"]
    reasons = {o.id: o.reason for o in result.failed}
    for param in FAILURES:
        mode, expected = map(str, param.values)
        assert expected in str(reasons[mode]), (mode, reasons[mode])
    failed = {e["id"]: e for e in ledger(env) if e["status"] == "failed"}
    assert set(failed) == set(reasons)
    assert failed["crash"]["exit_code"] == 3
    assert failed["crash"]["reason"] == reasons["crash"]
    assert failed["crash"]["trace"] == "traces/demo-v1/arm1/crash.log"


def test_a_trial_that_outlives_its_timeout_is_killed_and_recorded(tmp_path: Path) -> None:
    # The harness sleeps 10 minutes, so only the timeout can end it, loaded machine or not.
    env = build(tmp_path, [{"id": "slow", "as_of": {"sdlc": "S1"}, "scope": []}])
    result = run(env, harness("misbehave.py", "sleep", "600"), timeout=1.0)
    (outcome,) = result.failed
    assert outcome.reason == "timed out after 1 s; its process group was killed"
    (entry,) = ledger(env)
    assert entry["status"] == "failed"
    assert entry["reason"] == outcome.reason
    assert not (env["suite"] / "answers" / "arm1.jsonl").read_text()


@pytest.mark.parametrize("mode", ["orphan", "leave-child"])
def test_the_whole_process_group_is_killed(tmp_path: Path, mode: str) -> None:
    env = build(tmp_path, [{"id": "q1", "as_of": {"sdlc": "S1"}, "scope": []}])
    pidfile = tmp_path / "child.pid"
    command = harness("misbehave.py", mode, str(pidfile))
    if mode == "leave-child":  # answers at once; its leftover child is killed after it
        result = run(env, command, timeout=GENEROUS, sandbox="none")
        assert not result.failed
    else:  # ends only by its timeout; a loaded machine may need longer to start the child
        for timeout in (1.0, 4.0, 16.0, 64.0):
            arm = f"wait-{timeout:g}"
            result = run(env, command, timeout=timeout, arm=arm, sandbox="none")
            assert result.failed
            if pidfile.exists():
                break
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 60  # a bound on a hang, not a timing assertion
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the harness's child outlived the trial"


def test_a_rerun_runs_only_the_missing_questions(tmp_path: Path) -> None:
    env = build(tmp_path)
    control = tmp_path / "fail"
    control.mkdir()
    (control / "q2").touch()
    command = harness("answer.py", "--fail-if-exists", str(control))
    first = run(env, command)
    assert [o.id for o in first.failed] == ["q2"]
    assert set(answers(env)) == {"q1", "q3"}
    (control / "q2").unlink()
    second = run(env, command)
    assert [o.id for o in second.outcomes] == ["q2"]
    assert second.already_answered == 2
    assert second.answered == 3
    assert set(answers(env)) == {"q1", "q2", "q3"}
    assert [e["id"] for e in ledger(env)][-1] == "q2"
    third = run(env, command)
    assert third.outcomes == ()
    meta = read_meta(env["suite"] / "answers" / "arm1.meta.json").fields
    assert "last_run" in meta


def test_a_torn_last_line_is_dropped_and_that_question_rerun(tmp_path: Path) -> None:
    env = build(tmp_path)
    path = env["suite"] / "answers" / "arm1.jsonl"
    path.parent.mkdir()
    whole = json.dumps({"id": "q1", "answer": "kept", "citations": []})
    path.write_text(whole + '\n{"id": "q2", "answer": "cut sh')
    result = run(env, harness("answer.py"))
    assert result.repaired is not None
    assert "dropped a torn last line" in result.repaired
    assert [o.id for o in result.outcomes] == ["q2", "q3"]
    assert answers(env)["q1"]["answer"] == "kept"
    assert len(path.read_text().splitlines()) == 3


@pytest.mark.parametrize(
    ("content", "expected", "after"),
    [
        pytest.param(b"", None, b"", id="empty"),
        pytest.param(b'{"a":1}\n', None, b'{"a":1}\n', id="whole"),
        pytest.param(b'{"a":1}\n{"b"', "dropped", b'{"a":1}\n', id="torn"),
        pytest.param(b'{"a":1}', "added the missing newline", b'{"a":1}\n', id="no-newline"),
        pytest.param(  # a whole line the answers reader names; it crashed json.loads
            b'{"a":1}\n{"n":' + b"9" * 5000 + b"}",
            "added the missing newline",
            b'{"a":1}\n{"n":' + b"9" * 5000 + b"}\n",
            id="huge-integer",
        ),
        pytest.param(b'{"a":1,"a":2}', "added the missing newline", b'{"a":1,"a":2}\n', id="dup"),
    ],
)
def test_repair_torn_line(
    tmp_path: Path, content: bytes, expected: str | None, after: bytes
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(content)
    message = repair_torn_line(path)
    assert (message is None) if expected is None else (expected in str(message))
    assert path.read_bytes() == after


def test_resuming_with_another_command_is_refused(tmp_path: Path) -> None:
    env = build(tmp_path)
    run(env, harness("answer.py"))
    (env["suite"] / "answers" / "arm1.jsonl").write_text(
        json.dumps({"id": "q1", "answer": "a", "citations": []}) + "\n"
    )
    with pytest.raises(InputError, match="came from command .*use a new arm name"):
        run(env, harness("answer.py", "--result-file"))


def test_two_runs_of_one_arm_at_once_are_refused(tmp_path: Path) -> None:
    env = build(tmp_path)
    ledger_path = tmp_path / "runs" / "demo-v1" / "arm1.jsonl"
    ledger_path.parent.mkdir(parents=True)
    with ledger_path.open("ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(InputError, match="another run of this arm is in progress"):
            run(env, harness("answer.py"))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        pytest.param({"command": "no-such-harness-xyz"}, "not an executable file", id="command"),
        pytest.param({"command": "'unclosed"}, "fix the quoting", id="quoting"),
        pytest.param({"arm": "../x"}, r"arm name '\.\./x' holds '/'; use letters", id="arm-name"),
        pytest.param({"jobs": 0}, "jobs must be at least 1", id="jobs"),
        pytest.param({"timeout": -1.0}, "timeout must be positive", id="timeout"),
        pytest.param({"by": " "}, "--by: is empty; say who ran the arm", id="by"),
        pytest.param({"repos": {}}, "repository 'sdlc' is not configured", id="no-repo"),
    ],
)
def test_bad_input_is_refused_before_any_trial(
    tmp_path: Path, change: dict[str, Any], match: str
) -> None:
    env = build(tmp_path)
    command = change.pop("command", harness("answer.py"))
    if "repos" in change:
        env["repos"] = change.pop("repos")
    with pytest.raises(InputError, match=match):
        run(env, command, **change)
    assert not (env["suite"] / "answers" / "arm1.jsonl").exists()


def test_an_as_of_commit_missing_from_the_repository_names_the_question(tmp_path: Path) -> None:
    env = build(tmp_path, [{"id": "q1", "as_of": {"sdlc": "a" * 40}, "scope": []}])
    with pytest.raises(
        InputError, match=r"questions.jsonl:1: commit a{40} is not in repository 'sdlc'"
    ):
        run(env, harness("answer.py"))


@pytest.mark.parametrize(
    ("question_id", "name"),
    [
        pytest.param("q1", "q1.log", id="plain"),
        pytest.param("a/b", "a%2Fb.log", id="slash"),
        pytest.param("..", "%2E..log", id="dotdot"),
        pytest.param("a%2Fb", "a%252Fb.log", id="no-collision"),
        pytest.param(
            "x" * 300,
            "x" * 150 + "-" + hashlib.sha256(b"x" * 300).hexdigest()[:16] + ".log",
            id="too-long",
        ),
    ],
)
def test_trace_file_names_are_safe_and_distinct(question_id: str, name: str) -> None:
    assert trace_file_name(question_id) == name


def test_answers_end_in_the_suites_order_after_a_resume(tmp_path: Path) -> None:
    env = build(tmp_path)
    path = env["suite"] / "answers" / "arm1.jsonl"
    path.parent.mkdir()
    kept = json.dumps({"id": "q3", "answer": "kept as it was", "citations": []}) + "\n"
    path.write_text(kept)
    run(env, harness("answer.py"))
    lines = path.read_text().splitlines(keepends=True)
    assert [json.loads(line)["id"] for line in lines] == ["q1", "q2", "q3"]
    assert lines[2] == kept  # the record's bytes, and so its answer_sha256, are unchanged


def test_harnesses_find_flightdecks_python_first_on_path() -> None:
    first = harness_path().split(os.pathsep)[0]
    if sys.prefix != sys.base_prefix:
        assert first == os.path.dirname(sys.executable)
    else:
        assert harness_path() == os.environ.get("PATH", os.defpath)


QUESTION = Question("q1", "?", "how-to", {"sdlc": "a" * 40}, ())
SHA = "ab" * 32


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"answer": "x"}, (), id="no-citations"),
        pytest.param(
            {"answer": "x", "citations": [{"uri": "sdlc/a.md#L2-L4", "sha256": SHA.upper()}]},
            (("sdlc/a.md#L2-L4", SHA),),
            id="repo-uri",
        ),
        pytest.param(
            {"answer": "x", "citations": [{"uri": "https://wiki.example/a", "sha256": SHA}]},
            (("https://wiki.example/a", SHA),),
            id="url",
        ),
        pytest.param({"answer": 1}, "needs an 'answer' string", id="answer-type"),
        pytest.param({"answer": "x", "citations": {}}, "'citations' must be a list", id="type"),
        pytest.param(
            {"answer": "x", "citations": ["sdlc/a.md"]}, "must be {uri, sha256}", id="bare-uri"
        ),
        pytest.param(
            {"answer": "x", "citations": [{"uri": "sdlc/a.md#L4-L2", "sha256": SHA}]},
            "ends before it starts",
            id="span",
        ),
        pytest.param(
            {"answer": "x", "citations": [{"uri": "sdlc//a.md", "sha256": SHA}]},
            "empty segment",
            id="empty-segment",
        ),
        pytest.param(
            {"answer": "x", "citations": [{"uri": "sdlc", "sha256": SHA}]},
            "is not <repo>/<path>",
            id="no-path",
        ),
        pytest.param(
            {"answer": "x", "citations": [{"uri": "sdlc/", "sha256": SHA}]},
            "is not <repo>/<path>",
            id="empty-path",
        ),
    ],
)
def test_check_result(value: Any, expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(ProtocolError, match=re.escape(expected)):
            check_result(value, QUESTION)
    else:
        cited = check_result(value, QUESTION).citations
        assert tuple((c.uri, c.sha256) for c in cited) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param('{"answer": "a"}', {"answer": "a"}, id="whole"),
        pytest.param('log line\n{"answer": "a"}\n\n', {"answer": "a"}, id="last-line"),
    ],
)
def test_decode_result(text: str, value: Any) -> None:
    assert decode_result(text, "stdout") == value


def test_a_finished_arm_is_left_alone(tmp_path: Path) -> None:
    env = build(tmp_path)
    run(env, harness("answer.py"))
    files = [
        env["suite"] / "answers" / "arm1.jsonl",
        env["suite"] / "answers" / "arm1.meta.json",
        tmp_path / "runs" / "demo-v1" / "arm1.jsonl",
    ]
    before = [f.read_bytes() for f in files]
    result = run(env, harness("answer.py"))
    assert result.outcomes == ()
    assert result.answered == 3
    assert [f.read_bytes() for f in files] == before


def test_a_harness_that_changes_its_workspace_fails_and_the_next_gets_a_fresh_copy(
    tmp_path: Path,
) -> None:
    ids = ["tamper", "check-pristine"]
    env = build(tmp_path, [{"id": i, "as_of": {"sdlc": "S1"}, "scope": []} for i in ids])
    result = run(env, harness("misbehave.py", "by-id"), jobs=1, sandbox="none")
    assert [o.id for o in result.failed] == ["tamper"]
    assert result.failed[0].reason == (
        "changed its read-only workspace (sdlc/README.md); later trials get a fresh copy"
    )
    assert list(answers(env)) == ["check-pristine"]


def test_verify_sees_changes_through_hard_links_and_nothing_else(tmp_path: Path) -> None:
    env = build(
        tmp_path,
        [
            {"id": "one", "as_of": {"sdlc": "S1"}, "scope": []},
            {"id": "two", "as_of": {"sdlc": "S1", "infra": "I1"}, "scope": []},
        ],
    )
    one, two = read_questions(env["suite"] / "questions.jsonl")
    cache = WorkspaceCache(RepoSet(env["repos"], tmp_path / "cache"), tmp_path / "ws")
    try:
        single = cache.acquire(one)
        linked = cache.acquire(two)  # a merged folder of hard links to the same sdlc tree
        assert single.path is not None
        assert linked.path is not None
        assert cache.verify(one, single) is None
        assert cache.verify(two, linked) is None
        target = linked.path / "sdlc" / "README.md"
        os.chmod(target, 0o644)
        target.write_text("tampered")
        assert cache.verify(two, linked) == "sdlc/README.md"
        assert cache.verify(one, single) == "sdlc/README.md"  # the same inode
        fresh = cache.acquire(two)
        assert fresh.path is not None
        assert fresh.path != linked.path
        assert (fresh.path / "sdlc" / "README.md").read_text() == SDLC_V1["README.md"]
        assert cache.verify(two, fresh) is None
    finally:
        cache.close()
