"""A scripted OpenAI-compatible chat server on 127.0.0.1, for harnesses that call a model.

inspect_ai reaches it as ``openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY`` in the environment (:meth:`Stub.env`). Each ``POST .../chat/completions``
is recorded (:attr:`Stub.requests`) and answered by ``script(request) -> (status, text)``.
The usage it reports is the provider's side of prompt caching: ``prompt_tokens`` is a quarter
of the request's message bytes, and ``cached_tokens`` is the length, in the same units, of the
longest message prefix an earlier request already sent (what a provider's prefix cache hits).
Served from threads of the test process; the test that starts it stops it with ``close``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[dict[str, Any]], tuple[int, str]]


def message_text(request: dict[str, Any]) -> str:
    """All the text of a chat request's messages, in order."""
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


class Stub:
    def __init__(self, script: Script, service: str = "stub") -> None:
        self.script = script
        self.service = service
        self.requests: list[dict[str, Any]] = []
        self._prefixes: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                status, text = stub.script(body)
                if status != 200:
                    self._send(status, {"error": {"message": text, "type": "server_error"}})
                    return
                self._send(200, stub.completion(body, text))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def env(self) -> dict[str, str]:
        name = self.service.upper().replace("-", "_")
        return {f"{name}_BASE_URL": self.base_url, f"{name}_API_KEY": "test-key"}

    def completion(self, request: dict[str, Any], text: str) -> dict[str, Any]:
        prompt = message_text(request)
        cached = max((_common(prompt, p) for p in self._prefixes), default=0)
        self._prefixes.append(prompt)
        prompt_tokens, cached_tokens = len(prompt) // 4, cached // 4
        completion_tokens = max(1, len(text) // 4)
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": request.get("model", "m"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
