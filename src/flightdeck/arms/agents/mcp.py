"""MCP for the LLM agent: the ``--mcp`` servers it talks to, and the reference one we ship.

Both sides meet at the resource named ``knowledge_snapshot``: a server that offers it (JSON,
or any text) says what its index holds, and :func:`read_snapshots` records it in the arm's
meta, as the product page asks ("a harness with that retrieval MCP pinned, recording
knowledge.snapshot").

The client. Each ``--mcp`` command starts a stdio MCP server (a process per trial, in the
trial's process group, so a timeout kills it with the agent). The server gets only the
variables it is given: ``FLIGHTDECK_WORKSPACE``, PYTHONPATH and VIRTUAL_ENV, and the few that
:func:`mcp.client.stdio.get_default_environment` passes (PATH, HOME, ...), never the agent's
API keys.

The reference retrieval server, ``flightdeck experiment mcp repo-search`` (:func:`serve`),
serves over stdio

- the tool ``search(query)``: the passages :func:`flightdeck.arms.agents.repo_search.search`
  ranks best for the query, each headed by its ``<repo>/<path>#L<a>-L<b>`` uri;
- the resource ``knowledge_snapshot``: what the index is (the search and flightdeck's
  version), which the agent records in the arm's meta. It is the same for every trial: the
  runner fails a trial whose provenance differs from the arm's, and the workspace (the
  question's ``as_of`` files in scope) is recorded beside it. :func:`workspace_snapshot`, a
  digest of the files the index read, goes to the server's stderr.

It reads ``FLIGHTDECK_WORKSPACE`` (or ``--workspace``), the same read-only folder the agent's
own tools read, so the retrieval path runs offline end to end. A real retrieval service
replaces it by any stdio MCP server with a search tool and, ideally, the same resource.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SNAPSHOT_RESOURCE = "knowledge_snapshot"
_PASSED = ("PYTHONPATH", "VIRTUAL_ENV", "LANG", "LC_ALL")  # how to run, never a secret


def _params(command: str, env: Mapping[str, str]) -> tuple[str, list[str], dict[str, str]]:
    from mcp.client.stdio import get_default_environment

    argv = shlex.split(command)
    passed = {name: os.environ[name] for name in _PASSED if name in os.environ}
    return argv[0], argv[1:], {**get_default_environment(), **passed, **env}


def mcp_tool_sources(commands: tuple[str, ...], env: Mapping[str, str]) -> list[Any]:
    """One inspect tool source per server: all of its tools join grep, read and list."""
    from inspect_ai.tool import mcp_server_stdio, mcp_tools

    sources = []
    for index, command in enumerate(commands):
        program, args, server_env = _params(command, env)
        server = mcp_server_stdio(name=f"mcp{index}", command=program, args=args, env=server_env)
        sources.append(mcp_tools(server))
    return sources


def read_snapshots(commands: tuple[str, ...], env: Mapping[str, str]) -> dict[str, Any]:
    """``{command: snapshot}`` for each server that offers a ``knowledge_snapshot`` resource."""
    found: dict[str, Any] = {}
    for command in commands:
        snapshot = asyncio.run(_read_snapshot(command, env))
        if snapshot is not None:
            found[command] = snapshot
    return found


async def _read_snapshot(command: str, env: Mapping[str, str]) -> Any:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    program, args, server_env = _params(command, env)
    params = StdioServerParameters(command=program, args=args, env=server_env)
    async with Client(params) as client:
        listed = await client.list_resources()
        match = next(
            (
                r
                for r in listed.resources
                if r.name == SNAPSHOT_RESOURCE or str(r.uri).endswith(SNAPSHOT_RESOURCE)
            ),
            None,
        )
        if match is None:
            return None
        contents = (await client.read_resource(str(match.uri))).contents
    return snapshot_value("".join(getattr(item, "text", "") for item in contents))


def snapshot_value(text: str) -> Any:
    """A server's ``knowledge_snapshot`` text as its strict JSON value, else the text itself
    (a key given twice, a number too long for Python: kept whole as text, never a crash)."""
    from flightdeck.errors import JSONProblem
    from flightdeck.files.strict_json import loads_strict

    try:
        return loads_strict(text.encode("utf-8", "surrogatepass"))
    except JSONProblem:
        return text


# --- the reference server --------------------------------------------------------------


def workspace_snapshot(workspace: Path) -> dict[str, Any]:
    """The index's knowledge snapshot: a digest of the workspace's files as it reads them."""
    from flightdeck.arms.agents.repo_search import read_workspace

    corpus = read_workspace(workspace)
    digest = hashlib.sha256()
    for path, data in zip(corpus.paths, corpus.data, strict=True):
        digest.update(f"{path}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    return {
        "index": "flightdeck repo-search (BM25 over passages)",
        "files": len(corpus.paths),
        "sha256": digest.hexdigest(),
    }


def index_snapshot() -> dict[str, Any]:
    """What the reference index is, the same for every trial of an arm."""
    from flightdeck.version import __version__

    return {
        "index": "flightdeck repo-search (BM25 over passages) of the trial's workspace",
        "flightdeck_version": __version__,
    }


def serve(workspace: Path) -> None:
    """Serve the search tool and the snapshot resource on stdin/stdout until EOF."""
    from mcp.server.mcpserver import MCPServer

    from flightdeck.arms.agents.repo_search import search as repo_search

    server = MCPServer("flightdeck-repo-search")

    @server.tool(name="search")
    def search(query: str) -> str:
        """Search the repositories for the passages that best answer a query.

        Args:
            query: What to look for, in words (a question works).

        Returns:
            The best passages, each headed by its <repo>/<path>#L<a>-L<b> uri.
        """
        result = repo_search(workspace, query)
        if not result.passages:
            return "no passage matches the query"
        return "\n\n".join(f"{p.uri}:\n{p.text}" for p in result.passages)

    @server.resource(
        f"flightdeck://{SNAPSHOT_RESOURCE}",
        name=SNAPSHOT_RESOURCE,
        mime_type="application/json",
        description="What this index holds: file count and a digest of the files.",
    )
    def knowledge_snapshot() -> str:
        return json.dumps(index_snapshot(), sort_keys=True)

    sys.stderr.write(f"indexed: {json.dumps(workspace_snapshot(workspace), sort_keys=True)}\n")

    server.run("stdio")
