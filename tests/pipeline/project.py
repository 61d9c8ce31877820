"""Helpers to run the real pipeline (`dvc repro`) in a temporary git repository.

``pipeline_project`` copies what the pipeline needs from this checkout (dvc.yaml,
params.yaml, the demo repository, the suite with its keys unsealed again, the person's raw
answers and the labels) into a fresh git repository, runs `dvc init` and a full `dvc repro`
once per session, and commits the result. Each test gets its own copy of that repository, so
tests can edit files and re-run without touching each other.

Git runs with fixed names and dates and without the user's config; DVC runs with analytics
off and its site cache, global and system config inside the temporary folder; the venv's
``bin`` comes first on PATH, so stages find ``flightdeck``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "suites" / "knowledge-demo-v1"
BIN = Path(sys.executable).parent
GIT_DATE = "2024-06-01T12:00:00+00:00"

# What the pipeline reads; everything else it writes.
INPUTS = (
    "dvc.yaml",
    "params.yaml",
    ".dvcignore",
    "demo/sdlc.bundle",
    "demo/projects-attachments",
    "suites/knowledge-demo-v1/questions.jsonl",
    "suites/knowledge-demo-v1/keys.jsonl",
    "suites/knowledge-demo-v1/raw",
    "suites/knowledge-demo-v1/labels",
)


def tool_env(home: Path) -> dict[str, str]:
    """The environment for git and dvc: reproducible, offline, nothing from the user."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DVC_"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        GIT_AUTHOR_NAME="Pipeline Tests",
        GIT_AUTHOR_EMAIL="pipeline-tests@example.com",
        GIT_AUTHOR_DATE=GIT_DATE,
        GIT_COMMITTER_NAME="Pipeline Tests",
        GIT_COMMITTER_EMAIL="pipeline-tests@example.com",
        GIT_COMMITTER_DATE=GIT_DATE,
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        DVC_NO_ANALYTICS="1",
        DVC_STUDIO_OFFLINE="true",
        DVC_SITE_CACHE_DIR=str(home / "dvc-site-cache"),
        DVC_GLOBAL_CONFIG_DIR=str(home / "dvc-global"),
        DVC_SYSTEM_CONFIG_DIR=str(home / "dvc-system"),
    )
    return env


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=tool_env(cwd), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout.strip()


@dataclass
class Pipeline:
    """A temporary project: a git repository with the pipeline, its inputs and dvc."""

    root: Path
    home: Path
    first_run: subprocess.CompletedProcess[str] | None = None

    def dvc(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(BIN / "dvc"), *args],
            cwd=self.root,
            env=tool_env(self.home),
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"dvc {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def commit(self, message: str) -> None:
        self.git("add", "--all")
        self.git("commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message)

    def read_json(self, path: str) -> object:
        return json.loads((self.root / path).read_text(encoding="utf-8"))


def ran_stages(output: str) -> list[str]:
    """Stage names from dvc's "Running stage 'X':" lines, in order."""
    prefix = "Running stage '"
    return [
        line[len(prefix) : line.index("'", len(prefix))]
        for line in output.splitlines()
        if line.startswith(prefix)
    ]


def unseal(keys: Path) -> None:
    """Drop the canaries so the copied suite can be sealed afresh by the seal stage."""
    lines = keys.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    for record in records:
        record.pop("canary", None)
    keys.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def copy_inputs(source: Path, target: Path) -> None:
    for name in INPUTS:
        src, dst = source / name, target / name
        if not src.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    unseal(target / "suites" / "knowledge-demo-v1" / "keys.jsonl")
