"""The reference retrieval MCP server: the built-in repo-search over the workspace, as a tool.

``flightdeck experiment mcp repo-search`` serves, over stdio,

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

import hashlib
import json
import sys
from pathlib import Path
from typing import Any


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
    from flightdeck import __version__

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
        "flightdeck://knowledge_snapshot",
        name="knowledge_snapshot",
        mime_type="application/json",
        description="What this index holds: file count and a digest of the files.",
    )
    def knowledge_snapshot() -> str:
        return json.dumps(index_snapshot(), sort_keys=True)

    sys.stderr.write(f"indexed: {json.dumps(workspace_snapshot(workspace), sort_keys=True)}\n")

    server.run("stdio")
