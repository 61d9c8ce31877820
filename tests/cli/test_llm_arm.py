"""The LLM arm end to end: `experiment run` -> `agent llm` -> an OpenAI-compatible server.

The server (tests/standin_model.py) is a scripted stand-in model on 127.0.0.1 that greps,
reads and submits from what the tools returned, so inspect's provider path, the tools, the
MCP path and the hashing all run for real, offline, in real processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.builders import FILES_AS_OF, BuiltProject, sha
from tests.standin_model import StandInServer

from flightdeck import __version__
from flightdeck.arms.agents.llm import SYSTEM_PROMPT
from flightdeck.models.provider_env import TRANSPORT
from flightdeck.suite.records import read_meta

SECRET = "sk-stand-in-0123456789abcdef"
PYTHON = sys.executable
LLM = [PYTHON, "-m", "flightdeck", "experiment", "agent", "llm"]
MCP = shlex.join([PYTHON, "-m", "flightdeck", "experiment", "mcp", "repo-search"])


@pytest.fixture
def model() -> Iterator[StandInServer]:
    with StandInServer() as server:
        yield server


def harness_env(model: StandInServer, **more: str) -> dict[str, str]:
    """The operator's shell: the model's two variables exported, no proxy or CA variables."""
    env = {k: v for k, v in os.environ.items() if k not in TRANSPORT}
    env.update(LOCAL_BASE_URL=model.base_url, LOCAL_API_KEY=SECRET, **more)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH", "")]
    )
    return env


def run_arm(
    project: BuiltProject,
    model: StandInServer,
    arm: str,
    *agent_args: str,
    run_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``experiment run`` in one step: no --network, no --pass-env (the runner knows them)."""
    harness = shlex.join([*LLM, "--model", "openai-api/local/stand-in", *agent_args])
    return subprocess.run(
        [
            PYTHON,
            "-m",
            "flightdeck",
            "experiment",
            "run",
            str(project.suite),
            "--arm",
            arm,
            "--harness",
            harness,
            "--jobs",
            "2",
            "--timeout",
            "120",
            *run_args,
        ],
        cwd=project.root,
        env=harness_env(model) if env is None else env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def answers(project: BuiltProject, arm: str) -> dict[str, dict[str, Any]]:
    path = project.suite / "answers" / f"{arm}.jsonl"
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def every_file(root: Path) -> Iterator[Path]:
    yield from (p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)


def test_the_llm_arm_runs_through_an_openai_compatible_server(
    project: BuiltProject, model: StandInServer
) -> None:
    done = run_arm(project, model, "llm-grep")
    assert done.returncode == 0, done.stderr

    # the stand-in greps the question's longest word, reads around the first hit, submits it
    got = answers(project, "llm-grep")
    assert sorted(got) == ["q1", "q2", "q3", "q4"]
    assert got["q1"]["answer"] == "# ADR 1: Postgres We chose Postgres for JSONB support."
    assert got["q1"]["citations"] == [
        {
            "uri": "sdlc/docs/adr/0001-database.md#L1-L3",
            "sha256": sha(FILES_AS_OF["docs/adr/0001-database.md"]),
        }
    ]
    for record in got.values():  # every hash is the file's at as_of, read from the workspace
        for citation in record["citations"]:
            path = citation["uri"].split("#")[0].removeprefix("sdlc/")
            assert citation["sha256"] == sha(FILES_AS_OF[path])

    # every request went to the model with the key, and offered exactly the four tools
    # grep, read, submit where grep found the word; grep, submit where it did not (q3 "owns",
    # q4 "changed")
    assert [bool(got[q]["citations"]) for q in ("q1", "q2", "q3", "q4")] == [
        True,
        True,
        False,
        False,
    ]
    assert len(model.requests) == 3 + 3 + 2 + 2
    for headers, body in model.requests:
        assert headers["authorization"] == f"Bearer {SECRET}"
        assert sorted(t["function"]["name"] for t in body["tools"]) == [
            "grep",
            "list",
            "read",
            "submit",
        ]

    # provenance in the meta, usage in the run log, totalled by the summary
    meta = read_meta(project.suite / "answers" / "llm-grep.meta.json").fields
    assert meta["model"] == "openai-api/local/stand-in"
    sandbox = meta["sandbox"]
    # (#20) the model's endpoint alone, through the relay: LOCAL_BASE_URL's host and port
    endpoint = f"127.0.0.1:{model.port}"
    assert (sandbox["mode"], sandbox["network"]) == ("bwrap", False)
    assert sandbox["network_allow"] == [endpoint]
    assert sandbox["pass_env"] == ["LOCAL_API_KEY", "LOCAL_BASE_URL"]
    # the runner read them off the harness's --model, and says so
    assert meta["harness_needs"] == {
        "harness": "flightdeck experiment agent llm",
        "model": "openai-api/local/stand-in",
        "provider": "openai-api/local",
        "network": {"needed": True, "opened": [endpoint]},
        "pass_env": ["LOCAL_API_KEY", "LOCAL_BASE_URL"],
    }
    harness = meta["provenance"]
    assert harness["system_prompt_sha256"] == hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()
    assert harness["limits"] == {"max_steps": 30, "token_limit": None}
    assert harness["base_url"] == model.base_url
    assert harness["inspect_ai_version"]
    ledger = [
        json.loads(line)
        for line in (project.root / "runs" / "demo-v1" / "llm-grep.jsonl").read_text().splitlines()
    ]
    usage = [entry["usage"] for entry in ledger]
    # the stand-in bills a quarter of each request's bytes as prompt tokens, 7 per completion
    assert sum(u["output_tokens"] for u in usage) == 7 * 10
    assert sum(u["input_tokens"] for u in usage) == sum(model.billed)
    total_in = sum(u["input_tokens"] for u in usage)
    assert f"  total: {total_in:,} in, 0 cached, 70 out\n" in done.stdout

    # the trace holds the whole conversation as inspect's JSON log; the key is nowhere
    trace = (project.root / "traces" / "demo-v1" / "llm-grep" / "q1.log").read_text()
    log = json.loads(trace.split("==> inspect log (JSON) <==\n")[1].split("\n==> ")[0])
    assert [m["role"] for m in log["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert "cite sdlc/docs/adr/0001-database.md#L1-L3 sha256=" in trace
    for path in every_file(project.root):
        assert SECRET.encode() not in path.read_bytes(), path


def test_a_pinned_mcp_server_joins_the_tools_and_records_its_snapshot(
    project: BuiltProject, model: StandInServer
) -> None:
    done = run_arm(project, model, "llm-mcp", "--mcp", MCP)
    assert done.returncode == 0, done.stderr
    offered = {t["function"]["name"] for _, body in model.requests for t in body["tools"]}
    assert offered == {"grep", "list", "read", "submit", "search"}
    first_calls = [
        body["messages"][-1] for _, body in model.requests if body["messages"][-1]["role"] == "tool"
    ]
    assert first_calls  # the stand-in searched through the MCP server, then read what it found
    got = answers(project, "llm-mcp")
    # q2 "How do we deploy?" (a how-to): the search's best passage is the current runbook
    # (#24 weighs runbooks for how-to), which the stand-in reads and cites with the file's hash
    (cited,) = got["q2"]["citations"]
    assert cited["uri"] == "sdlc/docs/runbooks/deploy.md#L1-L4"
    assert cited["sha256"] == sha(FILES_AS_OF["docs/runbooks/deploy.md"])
    meta = read_meta(project.suite / "answers" / "llm-mcp.meta.json").fields
    assert meta["provenance"]["mcp"] == [MCP]
    # the server's knowledge_snapshot resource, beside the as_of commits the workspace holds
    assert meta["knowledge_snapshot"] == {
        "as_of": {"sdlc": [project.as_of]},
        "retrieval": {
            MCP: {
                "flightdeck_version": __version__,
                "index": "flightdeck repo-search (BM25 over passages) of the trial's workspace",
            }
        },
    }


def test_a_failing_model_fails_the_trial_and_names_the_model(
    project: BuiltProject, model: StandInServer
) -> None:
    # the stand-in answers 404 off /v1/chat/completions: an error inspect does not retry
    env = dict(
        os.environ, LOCAL_BASE_URL=model.base_url.replace("/v1", "/gone"), LOCAL_API_KEY=SECRET
    )
    done = subprocess.run(
        [
            *LLM,
            "--model",
            "openai-api/local/stand-in",
            "--workspace",
            str(project.root),
            "--question",
            "Who?",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: --model: the model call failed (the inspect eval ended with error: "
    )
    assert done.stderr.rstrip().endswith(
        "; check the model name, LOCAL_API_KEY, LOCAL_BASE_URL and that its server is up"
    )
    assert "Traceback" not in done.stderr
    assert SECRET not in done.stderr


def ledger(project: BuiltProject, arm: str) -> list[dict[str, Any]]:
    path = project.root / "runs" / "demo-v1" / f"{arm}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_operator_can_keep_the_network_closed(
    project: BuiltProject, model: StandInServer
) -> None:
    done = run_arm(project, model, "llm-closed", "--max-retries", "0", run_args=("--no-network",))
    assert done.returncode == 1  # every trial failed: the model is out of reach
    meta = read_meta(project.suite / "answers" / "llm-closed.meta.json").fields
    assert meta["sandbox"]["network"] is False
    assert meta["harness_needs"]["network"] == {"needed": True, "opened": False}
    assert model.requests == []
    reasons = [entry["reason"] for entry in ledger(project, "llm-closed")]
    assert len(reasons) == 4
    assert all(r.startswith("agent failed: ") for r in reasons), reasons


def test_a_variable_missing_in_the_sandbox_names_pass_env(
    project: BuiltProject, model: StandInServer
) -> None:
    env = harness_env(model)
    del env["LOCAL_API_KEY"]  # not exported: the runner has nothing to pass
    done = run_arm(project, model, "llm-nokey", env=env)
    assert done.returncode == 1
    meta = read_meta(project.suite / "answers" / "llm-nokey.meta.json").fields
    assert meta["sandbox"]["pass_env"] == ["LOCAL_BASE_URL"]
    for entry in ledger(project, "llm-nokey"):
        assert entry["reason"].startswith("the harness exited (status 2) before answering")
        assert (
            "openai-api/local/stand-in reads LOCAL_API_KEY; set it (any non-empty key for a "
            "server without one); LOCAL_API_KEY is not set inside the harness's sandbox: "
            "export it before experiment run, or pass it with --pass-env LOCAL_API_KEY"
        ) in entry["reason"]
    assert model.requests == []


class FailsOnDeploy(StandInServer):
    """The stand-in, but a server error for every request about deploying while ``down``."""

    down = True

    def respond(self, request: Any) -> Any:
        if self.down and "deploy" in json.dumps(request.body["messages"][1]):
            return 500, {"error": {"message": "deploy is down", "type": "server_error"}}
        return super().respond(request)


def test_one_failed_question_in_a_batch_costs_only_itself(project: BuiltProject) -> None:
    with FailsOnDeploy() as server:
        first = run_arm(project, server, "llm-batch", "--max-retries", "0")
        assert first.returncode == 1
        assert sorted(answers(project, "llm-batch")) == ["q1", "q3", "q4"]
        (failed,) = [e for e in ledger(project, "llm-batch") if e["status"] == "failed"]
        assert failed["id"] == "q2"
        assert failed["reason"].startswith("agent failed: openai.InternalServerError: ")
        assert "deploy is down" in failed["reason"]
        trace = (project.root / failed["trace"]).read_text()
        assert "status: failed: agent failed: " in trace
        assert "==> inspect log (JSON) <==" in trace  # the conversation up to the failure

        server.down, server.requests = False, []  # the rerun asks only the question missing
        second = run_arm(project, server, "llm-batch", "--max-retries", "0")
        assert second.returncode == 0, second.stderr
        asked = {body["messages"][1]["content"].split("\n")[0] for _, body in server.requests}
    assert asked == {"Question: How do we deploy?"}
    assert sorted(answers(project, "llm-batch")) == ["q1", "q2", "q3", "q4"]


def test_a_model_call_retries_a_bounded_number_of_times_by_default() -> None:
    # inspect's own default retries for ever: a trial against a server that is down hung
    # without a word (the README's first real-model example, no server started yet).
    from flightdeck.cli.experiment_llm import llm_command

    (retries,) = [p for p in llm_command.params if p.name == "max_retries"]
    assert retries.default == 5
