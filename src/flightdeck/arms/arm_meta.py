"""What a harness arm's meta says: the command, its model, who ran it, the snapshot, the sandbox.

The runner writes this meta before the first trial and keeps it on resume; a rerun that
changes the harness, its model or its sandbox is refused here, and the provenance a harness
reports (its model, its attachments, its retrieval index) joins the meta or fails the trial.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.suite.records import Question, read_meta


def harness_path() -> str:
    """PATH for harnesses: flightdeck's virtualenv first, as if it were activated.

    So ``python -m flightdeck ...`` and ``flightdeck ...`` in a harness command mean this
    installation even when the shell that started flightdeck did not activate it.
    """
    path = os.environ.get("PATH", os.defpath)
    if sys.prefix == sys.base_prefix:
        return path
    bin_dir = os.path.dirname(sys.executable)
    return os.pathsep.join([bin_dir, *(p for p in path.split(os.pathsep) if p != bin_dir)])


def parse_command(command: str, path: str | None = None) -> list[str]:
    """Split the harness command as a POSIX shell would (no expansion); check it exists."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(
            "--harness", None, f"cannot split {command!r}: {exc}; fix the quoting"
        ) from None
    if not argv:
        raise InputError("--harness", None, "the harness command is empty; give a command")
    if shutil.which(argv[0], path=path) is None:
        raise InputError(
            "--harness",
            None,
            f"{argv[0]!r} is not an executable file or a command on PATH; check the command",
        )
    return argv


def harness_model(command: str) -> str | None:
    """The ``--model`` of a built-in model harness's command (``agent attached``, ``agent llm``)."""
    if "agent attached" not in command and "agent llm" not in command:
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    for i, arg in enumerate(argv):
        if arg == "--model" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--model="):
            return arg.partition("=")[2]
    return None


def default_model(command: str) -> str:
    """``--model`` when none is given: a built-in agent names its model, others are "none"."""
    if "agent repo-search" in command:
        return "none (flightdeck repo-search, BM25)"
    return harness_model(command) or "none"


def provenance_conflict(meta: dict[str, Any], provenance: dict[str, Any]) -> str | None:
    """Why a trial's reported provenance cannot join the arm's meta; None when it can."""
    earlier = meta.get("provenance")
    if earlier is not None and earlier != provenance:
        changed = sorted(
            k for k in set(earlier) | set(provenance) if earlier.get(k) != provenance.get(k)
        )
        return (
            f"the harness reports a different {', '.join(changed)} than the arm's earlier "
            "answers (its attachments or prompt changed?); use a new arm name"
        )
    model = provenance.get("model")
    if model is not None and model != meta.get("model"):
        return (
            f"the harness reports model {model!r} but the arm's meta says {meta.get('model')!r}; "
            "drop --model from experiment run or make the two agree"
        )
    return None


def with_provenance(meta: dict[str, Any], provenance: dict[str, Any]) -> dict[str, Any]:
    """The meta with the harness's provenance; its ``knowledge_snapshot`` replaces ``as_of``'s.

    A retrieval harness's snapshot (``{"retrieval": ...}``, the index it searched, e.g. its
    MCP server's) joins the ``as_of`` commits instead: the agent read both.
    """
    updated = {**meta, "provenance": provenance}
    if "knowledge_snapshot" in provenance:
        snapshot = provenance["knowledge_snapshot"]
        if isinstance(snapshot, dict) and set(snapshot) == {"retrieval"}:
            snapshot = {"as_of": meta.get("knowledge_snapshot"), **snapshot}
        updated["knowledge_snapshot"] = snapshot
    return updated


def default_by(root: Path) -> str:
    """Who ran it, when ``--by`` does not say: git's ``user.name`` for the project repository.

    The login name says little (in CI and containers it is ``root``), while ``user.name`` is
    the name a person signs their commits with. The login name is the last resort, for a
    project with no git or no ``user.name``.
    """
    import getpass
    import subprocess

    try:
        found = subprocess.run(
            ["git", "-C", str(root), "config", "--get", "user.name"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git on PATH
        found = None
    if found is not None and found.returncode == 0 and found.stdout.strip():
        return found.stdout.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def snapshot(questions: list[Question]) -> dict[str, list[str]]:
    """The knowledge snapshot of a harness arm: each repository's ``as_of`` commits."""
    commits: dict[str, set[str]] = {}
    for question in questions:
        for repo, commit in question.as_of.items():
            commits.setdefault(repo, set()).add(commit)
    return {repo: sorted(commits[repo]) for repo in sorted(commits)}


def check_meta(path: Path, meta: dict[str, Any], has_answers: bool) -> dict[str, Any]:
    """Keep the first run's meta on resume; refuse to mix two harnesses in one arm."""
    if not path.is_file() or not has_answers:
        return meta
    old = read_meta(path).fields
    if old.get("runner") != "harness":
        raise InputError(path, None, "this arm was imported from a person; use another arm name")
    for name in ("command", "model"):
        if old.get(name) != meta[name]:
            raise InputError(
                path,
                None,
                f"the arm's answers came from {name} {old.get(name)!r}, not {meta[name]!r}; "
                "rerun with the same one, or use a new arm name",
            )
    was = old.get("sandbox")
    if was is not None and sandbox_terms(was) != sandbox_terms(meta["sandbox"]):
        raise InputError(
            path,
            None,
            f"the arm's answers ran with sandbox {sandbox_terms(was)}, not "
            f"{sandbox_terms(meta['sandbox'])}; rerun with the same --sandbox, --network, "
            "--pass-env and --bind, or use a new arm name",
        )
    snapshot = old.get("knowledge_snapshot") if "provenance" in old else meta["knowledge_snapshot"]
    return {
        **old,
        "knowledge_snapshot": snapshot,
        "last_run": meta["date"],
        "sandbox": meta["sandbox"],  # the same terms; its caps and paths are this run's
    }


def sandbox_terms(value: Any) -> str:
    """The settings that change what a harness can do, as one comparable string."""
    if not isinstance(value, dict):
        return repr(value)
    if value.get("mode") == "none":
        return "none"
    names = ",".join(value.get("pass_env") or []) or "-"
    network = "on" if value.get("network") else "off"
    if value.get("network_allow"):
        network = "allow " + ",".join(value["network_allow"])
    terms = f"bwrap (network {network}, env {names}"
    binds = value.get("bind") or []
    return terms + (f", bind {','.join(binds)})" if binds else ")")
