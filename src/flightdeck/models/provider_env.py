"""What an inspect_ai model name needs from its environment: variables, network, dry run.

inspect_ai opens a model from its name's provider (``anthropic/...``, ``openai-api/<svc>/...``)
and each provider reads its own environment variables. A harness sandbox passes only the
variables it is told to, so the runner must know them: :func:`provider_env` answers for one
model name. The table is read off the provider modules of inspect_ai 0.3.285
(``inspect_ai/model/_providers/*.py``: the names each passes to ``api_key_vars``,
``model_base_url`` and ``environment_prerequisite_error``, or reads with ``os.environ``; for
the OpenAI-compatible ones, ``OpenAICompatibleAPI`` derives ``<SERVICE>_API_KEY`` and
``<SERVICE>_BASE_URL`` from its ``service``); ``tests/unit/test_provider_env.py`` checks each
name against the installed inspect's source.

Beside a provider's own variables, every provider that reaches a server may read the
transport's: :data:`TRANSPORT` (the HTTP proxy and CA variables httpx honours, and
inspect's ``INSPECT_EVAL_MODEL_BASE_URL``, which ``model_base_url`` falls back to).

``mockllm/...`` needs nothing and no network: flightdeck runs it as a dry run
(:mod:`flightdeck.arms.agents.dry_run`).
"""

from __future__ import annotations

from dataclasses import dataclass

TRANSPORT = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "INSPECT_EVAL_MODEL_BASE_URL",
)
DRY_RUN_PROVIDER = "mockllm"


@dataclass(frozen=True)
class ProviderEnv:
    """One provider's needs; ``requires`` lists groups of which one variable must be set."""

    provider: str
    reads: tuple[str, ...]
    requires: tuple[tuple[str, ...], ...] = ()
    network: bool = True

    @property
    def dry_run(self) -> bool:
        return self.provider == DRY_RUN_PROVIDER

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable to pass: the provider's, then the transport's when it goes out."""
        return self.reads + (TRANSPORT if self.network else ())

    def missing(self, environ: dict[str, str] | None = None) -> list[str]:
        """The first variable of each required group none of whose variables is set."""
        import os

        env = os.environ if environ is None else environ
        return [group[0] for group in self.requires if not any(env.get(v) for v in group)]


def _compatible(service: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``OpenAICompatibleAPI``'s two names for ``service``: its key and its base URL."""
    name = service.upper().replace("-", "_")
    return (f"{name}_API_KEY",), (f"{name}_BASE_URL",)


def _service(provider: str, service: str, *, key_required: bool = True) -> ProviderEnv:
    key, url = _compatible(service)
    return ProviderEnv(provider, key + url, (key,) if key_required else ())


_AWS = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)

PROVIDERS: dict[str, ProviderEnv] = {
    p.provider: p
    for p in (
        ProviderEnv(
            "anthropic",
            ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
            (("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),),
        ),
        ProviderEnv(
            "openai",
            ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"),
            (("OPENAI_API_KEY",),),
        ),
        ProviderEnv(
            "google",
            (
                "GOOGLE_API_KEY",
                "GEMINI_API_KEY",
                "VERTEX_API_KEY",
                "GOOGLE_BASE_URL",
                "GOOGLE_GENAI_USE_VERTEXAI",
                "GOOGLE_CLOUD_PROJECT",
                "GOOGLE_CLOUD_LOCATION",
                "GOOGLE_VERTEX_BASE_URL",
                "VERTEX_BASE_URL",
            ),
        ),
        ProviderEnv("mistral", ("MISTRAL_API_KEY", "MISTRAL_BASE_URL"), (("MISTRAL_API_KEY",),)),
        ProviderEnv("groq", ("GROQ_API_KEY", "GROQ_BASE_URL"), (("GROQ_API_KEY",),)),
        ProviderEnv(
            "together", ("TOGETHER_API_KEY", "TOGETHER_BASE_URL"), (("TOGETHER_API_KEY",),)
        ),
        ProviderEnv(
            "grok",
            ("XAI_API_KEY", "GROK_API_KEY", "XAI_BASE_URL", "GROK_BASE_URL"),
            (("XAI_API_KEY", "GROK_API_KEY"),),
        ),
        ProviderEnv(
            "azureai",
            ("AZUREAI_API_KEY", "AZURE_API_KEY", "AZUREAI_BASE_URL"),
            (("AZUREAI_API_KEY", "AZURE_API_KEY"), ("AZUREAI_BASE_URL",)),
        ),
        ProviderEnv(
            "cloudflare",
            ("CLOUDFLARE_API_KEY", "CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID"),
            (("CLOUDFLARE_API_KEY", "CLOUDFLARE_API_TOKEN"), ("CLOUDFLARE_ACCOUNT_ID",)),
        ),
        ProviderEnv(
            "meta", ("META_API_KEY", "MODEL_API_KEY"), (("META_API_KEY", "MODEL_API_KEY"),)
        ),
        ProviderEnv(
            "litellm-proxy",
            (
                "LITELLM_PROXY_API_KEY",
                "LITELLM_API_KEY",
                "LITELLM_PROXY_BASE_URL",
                "LITELLM_PROXY_API_BASE",
                "LITELLM_BASE_URL",
            ),
        ),
        ProviderEnv("hf-inference-providers", ("HF_TOKEN",), (("HF_TOKEN",),)),
        ProviderEnv("hf", ("HF_TOKEN",)),  # local weights, fetched from the hub
        ProviderEnv("bedrock", _AWS),  # read by the AWS SDK
        _service("fireworks", "Fireworks"),
        _service("deepseek", "DeepSeek"),
        _service("sambanova", "SambaNova"),
        _service("perplexity", "Perplexity"),
        _service("moonshot", "Moonshot"),
        _service("openrouter", "OpenRouter"),
        _service("ollama", "Ollama", key_required=False),  # localhost:11434 by default
        _service("vllm", "vLLM", key_required=False),
        _service("sglang", "SGLang", key_required=False),
        _service("llama-cpp-python", "llama_cpp_python", key_required=False),
        ProviderEnv(DRY_RUN_PROVIDER, (), network=False),
    )
}


def provider_env(model: str) -> ProviderEnv | None:
    """The needs of the model ``model`` names; None for a provider inspect does not ship.

    ``openai-api/<service>/<model>`` reads ``<SERVICE>_API_KEY`` and ``<SERVICE>_BASE_URL``
    (both required: the service has no default server).
    """
    parts = model.split("/")
    provider = parts[0]
    if provider in ("openai-api", "openai-api-completions"):
        if len(parts) < 3 or not parts[1]:
            return None
        key, url = _compatible(parts[1])
        return ProviderEnv(f"{provider}/{parts[1]}", key + url, (key, url))
    return PROVIDERS.get(provider)
