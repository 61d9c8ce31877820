"""A scripted stand-in model behind an OpenAI-compatible chat completions endpoint.

It plays an agent from what the tools return, as a real model would, so a test exercises
inspect's provider path, the tools, the hashing and the protocol end to end, offline:

1. ``grep`` for the question's longest word (or ``search`` when an MCP server offers it);
2. ``read`` the lines around the first hit;
3. ``submit`` those lines as the answer, citing their span.

Offered no tools (``agent attached``: the documents are in the prompt), it answers at once
with the first lines of the attached document holding the question's longest word, and names
that document under ``Sources:``.

Standard library only (:class:`tests.loopback.LoopbackServer`); the server runs on 127.0.0.1
on a free port and keeps every request it served, with its headers, for the test to inspect.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.loopback import (
    LoopbackServer,
    Reply,
    Request,
    chat_completion,
    chat_usage,
    content_text,
    not_found,
    tool_call_message,
)

STOP = {"what", "which", "when", "does", "did", "the", "who", "how", "why", "and", "for"}
_HIT_RE = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): ", re.MULTILINE)
_URI_RE = re.compile(r"^(?P<path>[^\s#]+)#L(?P<a>\d+)-L(?P<b>\d+):$", re.MULTILINE)
_NUMBERED_RE = re.compile(r"^(\d+): ?(.*)$")
_DOCUMENT_RE = re.compile(r'<document name="(?P<name>[^"]+)">\n(?P<text>.*?)</document>', re.DOTALL)


def _call(name: str, arguments: dict[str, Any], turn: int) -> dict[str, Any]:
    return tool_call_message(f"call_{turn}_{name}", name, arguments)


def _last_tool(messages: list[dict[str, Any]]) -> tuple[str | None, str, dict[str, Any]]:
    """The name, text and arguments of the last tool call and its result, if any."""
    if not messages or messages[-1].get("role") != "tool":
        return None, "", {}
    result = messages[-1]
    content = content_text(result.get("content"))
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call["id"] == result.get("tool_call_id"):
                function = call["function"]
                return function["name"], content, json.loads(function["arguments"])
    return None, content, {}


def attached_reply(prompt: str) -> dict[str, Any]:
    """The answer to documents and a question in one prompt: a document's first lines."""
    question = prompt.rstrip().rsplit("Question: ", 1)[-1].split("\n")[0]
    words = [w for w in re.findall(r"[A-Za-z0-9]+", question) if w.lower() not in STOP]
    documents = [(m["name"], m["text"]) for m in _DOCUMENT_RE.finditer(prompt)]
    if not documents:
        return {"role": "assistant", "content": "No documents were attached."}
    word = max(words, key=len).lower() if words else ""
    name, text = next(((n, t) for n, t in documents if word in t.lower()), documents[0])
    excerpt = " ".join(line.strip() for line in text.splitlines()[:3] if line.strip())
    return {"role": "assistant", "content": f"{excerpt}\n\nSources:\n- {name}"}


def next_message(body: dict[str, Any], turn: int) -> dict[str, Any]:
    """The stand-in's next assistant message for a chat completions request."""
    messages = body["messages"]
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    prompt = "\n".join(content_text(m["content"]) for m in messages if m["role"] == "user")
    if not tools:
        return attached_reply(prompt)
    question = content_text(next(m["content"] for m in messages if m["role"] == "user"))
    question = question.split("\n")[0].removeprefix("Question: ")
    name, text, args = _last_tool(messages)
    if name is None:
        words = [w for w in re.findall(r"[A-Za-z0-9]+", question) if w.lower() not in STOP]
        word = max(words, key=len)
        search = next((t for t in sorted(tools) if t.endswith("search")), None)
        if search is not None:
            return _call(search, {"query": question}, turn)
        return _call("grep", {"pattern": re.escape(word)}, turn)
    if name.endswith("search"):
        found = _URI_RE.search(text)
        if found is None:
            return _call("submit", {"answer": "Nothing found.", "citations": []}, turn)
        start, end = int(found["a"]), int(found["b"])
        return _call("read", {"path": found["path"], "start": start, "end": end}, turn)
    if name == "grep":
        hit = _HIT_RE.search(text)
        if hit is None:
            return _call("submit", {"answer": "Nothing found.", "citations": []}, turn)
        line = int(hit["line"])
        return _call(
            "read", {"path": hit["path"], "start": max(1, line - 1), "end": line + 2}, turn
        )
    if name == "read":
        numbered = [_NUMBERED_RE.match(line) for line in text.splitlines()]
        rows = [(int(m[1]), m[2]) for m in numbered if m]
        answer = " ".join(t.strip() for _, t in rows if t.strip())
        span = f"{args['path']}#L{rows[0][0]}-L{rows[-1][0]}"
        return _call("submit", {"answer": answer, "citations": [span]}, turn)
    return {"role": "assistant", "content": "I am done."}


class StandInServer(LoopbackServer):
    """The server on 127.0.0.1; ``requests`` holds ``(headers, body)`` of each call."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.billed: list[int] = []  # prompt tokens billed per request: a quarter of its bytes
        super().__init__()

    def respond(self, request: Request) -> Reply:
        if not request.path.endswith("/v1/chat/completions"):
            return not_found(request.path)
        body = request.body
        with self.lock:
            self.requests.append((request.headers, body))
            turn = len(self.requests)
        message = next_message(body, turn)
        usage = chat_usage(len(request.raw) // 4, 7)
        with self.lock:
            self.billed.append(usage["prompt_tokens"])
        return 200, chat_completion(turn, body.get("model", "stand-in"), message, usage)
