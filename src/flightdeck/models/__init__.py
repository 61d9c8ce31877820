"""The model layer over inspect_ai: name a model, configure it, count its tokens, hide its keys.

Everything in flightdeck that calls an LLM goes through this module: the agent arm
(:mod:`flightdeck.arms.agents.llm`), the attached-documents arm
(:mod:`flightdeck.arms.agents.inspect_call`) and the ``llm`` judge
(:mod:`flightdeck.rating.judge_llm`). Each keeps only its own call (the agent's loop, the
counted and cached prompt, the forced verdict tool), so that every caller

- accepts the same model names (:func:`check_model_name`): any inspect name such as
  ``anthropic/claude-sonnet-4-5`` or ``openai/gpt-4.1``, and ``openai-api/<service>/<model>``
  for any OpenAI-compatible server, configured by ``<SERVICE>_BASE_URL`` and
  ``<SERVICE>_API_KEY`` (vLLM, llama.cpp, ollama); ``mockllm/model`` for tests;
- opens the model one way (:func:`get_model`, from :class:`ModelSettings`, whose
  :meth:`~ModelSettings.generate_config` is the one ``GenerateConfig``), and hears why inspect
  could not open it (:class:`ModelUnavailable`);
- records the same provenance (:meth:`ModelSettings.provenance`);
- sums tokens the same way (:class:`TokenUsage`);
- never writes an API key (:func:`redact`): every string that leaves a process (a trace, a
  meta file, a log line) passes through it.

inspect_ai is an optional extra (``llm``, of the ``flightdeck-evals`` distribution); it is
imported inside functions, so importing this module is cheap and works without it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flightdeck.errors import InputError, ModelUnavailable
from flightdeck.version import __version__

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig, Model, ModelUsage

INSTALL_HINT = (
    "install the llm extra of flightdeck's distribution, flightdeck-evals (from a checkout: "
    "pip install -e '.[llm]')"
)
# The one message for a model agent without inspect_ai: the agent's and the runner's (#21).
INSPECT_MISSING = f"inspect_ai is not installed; {INSTALL_HINT}"
# Environment variables whose values are secrets: API keys, tokens, passwords.
_SECRET_NAME_RE = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values would redact ordinary words
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[^\s/][^\s]*)+$")
_MARKUP_RE = re.compile(r"\[/?[a-z]+\]")  # rich markup in inspect's messages: [bold]...[/bold]


def in_trial(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process is a harness that ``experiment run`` started (its protocol is set)."""
    env = os.environ if environ is None else environ
    return any(f"FLIGHTDECK_{n}" in env for n in ("TASK", "BATCH", "RESULT"))


def sandbox_hint(name: str, environ: Mapping[str, str] | None = None) -> str:
    """In a trial, which of the model's variables are missing here and how to pass them."""
    from flightdeck.models.provider_env import provider_env

    env = os.environ if environ is None else environ
    needs = provider_env(name)
    if not in_trial(env) or needs is None:
        return ""
    missing = needs.missing(dict(env))
    if not missing:
        return ""
    names = ", ".join(missing)
    flags = " ".join(f"--pass-env {v}" for v in missing)
    return (
        f"; {names} is not set inside the harness's sandbox: export it before experiment run, "
        f"or pass it with {flags}"
    )


def model_failure(name: str, detail: str) -> InputError:
    """A provider that failed after inspect's retries: exit 2, for the name, key or server.

    The one error of both model arms (``agent llm``, ``agent attached``) for a model call
    that failed: a wrong key, an unknown model, a server that is down are the operator's to
    fix, never a verdict (exit 1).
    """
    from flightdeck.models.provider_env import provider_env

    needs = provider_env(name)
    named: list[str] = []  # what must be set (one of each group), else where it goes
    if needs is not None:
        named = [group[0] for group in needs.requires] or [
            v for v in needs.reads if v.endswith("_BASE_URL")
        ][:1]
    names = ", ".join(named)
    check = "check the model name" + (f", {names}" if names else "") + " and that its server is up"
    return InputError("--model", None, f"the model call failed ({detail}); {check}")


def skip_other_providers_state(name: str) -> None:
    """Keep inspect from importing a provider SDK the model ``name`` never uses, per sample.

    At each sample's start inspect resets every installed provider's per-sample state
    (``inspect_ai.model._assistant_internal``), importing the anthropic SDK (about 1.8 s of
    CPU) and OpenAI's Responses module (about 0.7 s) whatever the model. That state is only
    read by those providers' own calls, so for another model it is skipped: the anthropic
    state unless the provider is ``anthropic``, the OpenAI state only in a dry run
    (``mockllm``). ``tests/unit/test_llm_agent.py`` checks the flags are still inspect's.
    """
    try:
        from inspect_ai.model import _assistant_internal as state
    except ImportError:  # another inspect: nothing to skip
        return
    provider = name.split("/")[0]
    if provider != "anthropic" and hasattr(state, "_HAS_ANTHROPIC"):
        state._HAS_ANTHROPIC = False
    if provider == "mockllm" and hasattr(state, "_HAS_OPENAI"):
        state._HAS_OPENAI = False


def inspect_version() -> str:
    """The installed inspect_ai version; :class:`InputError` with the install hint without it."""
    from importlib import metadata  # here: importing this module stays cheap (score, --help)

    try:
        return metadata.version("inspect-ai")
    except metadata.PackageNotFoundError:
        raise InputError("--model", None, INSPECT_MISSING) from None


def check_model_name(name: str, environ: Mapping[str, str] | None = None) -> str:
    """Validate an inspect model name up front, saying how to fix it.

    ``openai-api/<service>/<model>`` needs ``<SERVICE>_BASE_URL`` (and inspect needs
    ``<SERVICE>_API_KEY``, even for a server that ignores it).
    """
    env = os.environ if environ is None else environ
    if not _NAME_RE.match(name):
        raise InputError(
            "--model",
            None,
            f"{name!r} is not an inspect model name; give <provider>/<model>, "
            "e.g. anthropic/claude-sonnet-4-5 or openai-api/<service>/<model>",
        )
    parts = name.split("/")
    if parts[0] == "openai-api":
        if len(parts) < 3:
            raise InputError(
                "--model", None, f"{name!r} needs a service: openai-api/<service>/<model>"
            )
        service = parts[1].upper().replace("-", "_")
        for var in (f"{service}_BASE_URL", f"{service}_API_KEY"):
            if not env.get(var):
                raise InputError(
                    "--model",
                    None,
                    f"{name} reads {var}; set it (any non-empty key for a server without one)"
                    + sandbox_hint(name, env),
                )
    return name


@dataclass(frozen=True)
class ModelSettings:
    """A model and how to call it: the part of a run's provenance that concerns the model."""

    name: str
    temperature: float | None = None
    max_tokens: int | None = None  # per generation
    max_retries: int | None = None  # None: inspect's default (retries with backoff)
    timeout: int | None = None  # seconds per request; None: inspect's default
    extra: Mapping[str, Any] = field(default_factory=dict)  # more GenerateConfig fields
    model_args: Mapping[str, Any] = field(default_factory=dict)  # provider arguments (tests)

    def generate_config(self) -> GenerateConfig:
        """The inspect ``GenerateConfig`` for these settings (unset fields stay inspect's)."""
        from inspect_ai.model import GenerateConfig

        values: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries,
            "timeout": self.timeout,
            **self.extra,
        }
        return GenerateConfig(**{k: v for k, v in values.items() if v is not None})

    def provenance(self) -> dict[str, Any]:
        """What a meta file records about the model: never a key, never a base URL's secret."""
        service = None
        parts = self.name.split("/")
        if parts[0] == "openai-api" and len(parts) >= 3:
            service = parts[1]
        record: dict[str, Any] = {
            "model": self.name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "inspect_ai_version": inspect_version(),
            "flightdeck_version": __version__,
        }
        if service is not None:
            base_url = os.environ.get(f"{service.upper().replace('-', '_')}_BASE_URL")
            record["service"] = service
            record["base_url"] = _strip_credentials(base_url) if base_url else None
        if self.extra:
            record["generate_config"] = dict(self.extra)
        redacted: dict[str, Any] = redact_json(record)
        return redacted


def _strip_credentials(url: str) -> str:
    """A URL without ``user:password@`` or a query string (which may carry a key)."""
    import urllib.parse

    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or ""
    if parsed.port:
        host += f":{parsed.port}"
    return urllib.parse.urlunsplit((parsed.scheme, host, parsed.path, "", ""))


def get_model(settings: ModelSettings, *, memoize: bool = True) -> Model:
    """The inspect ``Model`` for ``settings`` (credentials come from the environment).

    The name is checked first (:func:`check_model_name`); whatever inspect raises while
    opening it (PrerequisiteError, ValueError, ... per provider) becomes
    :class:`ModelUnavailable`. ``memoize=False`` gives a model of its own (inspect shares one
    per name and config otherwise).
    """
    inspect_version()
    from inspect_ai.model import get_model as inspect_get_model

    check_model_name(settings.name)
    try:
        return inspect_get_model(
            settings.name,
            config=settings.generate_config(),
            memoize=memoize,
            **dict(settings.model_args),
        )
    except Exception as exc:  # inspect's error types differ per provider
        reason = " ".join(_MARKUP_RE.sub("", str(exc)).split())
        raise ModelUnavailable(settings.name, reason, sandbox_hint(settings.name)) from None


_USAGE_FIELDS = (
    "input_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
)


@dataclass(frozen=True)
class TokenUsage:
    """Tokens a run used, as the harness protocol's ``usage`` counts them.

    ``input_tokens`` counts cached input too (what a reader calls input); ``cached_tokens``
    are the ones read from the provider's cache, ``cache_write_tokens`` the ones written to it.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in _USAGE_FIELDS}
        )

    @classmethod
    def from_inspect(cls, usage: ModelUsage) -> TokenUsage:
        read = usage.input_tokens_cache_read or 0
        write = usage.input_tokens_cache_write or 0
        return cls(
            input_tokens=usage.input_tokens + read + write,
            output_tokens=usage.output_tokens,
            total_tokens=usage.total_tokens,
            reasoning_tokens=usage.reasoning_tokens or 0,
            cached_tokens=read,
            cache_write_tokens=write,
        )

    @classmethod
    def total(cls, usages: Iterable[TokenUsage]) -> TokenUsage:
        result = cls()
        for usage in usages:
            result = result + usage
        return result

    def to_json(self, fields: Iterable[str] = _USAGE_FIELDS) -> dict[str, int]:
        """The counts by name; ``fields`` picks some of them, in the protocol's order."""
        wanted = set(fields)
        return {name: getattr(self, name) for name in _USAGE_FIELDS if name in wanted}


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment's secrets, by name: variables named like ``*_API_KEY`` or ``*_TOKEN``."""
    env = os.environ if environ is None else environ
    return {
        name: value
        for name, value in env.items()
        if _SECRET_NAME_RE.search(name) and len(value) >= _MIN_SECRET_LEN
    }


def redact(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value replaced by ``<redacted:NAME>``; longest first."""
    found = secret_values() if secrets is None else secrets
    for name, value in sorted(found.items(), key=lambda item: -len(item[1])):
        if value in text:
            text = text.replace(value, f"<redacted:{name}>")
    return text


def redact_json(value: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """A JSON value with :func:`redact` applied to every string in it, keys included."""
    found = secret_values() if secrets is None else secrets
    if isinstance(value, str):
        return redact(value, found)
    if isinstance(value, list):
        return [redact_json(item, found) for item in value]
    if isinstance(value, dict):
        return {redact(str(k), found): redact_json(v, found) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Completion:
    """One generation: its text and what it cost."""

    text: str
    usage: TokenUsage
    model: str


def complete(settings: ModelSettings, prompt: str, *, system: str | None = None) -> Completion:
    """Generate once from ``prompt`` (and an optional system message), synchronously.

    For a one-off prompt; the agent uses inspect's loop (:mod:`flightdeck.arms.agents.llm`),
    the attached arm counts and caches its prompt (:mod:`flightdeck.arms.agents.inspect_call`)
    and the judge forces a tool call (:mod:`flightdeck.rating.judge_llm`), each over
    :func:`get_model`.
    """
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    model = get_model(settings)
    messages: list[Any] = [ChatMessageUser(content=prompt)]
    if system is not None:
        messages.insert(0, ChatMessageSystem(content=system))

    async def generate() -> Completion:
        output = await model.generate(messages)
        usage = TokenUsage.from_inspect(output.usage) if output.usage else TokenUsage()
        return Completion(output.completion, usage, output.model or settings.name)

    import asyncio

    return asyncio.run(generate())
