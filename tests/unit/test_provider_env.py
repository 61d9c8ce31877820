"""The provider table of models/provider_env.py against the installed inspect_ai's own source.

The reference is inspect's provider registry (``inspect_ai/model/_providers/providers.py``:
each ``@modelapi(name=...)`` function and the modules it imports) read with ``ast``, never a
list copied here. Every provider inspect ships is in the table or explicitly not supported,
and the table names no provider inspect does not ship, so an inspect upgrade that adds, drops
or renames one fails here. Every environment variable a provider's module names (a string
constant shaped like one: ``ANTHROPIC_API_KEY``, ``AZUREAI_OPENAI_BASE_URL``, ...) is in its
entry or the transport's; an OpenAI-compatible provider's ``service="..."`` gives the two
names ``OpenAICompatibleAPI`` derives.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from flightdeck.models.provider_env import (
    COMPATIBLE,
    NOT_SUPPORTED,
    PROVIDERS,
    TRANSPORT,
    provider_env,
)

# names of environment variables: what a provider reads for a key, host, region or project
_VARIABLE_RE = re.compile(
    r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|AUTH_TOKEN|API_TOKEN|TOKEN|TOKEN_[A-Z]+|"
    r"BASE_URL|ENDPOINT|ENDPOINT_URL|API_BASE|API_VERSION|PROJECT|PROJECT_ID|REGION|LOCATION|"
    r"ACCOUNT_ID|ORG_ID|AUDIENCE|USE_VERTEXAI|USE_ADC|QUOTA_PROJECT|SAFETY_IDENTIFIER)$"
)


@cache
def providers_dir() -> Path:
    import inspect_ai.model._providers.providers as registry

    return Path(registry.__file__).parent


@cache
def registry() -> dict[str, tuple[str, ...]]:
    """inspect's provider names -> the ``_providers`` modules their factory imports."""
    tree = ast.parse((providers_dir() / "providers.py").read_text(encoding="utf-8"))
    found: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Name)
                and decorator.func.id == "modelapi"
            ):
                (name,) = [k.value for k in decorator.keywords if k.arg == "name"]
                assert isinstance(name, ast.Constant)
                modules = tuple(
                    n.module
                    for n in ast.walk(node)
                    if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module
                )
                found[str(name.value)] = modules
    return found


def module_source(module: str) -> str:
    return (providers_dir() / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8")


def constants(source: str) -> set[str]:
    return {
        n.value
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _base_modules(source: str) -> list[str]:
    """The sibling modules the classes of ``source`` subclass (``from .vllm import VLLMAPI``)."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        for alias in node.names
    }
    bases = [
        b.id
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for b in node.bases
        if isinstance(b, ast.Name)
    ]
    return [imported[b] for b in bases if b in imported]


def sources(provider: str) -> str:
    """The provider's modules, and the modules of the classes they subclass."""
    text = ""
    for module in registry()[provider]:
        own = module_source(module)
        text += own
        text += "".join(module_source(base) for base in _base_modules(own))
    return text


def _compatible_calls(source: str) -> list[ast.Call]:
    """The ``super().__init__(..., service="...")`` calls of an OpenAI-compatible subclass."""
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and any(k.arg == "service" and isinstance(k.value, ast.Constant) for k in node.keywords)
    ]


def test_every_provider_inspect_ships_is_in_the_table_or_not_supported() -> None:
    shipped = set(registry())
    assert len(shipped) > 20  # the registry was read
    known = set(PROVIDERS) | set(NOT_SUPPORTED) | set(COMPATIBLE)
    assert sorted(shipped - known) == [], "a provider inspect ships is not in provider_env.py"
    assert sorted(known - shipped) == [], "provider_env.py names a provider inspect lacks"
    assert not set(PROVIDERS) & set(NOT_SUPPORTED)


NAMED = sorted(set(PROVIDERS) & set(registry()))


@pytest.mark.parametrize("provider", NAMED)
def test_every_variable_a_provider_names_is_passed(provider: str) -> None:
    named = {c for c in constants(sources(provider)) if _VARIABLE_RE.match(c)}
    missing = named - set(PROVIDERS[provider].reads) - set(TRANSPORT)
    assert sorted(missing) == [], f"{provider} reads {sorted(missing)}"
    for group in PROVIDERS[provider].requires:  # what must be set is something it reads
        assert set(group) <= set(PROVIDERS[provider].reads)


COMPATIBLE_SUBCLASSES = sorted(p for p in NAMED if _compatible_calls(sources(p)))


@pytest.mark.parametrize("provider", COMPATIBLE_SUBCLASSES)
def test_an_openai_compatible_provider_reads_its_services_two_names(provider: str) -> None:
    """``OpenAICompatibleAPI`` reads ``<SERVICE>_API_KEY`` unless given ``api_key_var``, and
    ``<SERVICE>_BASE_URL`` unless given a base URL other than the caller's own parameter."""
    for call in _compatible_calls(sources(provider)):
        keywords = {k.arg: k.value for k in call.keywords}
        service = keywords["service"]
        assert isinstance(service, ast.Constant)
        name = str(service.value).upper().replace("-", "_")  # as OpenAICompatibleAPI does
        if " " in name:  # no shell can export such a name: the provider passes its own
            assert "api_key_var" in keywords, provider
            continue
        derived = set()
        if "api_key_var" not in keywords:
            derived.add(f"{name}_API_KEY")
        url = keywords.get("base_url")
        if url is None or (isinstance(url, ast.Name) and url.id == "base_url"):
            derived.add(f"{name}_BASE_URL")
        assert sorted(derived - set(PROVIDERS[provider].reads)) == [], provider


def test_the_compatible_derivation_is_inspects() -> None:
    source = module_source("openai_compatible")
    assert 'service_env_name = self.service.upper().replace("-", "_")' in source
    assert 'f"{service_env_name}_API_KEY"' in source
    assert 'f"{service_env_name}_BASE_URL"' in source


@pytest.mark.parametrize(
    ("model", "provider", "variables", "required", "network"),
    [
        pytest.param(
            "openai-api/local/qwen3",
            "openai-api/local",
            ("LOCAL_API_KEY", "LOCAL_BASE_URL"),
            ("LOCAL_API_KEY", "LOCAL_BASE_URL"),
            True,
            id="openai-api",
        ),
        pytest.param(
            "openai-api/my-box/m",
            "openai-api/my-box",
            ("MY_BOX_API_KEY", "MY_BOX_BASE_URL"),
            ("MY_BOX_API_KEY", "MY_BOX_BASE_URL"),
            True,
            id="openai-api-hyphen",
        ),
        pytest.param(
            "anthropic/claude-sonnet-4-5",
            "anthropic",
            ("ANTHROPIC_API_KEY",),
            ("ANTHROPIC_API_KEY",),
            True,
            id="anthropic",
        ),
        pytest.param(
            "openai/gpt-4.1", "openai", ("OPENAI_API_KEY",), ("OPENAI_API_KEY",), True, id="openai"
        ),
        pytest.param("mockllm/model", "mockllm", (), (), False, id="dry-run"),
        pytest.param("ollama/llama3", "ollama", ("OLLAMA_BASE_URL",), (), True, id="ollama"),
    ],
)
def test_a_model_names_its_providers_needs(
    model: str,
    provider: str,
    variables: tuple[str, ...],
    required: tuple[str, ...],
    network: bool,
) -> None:
    needs = provider_env(model)
    assert needs is not None
    assert needs.provider == provider
    assert set(variables) <= set(needs.reads)
    assert needs.missing({}) == list(required)
    assert needs.network is network
    assert needs.dry_run is (provider == "mockllm")
    assert (set(TRANSPORT) <= set(needs.variables)) is network


@pytest.mark.parametrize(
    "model", ["openai-api/qwen3", "openai-api//m", "no-such-provider/m", "transformer_lens/x"]
)
def test_a_name_inspect_cannot_read_has_no_needs(model: str) -> None:
    assert provider_env(model) is None
