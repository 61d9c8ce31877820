"""A scripted stand-in model behind an OpenAI-compatible chat completions endpoint.

It plays an agent from what the tools return, as a real model would, so a test exercises
inspect's provider path, the tools, the hashing and the protocol end to end, offline:

1. ``grep`` for the question's longest word (or ``search`` when an MCP server offers it);
2. ``read`` the lines around the first hit;
3. ``submit`` those lines as the answer, citing their span.

Standard library only (``http.server``); the server runs on 127.0.0.1 on a free port and
keeps every request it served, with its headers, for the test to inspect.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STOP = {"what", "which", "when", "does", "did", "the", "who", "how", "why", "and", "for"}
_HIT_RE = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): ", re.MULTILINE)
_URI_RE = re.compile(r"^(?P<path>[^\s#]+)#L(?P<a>\d+)-L(?P<b>\d+):$", re.MULTILINE)
_NUMBERED_RE = re.compile(r"^(\d+): ?(.*)$")


def _call(name: str, arguments: dict[str, Any], turn: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{turn}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _last_tool(messages: list[dict[str, Any]]) -> tuple[str | None, str, dict[str, Any]]:
    """The name, text and arguments of the last tool call and its result, if any."""
    if not messages or messages[-1].get("role") != "tool":
        return None, "", {}
    result = messages[-1]
    content = result.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content)
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call["id"] == result.get("tool_call_id"):
                function = call["function"]
                return function["name"], str(content), json.loads(function["arguments"])
    return None, str(content), {}


def next_message(body: dict[str, Any], turn: int) -> dict[str, Any]:
    """The stand-in's next assistant message for a chat completions request."""
    messages = body["messages"]
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    question = next(m["content"] for m in messages if m["role"] == "user")
    if isinstance(question, list):
        question = "".join(part.get("text", "") for part in question)
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


class StandInServer:
    """The server on 127.0.0.1; ``requests`` holds ``(headers, body)`` of each call."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.billed: list[int] = []  # prompt tokens billed per request: a quarter of its bytes
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:
                if not self.path.endswith("/v1/chat/completions"):
                    self.send_error(404, "only /v1/chat/completions")
                    return
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                body = json.loads(raw)
                with owner._lock:
                    owner.requests.append((dict(self.headers), body))
                    turn = len(owner.requests)
                message = next_message(body, turn)
                usage = {"prompt_tokens": len(raw) // 4, "completion_tokens": 7}
                with owner._lock:
                    owner.billed.append(usage["prompt_tokens"])
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                reply = {
                    "id": f"chatcmpl-{turn}",
                    "object": "chat.completion",
                    "created": 1_700_000_000,
                    "model": body.get("model", "stand-in"),
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                        }
                    ],
                    "usage": usage,
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StandInServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
