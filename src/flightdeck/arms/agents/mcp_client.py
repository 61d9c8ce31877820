"""``--mcp`` servers for the LLM agent: their tools for inspect, their knowledge snapshot.

Each command starts a stdio MCP server (a process per trial, in the trial's process group,
so a timeout kills it with the agent). The server gets only the variables it is given:
``FLIGHTDECK_WORKSPACE``, PYTHONPATH and VIRTUAL_ENV, and the few that
:func:`mcp.client.stdio.get_default_environment` passes (PATH, HOME, ...), never the agent's
API keys.

A server that offers a resource named ``knowledge_snapshot`` (JSON, or any text) says what
its index holds; :func:`read_snapshots` records it in the arm's meta, as the product page
asks ("a harness with that retrieval MCP pinned, recording knowledge.snapshot").
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from collections.abc import Mapping
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
    text = "".join(getattr(item, "text", "") for item in contents)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
