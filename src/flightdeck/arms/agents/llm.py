"""The LLM agent arm: an inspect_ai ReAct agent with read, grep, list and submit, one question.

This is the product page's baseline ("an agent with only repository read and grep tools on
the as_of commits") and, with ``--mcp``, its candidate ("a harness with that retrieval MCP
pinned"). One trial is one inspect eval of one sample:

- the tools (:mod:`flightdeck.arms.agents.tools`) read the trial's workspace only, and the
  citation hashes come from the workspace's bytes, never from the model;
- ``--max-steps`` is inspect's turn limit: that many model turns run their tool calls, and
  the next turn (still generated, and counted in the usage) ends the agent; ``--token-limit``
  is inspect's token limit; retries and rate limits are inspect's;
- an agent that stops without submitting (a limit, a refusal) answers that it has no answer,
  which is scored like any wrong answer rather than retried as a failed trial;
- the result carries the tokens used and the arm's provenance (model, inspect and flightdeck
  versions, limits, the prompt's sha256, the MCP servers and their knowledge snapshot), which
  the runner totals and records in the meta; the inspect log (the whole conversation) goes to
  the trial's trace as JSON, with every API key redacted, so the canary scan reads it all.

The agent needs the network only to reach its model, and only the model's own environment
variables (``<SERVICE>_BASE_URL``, ``<SERVICE>_API_KEY``, ``ANTHROPIC_API_KEY``, ...).
"""

from __future__ import annotations

import dataclasses
import hashlib
import shlex
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.arms.agents.dry_run import agent_outputs, is_dry_run
from flightdeck.arms.agents.tools import Submission, WorkspaceTools, inspect_tools, submit_tool
from flightdeck.errors import AgentError
from flightdeck.models import (
    ModelSettings,
    TokenUsage,
    get_model,
    redact,
    redact_json,
    skip_other_providers_state,
)

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

DEFAULT_MAX_STEPS = 30
NO_ANSWER = "No answer: the agent stopped before it submitted one ({why})."

SYSTEM_PROMPT = """\
You answer questions about a team's repositories from their files, as they were at one
commit. The files are in a read-only workspace, named <repo>/<path>. Your tools:

- list(glob): the files, e.g. list("sdlc/docs/**");
- grep(pattern, glob): lines matching a regular expression, as <repo>/<path>:<line>: <text>;
- read(path, start, end): a file's lines, numbered;
- submit(answer, citations): your final answer and the sources that support it.

Search before you answer, and read the passages you rely on: an answer must come from the
files, not from what you remember. When a document has a history (a status page, a
changelog, a superseded decision), answer with what holds at this commit. Submit a complete
answer in a few sentences with every fact the question asks for, and cite each source as
<repo>/<path>#L<a>-L<b> with the lines that support it.
"""


@dataclass(frozen=True)
class AgentOptions:
    """One arm's settings: the same for every trial, recorded in the meta."""

    settings: ModelSettings
    max_steps: int = DEFAULT_MAX_STEPS
    token_limit: int | None = None
    system_prompt: str = SYSTEM_PROMPT
    prompt_file: str | None = None  # where the system prompt came from, for the meta
    mcp: tuple[str, ...] = ()  # stdio MCP server commands, split like a shell would
    snapshot: Mapping[str, Any] | None = None  # from --snapshot FILE

    def provenance(self) -> dict[str, Any]:
        record = self.settings.provenance()
        record.update(
            {
                "agent": "flightdeck experiment agent llm (inspect_ai react)",
                "tools": ["grep", "read", "list", "submit"],
                "limits": {"max_steps": self.max_steps, "token_limit": self.token_limit},
                "system_prompt_sha256": hashlib.sha256(self.system_prompt.encode()).hexdigest(),
                "system_prompt": self.prompt_file or "built-in",
            }
        )
        if self.mcp:
            record["mcp"] = list(self.mcp)
        if is_dry_run(self.settings.name):
            record["dry_run"] = True
        redacted: dict[str, Any] = redact_json(record)
        return redacted


@dataclass(frozen=True)
class AgentRun:
    """One trial's outcome: the protocol result and the inspect log behind it."""

    answer: str
    citations: list[tuple[str, str]]
    usage: TokenUsage
    provenance: dict[str, Any]
    log_json: str  # the inspect eval log, redacted
    stopped: str | None = None  # why the agent ended without a submission
    read_paths: list[str] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)  # seconds, by what they went to

    def result(self) -> dict[str, Any]:
        """The harness protocol's result object, with the usage and provenance it allows."""
        return {
            "answer": self.answer,
            "citations": [{"uri": uri, "sha256": sha} for uri, sha in self.citations],
            "usage": self.usage.to_json(),
            "provenance": self.provenance,
        }


def user_prompt(task: Mapping[str, Any], workspace: Path) -> str:
    """The question as the model sees it: the text, the repositories and their commits."""
    repos = sorted(p.name for p in workspace.iterdir() if p.is_dir())
    as_of = task.get("as_of") or {}
    lines = [f"Question: {task['question']}", "", "Repositories in the workspace:"]
    lines += [f"- {repo} at commit {as_of.get(repo, 'unknown')}" for repo in repos]
    scope = task.get("scope") or []
    if scope:
        lines.append("Only these files are in the workspace: " + ", ".join(scope))
    return "\n".join(lines)


def run_agent(
    options: AgentOptions,
    workspace: Path,
    task: Mapping[str, Any],
    *,
    scratch: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> AgentRun:
    """Answer one task with the agent; the log goes to a temporary folder under ``scratch``."""
    began = time.monotonic()
    from inspect_ai import Task, eval
    from inspect_ai.agent import AgentSubmit, react
    from inspect_ai.dataset import Sample

    imported = time.monotonic()
    tools = WorkspaceTools(workspace)
    submission = Submission()
    settings = options.settings
    if is_dry_run(settings.name) and "custom_outputs" not in settings.model_args:
        script = {"custom_outputs": agent_outputs(settings.name)}
        settings = dataclasses.replace(settings, model_args=script)
    provenance = options.provenance()
    all_tools: list[Any] = inspect_tools(tools)
    if options.mcp:
        from flightdeck.arms.agents.mcp import mcp_tool_sources, read_snapshots

        env = {"FLIGHTDECK_WORKSPACE": str(workspace.resolve()), **(environ or {})}
        all_tools += mcp_tool_sources(options.mcp, env)
        snapshots = read_snapshots(options.mcp, env)
        if snapshots:
            provenance["knowledge_snapshot"] = {"retrieval": redact_json(snapshots)}
    if options.snapshot is not None:
        provenance["knowledge_snapshot"] = {"retrieval": redact_json(dict(options.snapshot))}

    agent = react(
        prompt=options.system_prompt,
        tools=all_tools,
        submit=AgentSubmit(
            tool=submit_tool(tools, submission), answer_only=True, keep_in_messages=True
        ),
    )
    skip_other_providers_state(settings.name)
    log_dir = Path(tempfile.mkdtemp(prefix="inspect-", dir=scratch))
    evaluating = time.monotonic()
    try:
        logs = eval(
            Task(dataset=[Sample(input=user_prompt(task, workspace), id=str(task.get("id")))]),
            solver=agent,
            model=get_model(settings),
            log_dir=str(log_dir),
            log_format="json",
            display="none",
            turn_limit=options.max_steps,
            token_limit=options.token_limit,
            score=False,
            fail_on_error=True,
        )
        log = logs[0]
        evaluated = time.monotonic()
        location = Path(log.location)
        log_json = redact(location.read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    if log.status != "success":
        message = log.error.message if log.error is not None else log.status
        raise AgentError(redact(f"the inspect eval ended with {log.status}: {message}"), log_json)
    usage = TokenUsage.total(TokenUsage.from_inspect(u) for u in log.stats.model_usage.values())
    stopped = None
    sample = log.samples[0] if log.samples else None
    timing = {
        "import_seconds": round(imported - began, 3),
        "setup_seconds": round(evaluating - imported, 3),
        "eval_seconds": round(evaluated - evaluating, 3),
        **(sample_timing(sample) if sample is not None else {}),
        "log_seconds": round(time.monotonic() - evaluated, 3),
    }
    if submission.answer is None:
        limit = sample.limit if sample is not None else None
        stopped = f"{limit.type} limit of {limit.limit:g}" if limit is not None else "no submit"
    return AgentRun(
        answer=submission.answer
        if submission.answer is not None
        else NO_ANSWER.format(why=stopped),
        citations=submission.citations,
        usage=usage,
        provenance=provenance,
        log_json=log_json,
        stopped=stopped,
        read_paths=list(tools.read_paths),
        timing=timing,
    )


def sample_timing(sample: EvalSample) -> dict[str, float]:
    """A sample's seconds: in all, waiting on the model, running tools (inspect's events)."""
    model = sum(getattr(e, "working_time", 0) or 0 for e in sample.events if e.event == "model")
    tool = sum(getattr(e, "working_time", 0) or 0 for e in sample.events if e.event == "tool")
    return {
        "sample_seconds": round(sample.total_time or 0, 3),
        "model_seconds": round(model, 3),
        "tool_seconds": round(tool, 3),
    }


def parse_mcp_commands(commands: tuple[str, ...]) -> tuple[str, ...]:
    """Check each ``--mcp`` command splits like a shell command would."""
    from flightdeck.errors import InputError

    for command in commands:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise InputError("--mcp", None, f"cannot split {command!r}: {exc}") from None
        if not argv:
            raise InputError("--mcp", None, "an --mcp command is empty; give the server command")
    return commands


def load_snapshot(path: Path) -> dict[str, Any]:
    """``--snapshot FILE``: its JSON object when it is one, and always its name and sha256.

    A file that is no JSON at all (an archive, a list of names) is recorded by its name and
    hash; one that is JSON but not strict JSON (a key given twice, a number too long for
    Python, nesting too deep) is an :class:`InputError` naming it, as any JSON file.
    """
    from flightdeck.errors import JSONProblem
    from flightdeck.files.jsonl import document_error
    from flightdeck.files.strict_json import loads_strict

    data = path.read_bytes()
    record: dict[str, Any] = {"file": path.name, "sha256": hashlib.sha256(data).hexdigest()}
    try:
        value = loads_strict(data)
    except JSONProblem as exc:
        if exc.kind in ("syntax", "encoding"):  # not JSON: any file may be the snapshot
            return record
        raise document_error(path, exc) from None
    if isinstance(value, dict):
        record = {**value, **record}
    return record
