"""A scripted model server on 127.0.0.1 for harnesses that call a model: OpenAI and Anthropic.

inspect_ai reaches it as ``openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY`` (:meth:`Stub.env`), or as ``anthropic/<model>`` with
``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` (:meth:`Stub.anthropic_env`). Every request
is recorded (:attr:`Stub.requests`) and answered by ``script(request) -> (status, text)``.

The usage it reports is the provider's side of prompt caching, in tokens of four characters:
an OpenAI-style reply counts as cached the longest prefix an earlier request already sent
(automatic prefix caching); an Anthropic-style reply caches only a prefix that ends at a block
marked ``cache_control`` (written the first time, read after), and ``/v1/messages/count_tokens``
answers with the request's size. Served from threads of the test process; the test that
starts it stops it with ``close``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[dict[str, Any]], tuple[int, str]]


def message_text(request: dict[str, Any]) -> str:
    """All the text of a chat request's messages (and an Anthropic system prompt), in order."""
    parts = [block.get("text", "") for block in _system_blocks(request)]
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
        self.keep_path = False  # record each request's path under "path"
        self._prefixes: list[str] = []
        self._cached: set[str] = set()  # Anthropic-style: prefixes up to a cache_control mark
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, **body} if stub.keep_path else body)
                if self.path.endswith("/v1/messages/count_tokens"):
                    self._send(200, {"input_tokens": len(message_text(body)) // 4})
                    return
                if self.path.endswith("/v1/messages"):
                    status, text = stub.script(body)
                    self._send(status, stub.anthropic_message(body, text))
                    return
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

    def anthropic_env(self) -> dict[str, str]:
        """For inspect's ``anthropic/<model>``: the SDK appends ``/v1/messages`` itself."""
        return {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.server.server_address[1]}",
            "ANTHROPIC_API_KEY": "test-key",
        }

    def anthropic_message(self, request: dict[str, Any], text: str) -> dict[str, Any]:
        """A Messages API reply; only a prefix ending at a ``cache_control`` block is cached."""
        prefix = _marked_prefix(request)
        read = write = 0
        if prefix is not None:
            if prefix in self._cached:
                read = len(prefix) // 4
            else:
                write = len(prefix) // 4
                self._cached.add(prefix)
        total = len(message_text(request)) // 4
        return {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "m"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": total - read - write,
                "output_tokens": max(1, len(text) // 4),
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write,
            },
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _system_blocks(request: dict[str, Any]) -> list[dict[str, Any]]:
    system = request.get("system")
    if isinstance(system, str):
        return [{"type": "text", "text": system}]
    return system if isinstance(system, list) else []


def _marked_prefix(request: dict[str, Any]) -> str | None:
    """The request's text up to the last block marked ``cache_control``; None when unmarked."""
    blocks = list(_system_blocks(request))
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            blocks.extend(b for b in content if isinstance(b, dict))
    marked = [i for i, b in enumerate(blocks) if b.get("cache_control")]
    if not marked:
        return None
    return "\n".join(b.get("text", "") for b in blocks[: marked[-1] + 1])


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
