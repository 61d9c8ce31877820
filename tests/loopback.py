"""The base of the tests' scripted model servers: JSON over HTTP on 127.0.0.1, standard library.

inspect_ai reaches a subclass as a real provider (``openai-api/<service>/<model>`` with
``<SERVICE>_BASE_URL`` set to :attr:`LoopbackServer.base_url`), so a test runs the provider
path offline. The base parses each POST (:class:`Request`), sends the JSON that
:meth:`LoopbackServer.respond` returns, and builds the chat completions reply and its usage
fields (:func:`chat_completion`, :func:`chat_usage`); each subclass keeps its own script:
``tests/model_stub.py`` (plain text, prefix caching, Anthropic), ``tests/standin_model.py``
(an agent that greps, reads and submits), ``tests/judging.py`` (the judge's verdict tool).
Served from threads of the test process, from construction until :meth:`~LoopbackServer.close`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Reply = tuple[int, dict[str, Any]]  # HTTP status and the JSON payload


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    raw: bytes  # the body as sent (a server may bill by its size)
    body: dict[str, Any]


class LoopbackServer:
    """An HTTP server on a free port of 127.0.0.1 answering every POST with :meth:`respond`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # handlers run on threads of their own
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = Request(self.path, dict(self.headers), raw, json.loads(raw))
                status, payload = owner.respond(request)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def respond(self, request: Request) -> Reply:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """What ``<SERVICE>_BASE_URL`` is set to: the OpenAI client appends the route."""
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def not_found(path: str) -> Reply:
    return 404, {"error": {"message": f"no route {path}"}}


def content_text(content: Any) -> str:
    """A chat message's content as text: a string, or the text of its parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def tool_call_message(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An assistant message that calls one tool."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def chat_usage(
    prompt_tokens: int, completion_tokens: int, cached_tokens: int | None = None
) -> dict[str, Any]:
    """The usage fields of a chat completion; ``cached_tokens`` as OpenAI reports them."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return usage


def chat_completion(
    number: int, model: str, message: dict[str, Any], usage: dict[str, Any]
) -> dict[str, Any]:
    """A chat completions reply with one choice; it stops for tools when it calls one."""
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": usage,
    }
