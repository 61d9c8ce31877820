"""The bubblewrap sandbox a harness runs in: the ``bwrap`` command line and its environment.

A trial's harness sees the machine's file system read-only (every top-level folder bound
read-only onto bubblewrap's own root, which is then remounted read-only), with:

- its workspace read-only at :data:`WORKSPACE` (one bind per repository);
- its result and trace files in :data:`OUT`, the only writable folder besides a private,
  empty ``/tmp``;
- the suite folders, the repositories (and their ``.git``), the project's own git folder,
  the holdouts folder, the project cache (``.flightdeck/``) and the scored results
  (``results/``: which cited uris are valid sources) masked: an empty tmpfs over a
  folder, ``/dev/null`` over a file;
- no network unless the arm asks for it, new user, pid, ipc, uts and cgroup namespaces,
  every capability dropped (so root inside cannot remount the workspace writable), and
  ``--die-with-parent`` (a killed runner leaves no harness running);
- only the environment variables :func:`harness_env` names.

Why bubblewrap: it is the unprivileged namespace sandbox that Flatpak and agent CLIs use, a
single Debian package with no daemon, and it sets the whole sandbox up from its arguments,
so what a trial may touch is this one list.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.project import STATE_FOLDER

WORKSPACE = "/flightdeck/workspace"
OUT = "/flightdeck/out"
MODES = ("bwrap", "none")
NO_SANDBOX_NOTE = "arm ran without a sandbox"
# Environment variables every harness gets when set (locale and time zone), besides PATH,
# HOME, TMPDIR and the FLIGHTDECK_* protocol variables; anything else must be named.
LOCALE_ENV = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ")
_UNDER_TMP = Path("/tmp")


@dataclass(frozen=True)
class SandboxPolicy:
    """How an arm's harnesses are confined; ``meta()`` is what the arm's meta records."""

    mode: str = "bwrap"  # "bwrap" or "none"
    network: bool = False
    pass_env: tuple[str, ...] = ()
    masked: tuple[Path, ...] = ()  # absolute paths hidden from the harness
    visible: tuple[Path, ...] = ()  # absolute paths under /tmp bound back in, read-only
    bwrap: str = "bwrap"  # the executable, as found on PATH
    version: str | None = None

    def meta(self) -> dict[str, Any]:
        if self.mode == "none":
            return {
                "mode": "none",
                "note": NO_SANDBOX_NOTE,
                "network": True,
                "pass_env": sorted(self.pass_env),
            }
        return {
            "mode": "bwrap",
            "bwrap_version": self.version,
            "network": self.network,
            "pass_env": sorted(self.pass_env),
            "masked": [
                "suite folders",
                "repositories and .git",
                "holdouts",
                "project cache",
                "scored results",
            ],
        }


@dataclass(frozen=True)
class BwrapStatus:
    """Whether bubblewrap runs here, tried once per process (and executable)."""

    path: str | None
    works: bool
    version: str | None = None
    reason: str = ""
    checked: list[str] = field(default_factory=list)


@functools.cache
def bwrap_status(path_env: str) -> BwrapStatus:
    """Find ``bwrap`` on ``path_env`` and start a trivial sandbox with it, once."""
    found = shutil.which("bwrap", path=path_env)
    if found is None:
        return BwrapStatus(None, False, reason="bwrap is not installed")
    argv = [found, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--", "true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return BwrapStatus(found, False, reason=f"bwrap did not start ({exc})")
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return BwrapStatus(found, False, reason=lines[-1] if lines else f"exit {proc.returncode}")
    version = subprocess.run(
        [found, "--version"], capture_output=True, text=True, check=False
    ).stdout.split()
    return BwrapStatus(found, True, version=version[-1] if version else None)


def require_bwrap(path_env: str) -> BwrapStatus:
    """The working bwrap, or the one-line error that says how to get one (or opt out)."""
    status = bwrap_status(path_env)
    if not status.works:
        raise InputError(
            "--sandbox",
            None,
            f"bubblewrap cannot run here ({status.reason}); install it (apt-get install "
            "bubblewrap) and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1), "
            "or pass --sandbox none to run the harness unconfined",
        )
    return status


def policy_for(
    mode: str,
    *,
    network: bool,
    pass_env: Iterable[str],
    root: Path,
    suite_dir: Path,
    repos: list[Path],
    holdouts: Path,
    argv: Sequence[str],
    path: str,
) -> SandboxPolicy:
    """An arm's sandbox: bwrap found and tried once, what it masks, what it lets through."""
    if mode not in MODES:
        raise InputError("--sandbox", None, f"{mode!r} is not a sandbox; use bwrap or none")
    names = check_env_names(pass_env)
    if mode == "none":
        return SandboxPolicy("none", True, names)
    status = require_bwrap(path)
    assert status.path is not None
    masked = masked_paths(root=root, suite_dir=suite_dir, repos=repos, holdouts=holdouts)
    visible = visible_paths(root, argv)
    return SandboxPolicy("bwrap", network, names, masked, visible, status.path, status.version)


def check_env_names(names: Iterable[str]) -> tuple[str, ...]:
    """``--pass-env`` names: each a valid variable name, never one of the protocol's own."""
    checked = []
    for name in names:
        if (
            not name
            or not (name[0].isalpha() or name[0] == "_")
            or not all(c.isalnum() or c == "_" for c in name)
        ):
            raise InputError("--pass-env", None, f"{name!r} is not an environment variable name")
        if name.startswith("FLIGHTDECK_"):
            raise InputError("--pass-env", None, f"{name} is set by the runner; pass another name")
        checked.append(name)
    return tuple(sorted(set(checked)))


def flightdeck_pythonpath() -> str | None:
    """The folder flightdeck was imported from when PYTHONPATH is what found it.

    So ``python -m flightdeck ...`` in a harness means this flightdeck, as ``harness_path``
    does for PATH; no other PYTHONPATH entry reaches the harness unless it is passed.
    """
    top = str(Path(__file__).resolve().parents[2])
    entries = [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(":") if p]
    return top if top in entries else None


def harness_env(
    policy: SandboxPolicy, path: str, protocol: Mapping[str, str], home: str
) -> dict[str, str]:
    """The harness's whole environment: PATH, HOME, TMPDIR, locale, protocol, named ones."""
    env = {"PATH": path, "HOME": home, "TMPDIR": home}
    for name in LOCALE_ENV:
        if name in os.environ:
            env[name] = os.environ[name]
    ours = flightdeck_pythonpath()
    if ours is not None:
        env["PYTHONPATH"] = ours
    for name in policy.pass_env:
        if name in os.environ:
            value = os.environ[name]
            if name == "PYTHONPATH" and ours is not None:
                value = f"{ours}:{value}"
            env[name] = value
    env.update(protocol)
    return env


def masked_paths(
    *,
    root: Path,
    suite_dir: Path,
    repos: Iterable[Path],
    holdouts: Path | None,
    extra: Iterable[Path] = (),
) -> tuple[Path, ...]:
    """What a harness may not read: suites, repositories, git folders, holdouts, cache, results."""
    found: list[Path] = []
    suite = suite_dir.resolve()
    found.append(suite)
    # Siblings of the folder as given and as resolved (a suite may be a symlink elsewhere).
    for parent in dict.fromkeys((suite.parent, suite_dir.absolute().parent)):
        found += _suites_in(parent)
    found += [Path(r).resolve() for r in repos]
    if holdouts is not None:
        found.append(holdouts.resolve())
    # The default registry too: with `holdouts:` misspelt in params.yaml, the real one is here.
    found.append((root / "holdouts").resolve())
    found.append((root / STATE_FOLDER).resolve())
    # Scored results say which cited uris are valid sources of each question: part of a key.
    found.append((root / "results").resolve())
    found += _git_dirs(root)
    found += [Path(p).resolve() for p in extra]
    found += _worktree_twins(root, found, suite)
    unique: dict[Path, None] = {}
    for path in found:
        if path.exists() and path != Path("/"):
            unique.setdefault(path, None)
    return tuple(unique)


def _suites_in(folder: Path) -> list[Path]:
    """Suite folders (holding keys.jsonl or manifest.json) directly in ``folder``."""
    if not folder.is_dir():
        return []
    return [
        sibling.resolve()
        for sibling in folder.iterdir()
        if sibling.is_dir() and any((sibling / n).exists() for n in ("keys.jsonl", "manifest.json"))
    ]


def _worktree_twins(root: Path, masked: list[Path], suite: Path) -> list[Path]:
    """The same paths in the project's other git worktrees: each holds its own copy of the keys.

    A trial run in a worktree of the project could otherwise read the sealed keys (and the
    holdouts, results and cache) of the main checkout, or of any other worktree, by path.
    """
    top = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    listed = subprocess.run(
        ["git", "-C", str(root), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=False,
    )
    if top.returncode != 0 or listed.returncode != 0:
        return []
    here = Path(top.stdout.strip()).resolve()
    others = [
        Path(line.removeprefix("worktree ")).resolve()
        for line in listed.stdout.splitlines()
        if line.startswith("worktree ")
    ]
    twins: list[Path] = []
    for other in others:
        if other == here:
            continue
        for path in masked:
            if path.is_relative_to(here) and path != here:
                twins.append(other / path.relative_to(here))
        if suite.is_relative_to(here):
            twins += _suites_in(other / suite.parent.relative_to(here))
    return twins


def _git_dirs(root: Path) -> list[Path]:
    """The project's own git folders (its history holds the keys): work tree's and common."""
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--absolute-git-dir", "--git-common-dir"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return []
    dirs = []
    for line in proc.stdout.splitlines():
        path = Path(line) if Path(line).is_absolute() else root / line
        dirs.append(path.resolve())
    dot_git = root / ".git"
    if dot_git.exists():
        dirs.append(dot_git.resolve())
    return dirs


def visible_paths(root: Path, argv: Sequence[str]) -> tuple[Path, ...]:
    """Paths under /tmp the harness needs (the project, its cwd, its script): bound back in."""
    import flightdeck

    candidates = [root, Path.cwd(), *(Path(a) for a in argv if os.sep in a)]
    if sys.prefix != sys.base_prefix:
        candidates.append(Path(sys.prefix))
    # Where flightdeck itself is imported from: an editable install's src/ lies outside the
    # virtualenv, and a clone under /tmp would otherwise vanish under the private /tmp.
    candidates.append(Path(flightdeck.__file__).resolve().parents[1])
    found: dict[Path, None] = {}
    for path in candidates:
        try:
            resolved = path.resolve()
        except OSError:
            continue
        if resolved.is_relative_to(_UNDER_TMP) and resolved != _UNDER_TMP and resolved.exists():
            found.setdefault(resolved, None)
    return tuple(found)


def _reachable_masks(policy: SandboxPolicy) -> list[Path]:
    """Masks that exist inside the sandbox, outermost only (a mask inside a mask is moot)."""
    kept: list[Path] = []
    for path in sorted(policy.masked, key=lambda p: len(p.parts)):
        if any(path.is_relative_to(k) for k in kept):
            continue
        if path.is_relative_to(_UNDER_TMP) and not any(
            path.is_relative_to(v) for v in policy.visible
        ):
            continue  # under the private /tmp: not there to begin with
        kept.append(path)
    return kept


def bwrap_argv(
    policy: SandboxPolicy,
    command: Sequence[str],
    *,
    mounts: Sequence[tuple[str, Path]],
    out_dir: Path,
    cwd: Path,
) -> list[str]:
    """The full ``bwrap ... -- command`` for one trial.

    ``mounts`` are ``(name, tree)``: each tree is bound read-only at ``WORKSPACE/name``.
    """
    argv = [policy.bwrap]
    for entry in sorted(os.listdir("/")):
        top = Path("/") / entry
        if entry in ("proc", "dev", "tmp"):
            continue
        if top.is_symlink():
            argv += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            argv += ["--ro-bind", str(top), str(top)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in policy.visible:
        argv += ["--ro-bind", str(path), str(path)]
    for path in _reachable_masks(policy):
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(path)]
    argv += ["--dir", WORKSPACE]
    for name, tree in mounts:
        argv += ["--ro-bind", str(tree), f"{WORKSPACE}/{name}"]
    argv += ["--bind", str(out_dir), OUT, "--remount-ro", "/"]
    argv += ["--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    if policy.network:
        argv.append("--share-net")
    argv += ["--chdir", str(cwd), "--"]
    argv += list(command)
    return argv
