"""What a harness command needs from its sandbox: the model's variables and the network.

The built-in model harnesses (``experiment agent llm`` and ``experiment agent attached``) name
their model on the command line; its provider decides which environment variables inspect
reads and whether the harness must reach a server (:mod:`flightdeck.models.provider_env`). The
runner asks :func:`harness_needs` once per arm, where it builds the sandbox policy, and

- passes exactly those variables that are set (besides any the operator names with
  ``--pass-env``);
- opens the network for the arm unless the operator said otherwise (``--no-network``,
  ``--network``, ``--network-allow``, or ``network``/``network_allow`` under the arm in
  ``harness_sandbox``): only the model's endpoint (an allow-list of its ``host:port``) when
  it is known (:func:`endpoint`: the provider's base-URL variable when set, else the
  provider's one default server), else the whole host network, as before;
- runs the LLM agent many questions a process (``batch``), each still a trial;
- records both in the arm's meta (``harness_needs``), with ``dry_run: true`` for
  ``mockllm/...``, which answers without a model (:mod:`flightdeck.arms.agents.dry_run`)
  and whose answers ``knowledge score`` refuses unless ``--allow-dry-run`` (:func:`is_dry_run`).

Any other command needs nothing it does not ask for: a team's own harness names its variables
with ``--pass-env`` and its network with ``--network``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from flightdeck.errors import InputError
from flightdeck.models import INSPECT_MISSING
from flightdeck.models.provider_env import TRANSPORT, ProviderEnv, provider_env

MODEL_AGENTS = ("llm", "attached")
# Each provider's one server when no base-URL variable is set, read off inspect_ai 0.3.285
# (``service_base_url`` of ``_providers/*.py``; grok's ``"api.x.ai"``) and its SDKs
# (anthropic ``_client.py``, openai ``lib/_client_auth.py``). A provider not listed (google,
# mistral, groq, bedrock, azure, hf, vllm, ...) may reach more hosts: the whole network.
DEFAULT_ENDPOINTS = {
    "anthropic": "api.anthropic.com:443",
    "openai": "api.openai.com:443",
    "grok": "api.x.ai:443",
    "fireworks": "api.fireworks.ai:443",
    "deepseek": "api.deepseek.com:443",
    "sambanova": "api.sambanova.ai:443",
    "perplexity": "api.perplexity.ai:443",
    "moonshot": "api.moonshot.ai:443",
    "openrouter": "openrouter.ai:443",
    "together": "api.together.xyz:443",
    "meta": "api.meta.ai:443",
    "ollama": "localhost:11434",
    "llama-cpp-python": "localhost:8000",
}
_SUB_SERVICES = ("azure", "bedrock", "vertex")  # anthropic/vertex/..., openai/azure/...
_PROXIES = tuple(v for v in TRANSPORT if v.lower().endswith("_proxy") and "no_" not in v.lower())


@dataclass(frozen=True)
class HarnessNeeds:
    """A model harness's model, its provider's variables, and whether it goes out."""

    agent: str  # "llm" or "attached"
    model: str
    provider: ProviderEnv | None  # None: a provider inspect does not ship
    mcp: bool = False  # pins an MCP server (``--mcp``)
    one_per_process: bool = False  # ``--no-batch``: a process per question

    @property
    def batch(self) -> bool:
        """Whether it takes many questions a process (:mod:`flightdeck.arms.batch_trial`).

        The LLM agent does, unless it pins an MCP server: that server is the team's program,
        which would see every workspace of the batch, so each question keeps its process;
        nor with ``--no-batch``.
        """
        return self.agent == "llm" and not self.mcp and not self.one_per_process

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable the model's provider (and its transport) may read."""
        return self.provider.variables if self.provider is not None else ()

    def pass_env(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The variables to pass: those of :attr:`variables` that are set."""
        return tuple(v for v in self.variables if environ.get(v))

    @property
    def network(self) -> bool:
        return self.provider is None or self.provider.network

    @property
    def dry_run(self) -> bool:
        return self.provider is not None and self.provider.dry_run

    def endpoint(self, environ: Mapping[str, str]) -> tuple[str, ...] | None:
        """The ``host:port`` the model is reached at, when that is all it needs; else None.

        The provider's base-URL variable (or inspect's ``INSPECT_EVAL_MODEL_BASE_URL``) when
        set, else its default server (:data:`DEFAULT_ENDPOINTS`). None (the whole network)
        for a provider not listed, a sub-service (``openai/azure/...``), a URL that is no
        ``http(s)://host[:port]``, or an HTTP proxy variable set (the client goes through it).
        """
        from flightdeck.arms.net_allow import parse_target

        if self.provider is None or not self.network or any(environ.get(v) for v in _PROXIES):
            return None
        urls = [v for v in self.provider.reads if v.endswith(("_BASE_URL", "_API_BASE"))]
        urls.append("INSPECT_EVAL_MODEL_BASE_URL")
        url = next((environ[v] for v in urls if environ.get(v)), None)
        if url is None:
            parts = self.model.split("/")
            if len(parts) > 2 and parts[1] in _SUB_SERVICES:
                return None
            default = DEFAULT_ENDPOINTS.get(self.provider.provider)
            return None if default is None else (default,)
        try:
            split = urlsplit(url)
            port = split.port or {"https": 443, "http": 80}[split.scheme]
            host = split.hostname or ""
            shown = f"[{host}]" if ":" in host else host
            return (str(parse_target(f"{shown}:{port}")),)
        except (KeyError, ValueError):
            return None

    def meta(self, network: bool | list[str], environ: Mapping[str, str]) -> dict[str, Any]:
        """The meta's record: what the model needs and what the arm got (names, never values)."""
        record: dict[str, Any] = {
            "harness": f"flightdeck experiment agent {self.agent}",
            "model": self.model,
            "provider": self.provider.provider if self.provider is not None else None,
            "network": {"needed": self.network, "opened": network},
            "pass_env": sorted(self.pass_env(environ)),
        }
        if self.dry_run:
            record["dry_run"] = True
        return record


def harness_needs(argv: Sequence[str]) -> HarnessNeeds | None:
    """The needs of ``... experiment agent llm|attached --model M ...``; None for other commands."""
    for i in range(len(argv) - 2):
        if argv[i] == "experiment" and argv[i + 1] == "agent" and argv[i + 2] in MODEL_AGENTS:
            rest = argv[i + 3 :]
            model = _option(rest, "--model")
            if model is None:
                return None
            mcp = any(a == "--mcp" or a.startswith("--mcp=") for a in rest)
            alone = "--no-batch" in rest
            return HarnessNeeds(argv[i + 2], model, provider_env(model), mcp, alone)
    return None


def refuse_without_inspect(needs: HarnessNeeds | None, argv: Sequence[str], path: str) -> None:
    """The agent's own :class:`InputError` when a model agent would run without inspect_ai.

    Said once, before any trial, rather than by every trial. Checked in this process only
    when the harness runs this installation: its program, found on the harness's ``path``,
    lies beside this interpreter (``flightdeck`` or ``python -m flightdeck`` of this
    virtualenv). Another interpreter has packages of its own; its agent still says so itself.
    """
    if needs is None or not _beside_this_interpreter(argv[0], path):
        return
    if importlib.util.find_spec("inspect_ai") is None:
        raise InputError("--model", None, INSPECT_MISSING)


def _beside_this_interpreter(program: str, path: str) -> bool:
    found = shutil.which(program, path=path)
    here = os.path.dirname(os.path.abspath(sys.executable))
    return found is not None and os.path.dirname(os.path.abspath(found)) == here


class _Settings(Protocol):
    @property
    def network(self) -> bool | None: ...

    @property
    def network_allow(self) -> tuple[str, ...]: ...

    @property
    def sandbox(self) -> str: ...

    @property
    def pass_env(self) -> tuple[str, ...]: ...


S = TypeVar("S", bound=_Settings)


def widened(config: S, needs: HarnessNeeds | None) -> S:
    """A run's settings with what the model agent needs: its variables (those set) and, when
    the operator left the network unset (``None``, no allow-list), the network if the model
    is reached over it: its endpoint alone when known (:meth:`HarnessNeeds.endpoint`), else all.
    """
    network, allow = config.network, config.network_allow
    if network is None and not allow and needs is not None and needs.network:
        if config.sandbox == "bwrap":  # unconfined (--sandbox none), no list could hold
            allow = needs.endpoint(os.environ) or ()
        network = not allow
    extra = needs.pass_env(os.environ) if needs is not None else ()
    return dataclasses.replace(  # type: ignore[type-var]
        config, network=bool(network), network_allow=allow, pass_env=config.pass_env + extra
    )


def _option(argv: Sequence[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.partition("=")[2]
    return None


def is_dry_run(meta: Mapping[str, Any]) -> bool:
    """Whether an arm's meta says its answers came from a dry run, by the runner or the harness."""
    needs = meta.get("harness_needs")
    provenance = meta.get("provenance")
    return bool(
        meta.get("dry_run") is True
        or (isinstance(needs, Mapping) and needs.get("dry_run") is True)
        or (isinstance(provenance, Mapping) and provenance.get("dry_run") is True)
    )


def refuse_dry_runs(metas: Mapping[str, Path]) -> None:
    """:class:`InputError` for the first arm (in order) whose meta says it was a dry run."""
    from flightdeck.suite.records import read_meta

    for arm, path in metas.items():
        if path.is_file() and is_dry_run(read_meta(path).fields):
            raise InputError(
                path,
                None,
                f"arm {arm!r} is a dry run (mockllm/model: no model answered); run it with a "
                "real model under a new arm name, or pass --allow-dry-run to score it anyway "
                "(to check the pipeline, never to decide)",
            )
