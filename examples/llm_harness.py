#!/usr/bin/env python3
"""Plug an LLM agent into `flightdeck experiment run`, with read and grep as its only tools.

The harness protocol (see ``flightdeck.arms.protocol``): for each question, flightdeck starts this
script with the question record on stdin (and in ``FLIGHTDECK_TASK``), a read-only folder of
``<repo>/<path>`` files in ``FLIGHTDECK_WORKSPACE``, and two paths: ``FLIGHTDECK_RESULT`` for
the answer and ``FLIGHTDECK_TRACE`` for a log. The answer is one JSON object::

    {"answer": "...", "citations": [{"uri": "sdlc/docs/adr/0002.md#L3-L9", "sha256": "..."}]}

This script owns the two tools and the bookkeeping; the model only decides. Each step it runs
``--model-cmd`` (any command: a wrapper around your LLM API, a local model, an agent CLI in
headless mode) with the conversation so far as JSON on stdin, and reads one action back on
stdout::

    {"tool": "grep", "pattern": "postgres", "glob": "sdlc/docs/**"}   -> matching lines
    {"tool": "read", "path": "sdlc/docs/adr/0002.md", "start": 1, "end": 40}
    {"answer": "...", "citations": ["sdlc/docs/adr/0002.md#L3-L9"]}  -> done

Because the tools run here, the model can read nothing but the workspace (paths are checked,
nothing is written), and the citation hashes are computed here from the bytes read, so a model
cannot make one up. Every step goes to the trace, which the canary scan reads.

Run it (``--model-cmd`` is split like a shell would; ``--policy offline`` needs no model)::

    flightdeck experiment run suites/knowledge-demo-v1 --arm llm-agent --model my-model-1 \\
        --harness "python examples/llm_harness.py --model-cmd 'python my_llm_wrapper.py'"
    flightdeck experiment run suites/knowledge-demo-v1 --arm llm-offline \\
        --harness "python examples/llm_harness.py --policy offline"

Nothing here touches the network; a ``--model-cmd`` may, when you run it.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

MAX_STEPS = 12
MAX_GREP_HITS = 40
MAX_READ_LINES = 200


class Workspace:
    """Read and grep over the workspace, and nothing else."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.seen: dict[str, bytes] = {}  # path -> bytes read: what citations are hashed from

    def files(self) -> list[str]:
        return sorted(
            p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()
        )

    def _bytes(self, path: str) -> bytes:
        full = (self.root / path).resolve()
        if not full.is_relative_to(self.root) or not full.is_file():
            raise ValueError(f"{path}: no such file in the workspace")
        data = full.read_bytes()
        self.seen[path] = data
        return data

    def grep(self, pattern: str, glob: str = "**") -> list[str]:
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"bad pattern: {exc}") from None
        hits = []
        for path in self.files():
            if not fnmatch.fnmatch(path, glob):  # fnmatch's * spans folders
                continue
            for number, line in enumerate(self._text(path).splitlines(), start=1):
                if regex.search(line):
                    hits.append(f"{path}:{number}: {line.strip()[:200]}")
                    if len(hits) == MAX_GREP_HITS:
                        return hits
        return hits

    def read(self, path: str, start: int = 1, end: int | None = None) -> str:
        lines = self._text(path).splitlines()
        end = min(len(lines), end or start + MAX_READ_LINES - 1, start + MAX_READ_LINES - 1)
        return "\n".join(f"{n}: {lines[n - 1]}" for n in range(max(1, start), end + 1))

    def _text(self, path: str) -> str:
        return self._bytes(path).decode("utf-8", "replace")

    def cite(self, uri: str) -> dict[str, str]:
        """A citation with the SHA-256 of the whole file's bytes as read here."""
        path = uri.split("#", 1)[0]
        data = self.seen.get(path)
        if data is None:
            data = self._bytes(path)  # cited without reading it: still hash what is there
        return {"uri": uri, "sha256": hashlib.sha256(data).hexdigest()}


def offline_policy(conversation: dict[str, Any]) -> dict[str, Any]:
    """A stand-in for a model, to try the plumbing offline: grep, read the top hit, answer."""
    steps = conversation["steps"]
    words = re.findall(r"[a-z0-9]{4,}", conversation["question"].lower())
    if not steps:
        return {"tool": "grep", "pattern": "|".join(map(re.escape, words)) or "."}
    last = steps[-1]
    if last["action"].get("tool") == "grep":
        hits = last["result"] if isinstance(last["result"], list) else []
        if not hits:
            return {"answer": "I could not find it.", "citations": []}
        path, line = hits[0].split(":")[:2]
        return {"tool": "read", "path": path, "start": max(1, int(line) - 2), "end": int(line) + 5}
    read = last["action"]
    text = "\n".join(line.split(": ", 1)[-1] for line in str(last["result"]).splitlines())
    return {"answer": text, "citations": [f"{read['path']}#L{read['start']}-L{read['end']}"]}


def ask_model(command: list[str], conversation: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        command, input=json.dumps(conversation), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"model command failed ({proc.returncode}): {proc.stderr.strip()}")
    lines = proc.stdout.strip().splitlines()
    action = json.loads(lines[-1]) if lines else None
    if not isinstance(action, dict):
        raise SystemExit(f"model command printed no JSON action: {proc.stdout[-200:]!r}")
    return action


def run(task: dict[str, Any], workspace: Workspace, decide: Any, trace: Any) -> dict[str, Any]:
    conversation: dict[str, Any] = {
        "question": task["question"],
        "kind": task.get("kind"),
        "tools": {
            "grep": "{tool: grep, pattern: <regex>, glob?: <repo>/<path glob>}",
            "read": "{tool: read, path: <repo>/<path>, start?: int, end?: int}",
            "answer": "{answer: <text>, citations: [<repo>/<path>#L<a>-L<b>]}",
        },
        "files": workspace.files()[:500],
        "steps": [],
    }
    for _ in range(MAX_STEPS):
        action = decide(conversation)
        trace.write("action " + json.dumps(action) + "\n")
        if "answer" in action:
            citations = [workspace.cite(uri) for uri in action.get("citations", [])]
            return {"answer": str(action["answer"]), "citations": citations}
        try:
            if action.get("tool") == "grep":
                result: Any = workspace.grep(action["pattern"], action.get("glob", "**"))
            elif action.get("tool") == "read":
                result = workspace.read(action["path"], action.get("start", 1), action.get("end"))
            else:
                result = "unknown tool; use grep, read, or answer"
        except (KeyError, ValueError) as exc:
            result = f"error: {exc}"
        trace.write("result " + json.dumps(result)[:2000] + "\n")
        conversation["steps"].append({"action": action, "result": result})
    return {"answer": "Ran out of steps.", "citations": []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--model-cmd", help="command that maps a conversation to one action")
    group.add_argument("--policy", choices=["offline"], help="a scripted stand-in for a model")
    args = parser.parse_args()
    task = json.loads(os.environ.get("FLIGHTDECK_TASK") or sys.stdin.read())
    workspace = Workspace(Path(os.environ["FLIGHTDECK_WORKSPACE"]))
    if args.model_cmd:
        command = shlex.split(args.model_cmd)

        def decide(conversation: dict[str, Any]) -> dict[str, Any]:
            return ask_model(command, conversation)

    else:
        decide = offline_policy
    with open(os.environ.get("FLIGHTDECK_TRACE", os.devnull), "a", encoding="utf-8") as trace:
        result = run(task, workspace, decide, trace)
    Path(os.environ["FLIGHTDECK_RESULT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
