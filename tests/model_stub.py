"""A scripted model server on 127.0.0.1 for harnesses that call a model: OpenAI and Anthropic.

inspect_ai reaches it as ``openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY`` (:meth:`Stub.env`), or as ``anthropic/<model>`` with
``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` (:meth:`Stub.anthropic_env`). Every request
is recorded (:attr:`Stub.requests`) and answered by ``script(request) -> (status, text)``.

The usage it reports is the provider's side of prompt caching, in tokens of four characters:
an OpenAI-style reply counts as cached the longest prefix an earlier request already sent
(automatic prefix caching); an Anthropic-style reply caches only a prefix that ends at a block
marked ``cache_control`` (written the first time, read after), and ``/v1/messages/count_tokens``
answers with the request's size. The HTTP side is :class:`tests.loopback.LoopbackServer`; the
test that starts it stops it with ``close``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.loopback import LoopbackServer, Reply, Request, chat_completion, chat_usage, not_found

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


class Stub(LoopbackServer):
    def __init__(self, script: Script, service: str = "stub") -> None:
        self.script = script
        self.service = service
        self.requests: list[dict[str, Any]] = []
        self.keep_path = False  # record each request's path under "path"
        self._prefixes: list[str] = []
        self._cached: set[str] = set()  # Anthropic-style: prefixes up to a cache_control mark
        super().__init__()

    def respond(self, request: Request) -> Reply:
        body, path = request.body, request.path
        self.requests.append({"path": path, **body} if self.keep_path else body)
        if path.endswith("/v1/messages/count_tokens"):
            return 200, {"input_tokens": len(message_text(body)) // 4}
        if path.endswith("/v1/messages"):
            status, text = self.script(body)
            return status, self.anthropic_message(body, text)
        if not path.endswith("/chat/completions"):
            return not_found(path)
        status, text = self.script(body)
        if status != 200:
            return status, {"error": {"message": text, "type": "server_error"}}
        return 200, self.completion(body, text)

    def env(self) -> dict[str, str]:
        name = self.service.upper().replace("-", "_")
        return {f"{name}_BASE_URL": self.base_url, f"{name}_API_KEY": "test-key"}

    def completion(self, request: dict[str, Any], text: str) -> dict[str, Any]:
        prompt = message_text(request)
        cached = max((_common(prompt, p) for p in self._prefixes), default=0)
        self._prefixes.append(prompt)
        usage = chat_usage(len(prompt) // 4, max(1, len(text) // 4), cached_tokens=cached // 4)
        message = {"role": "assistant", "content": text}
        return chat_completion(len(self.requests), request.get("model", "m"), message, usage)

    def anthropic_env(self) -> dict[str, str]:
        """For inspect's ``anthropic/<model>``: the SDK appends ``/v1/messages`` itself."""
        return {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}",
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
