"""The LLM agent's tools, model layer and ReAct loop, driven by inspect's mockllm."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput, ModelUsage

from flightdeck.arms.agents.llm import SYSTEM_PROMPT, AgentOptions, load_snapshot, run_agent
from flightdeck.arms.agents.tools import ToolFailure, WorkspaceTools, glob_regex
from flightdeck.arms.arm_meta import default_model, with_provenance
from flightdeck.errors import InputError
from flightdeck.models import (
    ModelSettings,
    ModelUnavailable,
    TokenUsage,
    check_model_name,
    complete,
    get_model,
    redact,
    redact_json,
    secret_values,
)

ADR = "# ADR 2: Postgres queue\n\n## Context\n\nRedis lost jobs.\n\n## Decision\n\nMove to Postgres.\n"
OWNERS = "docs/ @ada\nsrc/gateway/ @li-wei\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sdlc" / "docs" / "adr").mkdir(parents=True)
    (root / "sdlc" / "docs" / "adr" / "0002-queue.md").write_text(ADR)
    (root / "sdlc" / "CODEOWNERS").write_text(OWNERS)
    (tmp_path / "secret.txt").write_text("outside the workspace\n")
    (root / "sdlc" / "escape.md").symlink_to(tmp_path / "secret.txt")
    return root


def tool_call(name: str, arguments: dict[str, Any], tokens: int = 100) -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", name, arguments)
    output.usage = ModelUsage(input_tokens=tokens, output_tokens=10, total_tokens=tokens + 10)
    return output


def agent(outputs: list[ModelOutput], **options: Any) -> AgentOptions:
    settings = ModelSettings("mockllm/model", model_args={"custom_outputs": outputs})
    return AgentOptions(settings, **options)


TASK = {"id": "q1", "question": "Why did the queue move?", "as_of": {"sdlc": "a" * 40}}


# --- tools ---------------------------------------------------------------------------------


def test_grep_lists_path_line_text_and_honours_the_glob(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    assert tools.grep("postgres") == (
        "sdlc/docs/adr/0002-queue.md:1: # ADR 2: Postgres queue\n"
        "sdlc/docs/adr/0002-queue.md:9: Move to Postgres."
    )
    assert (
        tools.grep("@", "sdlc/*")
        == "sdlc/CODEOWNERS:1: docs/ @ada\nsdlc/CODEOWNERS:2: src/gateway/ @li-wei"
    )
    assert tools.grep("postgres", "sdlc/*") == "no line matches 'postgres' in 'sdlc/*'"


def test_read_numbers_lines_from_start_to_end(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    assert (
        tools.read("sdlc/docs/adr/0002-queue.md", 7, 9)
        == "7: ## Decision\n8: \n9: Move to Postgres."
    )
    assert tools.read("sdlc/CODEOWNERS", 1, 1) == "1: docs/ @ada\n... 1 more lines (read from 2)"


def test_list_matches_globs_over_repo_paths(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    assert tools.list_files("sdlc/docs/**") == "sdlc/docs/adr/0002-queue.md"
    assert (
        tools.list_files() == "sdlc/CODEOWNERS\nsdlc/docs/adr/0002-queue.md"
    )  # the symlink is not listed
    assert glob_regex("sdlc/**/*.md").match("sdlc/a.md")
    assert not glob_regex("sdlc/*.md").match("sdlc/docs/a.md")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param(
            "sdlc/../secret.txt",
            "'sdlc/../secret.txt': give a path as <repo>/<path>, without '..'",
            id="dotdot",
        ),
        pytest.param(
            "sdlc/escape.md",
            "sdlc/escape.md: no such file in the workspace; use list or grep",
            id="symlink-out",
        ),
        pytest.param(
            "sdlc/nope.md",
            "sdlc/nope.md: no such file in the workspace; use list or grep",
            id="missing",
        ),
    ],
)
def test_read_refuses_anything_outside_the_workspace(
    workspace: Path, path: str, message: str
) -> None:
    with pytest.raises(ToolFailure, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        WorkspaceTools(workspace).read(path)


def test_citations_are_hashed_from_the_workspace_bytes(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    cited = tools.citations(
        ["sdlc/docs/adr/0002-queue.md#L7-L9", "sdlc/docs/adr/0002-queue.md#L7-L9"]
    )
    assert cited == [
        ("sdlc/docs/adr/0002-queue.md#L7-L9", hashlib.sha256(ADR.encode()).hexdigest())
    ]
    with pytest.raises(ToolFailure, match="lines must be within 1-9 and in order"):
        tools.cite("sdlc/docs/adr/0002-queue.md#L7-L12")
    with pytest.raises(ToolFailure, match="is not <repo>/<path>"):
        tools.cite("not a uri")


# --- the agent through mockllm --------------------------------------------------------------


def test_agent_greps_reads_and_submits_with_hashes_from_the_files(workspace: Path) -> None:
    outputs = [
        tool_call("grep", {"pattern": "redis"}),
        tool_call("read", {"path": "sdlc/docs/adr/0002-queue.md", "start": 3, "end": 9}),
        tool_call(
            "submit",
            {
                "answer": "Redis lost jobs; moved to Postgres.",
                "citations": ["sdlc/docs/adr/0002-queue.md#L3-L9"],
            },
        ),
    ]
    run = run_agent(agent(outputs, max_steps=5), workspace, TASK)
    result = run.result()
    assert result["answer"] == "Redis lost jobs; moved to Postgres."
    assert result["citations"] == [
        {
            "uri": "sdlc/docs/adr/0002-queue.md#L3-L9",
            "sha256": hashlib.sha256(ADR.encode()).hexdigest(),
        }
    ]
    assert result["usage"] == {
        "input_tokens": 300,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 30,
        "total_tokens": 330,
        "reasoning_tokens": 0,
    }
    provenance = result["provenance"]
    assert provenance["model"] == "mockllm/model"
    assert provenance["limits"] == {"max_steps": 5, "token_limit": None}
    assert provenance["system_prompt_sha256"] == hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()
    assert run.read_paths == ["sdlc/docs/adr/0002-queue.md"]
    log = json.loads(run.log_json)
    tool_results = [m["content"] for m in log["samples"][0]["messages"] if m["role"] == "tool"]
    assert tool_results[0] == "sdlc/docs/adr/0002-queue.md:5: Redis lost jobs."


def test_a_bad_citation_goes_back_to_the_model_which_fixes_it(workspace: Path) -> None:
    outputs = [
        tool_call("submit", {"answer": "Postgres.", "citations": ["sdlc/docs/adr/9999.md"]}),
        tool_call("submit", {"answer": "Postgres.", "citations": ["sdlc/CODEOWNERS"]}),
    ]
    run = run_agent(agent(outputs), workspace, TASK)
    assert run.citations == [("sdlc/CODEOWNERS", hashlib.sha256(OWNERS.encode()).hexdigest())]
    log = json.loads(run.log_json)
    errors = [m["error"]["message"] for m in log["samples"][0]["messages"] if m.get("error")]
    assert errors == [
        "sdlc/docs/adr/9999.md: no such file in the workspace; use list or grep; fix the citations and submit again"
    ]


def test_an_agent_out_of_steps_answers_that_it_has_no_answer(workspace: Path) -> None:
    outputs = [tool_call("grep", {"pattern": "x"}) for _ in range(5)]
    run = run_agent(agent(outputs, max_steps=2), workspace, TASK)
    assert run.answer == "No answer: the agent stopped before it submitted one (turn limit of 2)."
    assert run.citations == []
    # inspect's turn limit: two turns run their tools; the third is generated (and paid for)
    # before the limit stops the agent: 3 x 110 tokens
    assert run.usage.total_tokens == 330


def test_complete_generates_once_and_counts_tokens() -> None:
    output = ModelOutput.from_content("mockllm/model", "yes")
    output.usage = ModelUsage(input_tokens=12, output_tokens=1, total_tokens=13)
    settings = ModelSettings("mockllm/model", model_args={"custom_outputs": [output]})
    done = complete(settings, "Is the sky blue?", system="Answer yes or no.")
    assert (done.text, done.usage) == ("yes", TokenUsage(12, 1, 13, 0))


# --- the model layer --------------------------------------------------------------------------


def test_redact_replaces_every_secret_of_the_environment() -> None:
    env = {
        "LOCAL_API_KEY": "sk-abcdef123",
        "GITHUB_TOKEN": "ghp_zzzzzz",
        "HOME": "/root",
        "X_KEY": "sk-abcdef123",
    }
    secrets = secret_values(env)
    assert secrets == {"LOCAL_API_KEY": "sk-abcdef123", "GITHUB_TOKEN": "ghp_zzzzzz"}
    assert redact("Bearer sk-abcdef123 and ghp_zzzzzz", secrets) == (
        "Bearer <redacted:LOCAL_API_KEY> and <redacted:GITHUB_TOKEN>"
    )
    assert redact_json({"sk-abcdef123": ["ghp_zzzzzz", 3]}, secrets) == {
        "<redacted:LOCAL_API_KEY>": ["<redacted:GITHUB_TOKEN>", 3]
    }


@pytest.mark.parametrize(
    ("name", "env", "message"),
    [
        pytest.param(
            "gpt",
            {},
            "--model: 'gpt' is not an inspect model name; give <provider>/<model>, e.g. anthropic/claude-sonnet-4-5 or openai-api/<service>/<model>",
            id="no-provider",
        ),
        pytest.param(
            "openai-api/llama",
            {},
            "--model: 'openai-api/llama' needs a service: openai-api/<service>/<model>",
            id="no-service",
        ),
        pytest.param(
            "openai-api/local/m",
            {"LOCAL_API_KEY": "k"},
            "--model: openai-api/local/m reads LOCAL_BASE_URL; set it (any non-empty key for a server without one)",
            id="no-base-url",
        ),
    ],
)
def test_model_names_are_checked_up_front(name: str, env: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as caught:
        check_model_name(name, env)
    assert str(caught.value) == message


def test_a_model_inspect_cannot_open_says_why_and_how_to_fix() -> None:
    with pytest.raises(ModelUnavailable) as refused:
        get_model(ModelSettings("nosuch/x"))
    assert str(refused.value).startswith("--model: cannot open 'nosuch/x' (Model API nosuch")
    assert str(refused.value).endswith(
        "; check the name and the provider's key and base URL variables"
    )
    assert refused.value.reason in str(refused.value)
    assert "[bold]" not in refused.value.reason  # inspect's markup is left out
    assert "\n" not in refused.value.reason


def test_the_generate_config_sets_only_what_the_settings_set() -> None:
    config = ModelSettings("mockllm/model", max_tokens=64, extra={"cache_prompt": True})
    assert config.generate_config().model_dump(exclude_none=True) == {
        "max_tokens": 64,
        "cache_prompt": True,
    }


def test_token_usage_picks_fields_in_the_protocol_s_order() -> None:
    usage = TokenUsage(input_tokens=5, output_tokens=2, total_tokens=7, cached_tokens=3)
    assert list(usage.to_json(["output_tokens", "cached_tokens", "input_tokens"]).items()) == [
        ("input_tokens", 5),
        ("cached_tokens", 3),
        ("output_tokens", 2),
    ]


def test_provenance_keeps_no_key_and_no_url_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_BASE_URL", "http://user:pw-secret@127.0.0.1:8000/v1?key=zz")
    monkeypatch.setenv("LOCAL_API_KEY", "sk-local-secret")
    record = ModelSettings("openai-api/local/qwen3", temperature=0.0).provenance()
    assert record["base_url"] == "http://127.0.0.1:8000/v1"
    assert "secret" not in json.dumps(record)
    assert (record["service"], record["temperature"]) == ("local", 0.0)


# --- protocol and runner bookkeeping ------------------------------------------------------------


def test_a_retrieval_snapshot_joins_the_as_of_commits_in_the_meta() -> None:
    meta = {"model": "m", "knowledge_snapshot": {"sdlc": ["a" * 40]}}
    index = {"index": "team-docs", "sha256": "b" * 64}
    updated = with_provenance(meta, {"model": "m", "knowledge_snapshot": {"retrieval": index}})
    assert updated["knowledge_snapshot"] == {"as_of": {"sdlc": ["a" * 40]}, "retrieval": index}
    # any other snapshot (an attached arm's documents) replaces as_of's, as before
    other = with_provenance(meta, {"knowledge_snapshot": {"folder": "docs"}})
    assert other["knowledge_snapshot"] == {"folder": "docs"}


@pytest.mark.parametrize(
    ("command", "model"),
    [
        pytest.param(
            "flightdeck experiment agent llm --model anthropic/claude-x",
            "anthropic/claude-x",
            id="spaced",
        ),
        pytest.param(
            "python -m flightdeck experiment agent llm --model=openai/gpt-4.1 --max-steps 3",
            "openai/gpt-4.1",
            id="equals",
        ),
        pytest.param(
            "python -m flightdeck experiment agent repo-search",
            "none (flightdeck repo-search, BM25)",
            id="repo-search",
        ),
    ],
)
def test_the_default_model_comes_from_the_agent_command(command: str, model: str) -> None:
    assert default_model(command) == model


def test_no_secret_in_this_process_environment_leaks_into_provenance() -> None:
    record = AgentOptions(ModelSettings("mockllm/model")).provenance()
    text = json.dumps(record)
    assert not any(value in text for value in secret_values(os.environ).values())


def test_a_snapshot_file_is_the_arm_s_knowledge_snapshot(workspace: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "index-manifest.json"
    manifest.write_text('{"index": "team-docs", "built": "2024-05-06"}\n')
    snapshot = load_snapshot(manifest)
    assert snapshot == {
        "index": "team-docs",
        "built": "2024-05-06",
        "file": "index-manifest.json",
        "sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
    }
    outputs = [tool_call("submit", {"answer": "x", "citations": []})]
    run = run_agent(agent(outputs, snapshot=snapshot), workspace, TASK)
    assert run.provenance["knowledge_snapshot"] == {"retrieval": snapshot}


def test_a_non_anthropic_run_never_imports_the_anthropic_sdk(workspace: Path) -> None:
    """inspect resets each installed provider's per-sample state at a sample's start; the
    anthropic one imports its SDK (seconds of CPU), which a dry run or openai-api model skips."""
    import subprocess
    import sys

    from inspect_ai.model import _assistant_internal

    assert isinstance(_assistant_internal._HAS_ANTHROPIC, bool)  # still inspect's flags
    assert isinstance(_assistant_internal._HAS_OPENAI, bool)
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from flightdeck.arms.agents.llm import AgentOptions, run_agent\n"
        "from flightdeck.models import ModelSettings\n"
        "run = run_agent(AgentOptions(ModelSettings('mockllm/model')), Path(sys.argv[1]),\n"
        "                {'question': 'Why Postgres?'})\n"
        "print(json.dumps([run.answer[:8], 'anthropic' in sys.modules,\n"
        "                  'inspect_ai.model._providers.anthropic' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == ["Dry run ", False, False]
