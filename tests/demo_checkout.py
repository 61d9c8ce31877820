"""A copy of this checkout's demo project, where a test runs documented commands as a user would.

The copy holds what the README's commands read from the repository's root: ``params.yaml``,
``dvc.yaml``, the sealed demo suite with its answers and labels, ``demo/`` (the repository
bundle and the attachment folder), ``holdouts/`` (the canary registry) and ``examples/``.
:func:`user_env` is a shell a user would have: flightdeck's virtualenv first on ``PATH``,
and none of the variables a model provider or its transport reads, so a test sets exactly
the ones an example names.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from flightdeck.models.provider_env import PROVIDERS, TRANSPORT

ROOT = Path(__file__).resolve().parents[1]
DEMO_SUITE = "suites/knowledge-demo-v1"
COPIED = ("params.yaml", "dvc.yaml", DEMO_SUITE, "demo", "holdouts", "examples")


def demo_checkout(target: Path) -> Path:
    """Copy the demo project into ``target`` (created) and return it."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("judgements"))
        else:
            shutil.copy2(source, target / name)
    return target


def _provider_variables() -> set[str]:
    names = {v for p in PROVIDERS.values() for v in p.reads} | set(TRANSPORT)
    return names | {"LOCAL_BASE_URL", "LOCAL_API_KEY", "STUB_BASE_URL", "STUB_API_KEY"}


def user_env(**more: str) -> dict[str, str]:
    """The environment of a user's shell in the checkout: no provider variable set."""
    dropped = _provider_variables()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in dropped and not k.startswith(("FLIGHTDECK_", "OPENAI_", "ANTHROPIC_"))
    }
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(more)
    return env


def answer_sha256(record: dict[str, Any]) -> str:
    """The spec's answer hash: SHA-256 of the record as canonical JSON (sorted, compact, UTF-8)."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
