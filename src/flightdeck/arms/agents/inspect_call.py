"""One model call with an honest context budget: the attached arm's call, over the model layer.

:func:`ask` is the only place the attached arm talks to a model. The model is named, opened
and configured by :mod:`flightdeck.models`, as for the LLM agent and the judge (the same name
rule, the same ``GenerateConfig``, the same usage counts); what is the attached arm's own is
here:

1. count the prompt's tokens before calling: the provider's own count where inspect offers
   one (its provider class overrides ``ModelAPI.count_tokens``: Anthropic's count endpoint,
   OpenAI's tokenizer), else the stated estimate :data:`ESTIMATE` (inspect's fallback needs
   a tokenizer file downloaded at run time, which an offline machine does not have);
2. refuse with both numbers, before any generation, when the count plus the answer's budget
   is over the model's context window (``--context-window``, else inspect's model database),
   rather than let a provider or server truncate the documents silently;
3. generate once, with the documents marked as a cache breakpoint and ``cache_prompt`` on
   (Anthropic caches the prefix; OpenAI caches long prefixes by itself); inspect retries
   rate limits and transient errors up to ``max_retries`` times;
4. return the text and the token usage, with cached input tokens counted apart.

Heavy imports (inspect_ai) happen inside the function, never at module level.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flightdeck.arms.agents.dry_run import is_dry_run
from flightdeck.errors import ContextTooLarge, InputError, ModelFailed
from flightdeck.models import ModelSettings, TokenUsage, get_model

if TYPE_CHECKING:
    from inspect_ai.model import Model

ESTIMATE = "estimate: ceil(UTF-8 bytes / 3) per text part (no provider count in inspect)"
# The counts a reply reports (the run summary shows input, cached and output per question).
USAGE_FIELDS = ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens")


@dataclass(frozen=True)
class Count:
    """The prompt's size before the call, and the window it must fit."""

    tokens: int
    method: str
    window: int | None  # None: not checked (a dry run without --context-window)
    window_source: str
    max_tokens: int

    def fits(self) -> bool:
        return self.window is None or self.tokens + self.max_tokens <= self.window


@dataclass(frozen=True)
class Reply:
    text: str
    stop_reason: str
    usage: dict[str, int]
    count: Count


def estimate_tokens(texts: list[str]) -> int:
    """:data:`ESTIMATE`: three UTF-8 bytes a token, which overcounts English (about four)."""
    return sum(math.ceil(len(text.encode("utf-8")) / 3) for text in texts)


def ask(
    model: str | Model,
    system: str,
    documents: str,
    question: str,
    *,
    max_tokens: int,
    context_window: int | None = None,
    max_retries: int = 5,
) -> Reply:
    """Ask once: ``system``, then ``documents`` (cached prefix), then ``question``.

    Raises :class:`ContextTooLarge` before any generation when the prompt does not fit,
    :class:`flightdeck.errors.InputError` when the window is unknown or the model cannot
    be opened (:class:`flightdeck.models.ModelUnavailable`), and
    :class:`ModelFailed` when the provider fails or stops at its context length.
    """
    return asyncio.run(
        _ask(model, system, documents, question, max_tokens, context_window, max_retries)
    )


async def _ask(
    model_or_name: str | Model,
    system: str,
    documents: str,
    question: str,
    max_tokens: int,
    context_window: int | None,
    max_retries: int,
) -> Reply:
    from inspect_ai.model import (
        ChatMessageSystem,
        ChatMessageUser,
        ContentText,
        ModelAPI,
        get_model_info,
    )

    name = str(model_or_name)
    settings = ModelSettings(
        name, max_tokens=max_tokens, max_retries=max_retries, extra={"cache_prompt": True}
    )
    config = settings.generate_config()
    model = get_model(settings) if isinstance(model_or_name, str) else model_or_name
    messages: list[Any] = [
        ChatMessageSystem(content=system),
        ChatMessageUser(
            content=[
                ContentText(text=documents, cache_breakpoint=True),
                ContentText(text=question),
            ]
        ),
    ]

    window: int | None
    if context_window is not None:
        window, source = context_window, "--context-window"
    elif is_dry_run(name):
        window, source = None, "not checked: a dry run (pass --context-window to check one)"
    else:
        info = get_model_info(model)
        if info is None or info.input_tokens is None:
            raise InputError(
                "--model",
                None,
                f"inspect does not know the context window of {name}; pass --context-window "
                "TOKENS (the provider's documented limit)",
            )
        window, source = info.input_tokens, "inspect's model database"

    if type(model.api).count_tokens is not ModelAPI.count_tokens:
        tokens = await model.count_tokens(messages, config)
        method = f"provider count ({type(model.api).__name__}.count_tokens, through inspect)"
    else:
        tokens, method = estimate_tokens([system, documents, question]), ESTIMATE
    count = Count(tokens, method, window, source, max_tokens)
    if window is not None and not count.fits():
        raise ContextTooLarge(
            f"does not fit: {tokens:,} prompt tokens + {max_tokens:,} for the answer exceed "
            f"{window:,}, the context window of {name} ({source}); tokens counted by {method}; "
            "attach fewer or smaller files, or use a model with a larger window"
        )

    try:
        output = await model.generate(messages, config=config)
    except Exception as exc:  # the provider's error, after inspect's retries
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        last = lines[-1][:300] if lines else type(exc).__name__  # inspect adds the request above
        raise ModelFailed(f"{name}: {last}") from exc
    if output.stop_reason == "model_length":
        raise ModelFailed(
            f"{name} stopped at its context length ({tokens:,} prompt tokens counted by "
            f"{method}); the documents do not fit: attach fewer files"
        )
    # input_tokens include the cached ones (TokenUsage.from_inspect adds them back)
    usage = TokenUsage.from_inspect(output.usage).to_json(USAGE_FIELDS) if output.usage else {}
    return Reply(output.completion, output.stop_reason, usage, count)
