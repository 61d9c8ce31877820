"""The bubblewrap sandbox a harness runs in: the ``bwrap`` command line and its environment.

The sandbox is an allow-list: bubblewrap starts from an empty root, and a trial's harness sees
only what :mod:`flightdeck.arms.sandbox_paths` lists, read-only (the system's runtime, the
needed parts of ``/etc``, the harness's installation, flightdeck's own, paths named on its
command line, folders named with ``--bind``), plus:

- its workspace read-only at :data:`WORKSPACE` (one bind per repository);
- its out folder at :data:`OUT` (result and trace files), the only writable host folder;
- a private, empty, size-limited ``/tmp``, ``$HOME`` (at the host's ``$HOME`` path, so a
  tool's ``--bind ~/.config/tool`` lands where it looks) and ``/dev/shm``;
- no network unless the arm asks for it (``--network`` shares the host's network namespace:
  every service of this machine, loopback included, and the internet; ``--network-allow
  HOST:PORT`` reaches those targets alone, through :mod:`flightdeck.arms.net_relay`); new
  user, pid, ipc, uts and cgroup namespaces, every capability dropped, ``--die-with-parent``;
- the caps of :mod:`flightdeck.arms.limits`, set by ``prlimit`` inside the sandbox;
- only the environment variables :func:`harness_env` names.

Nothing else of the host exists inside: no project root, no other checkout, no ``/var``,
``/run``, ``/srv``, ``/opt``, ``/mnt``, ``/media``, ``/sys``, no host ``/tmp``, so no host unix
socket file either; with the network off, the host's abstract unix sockets (which belong to a
network namespace) are gone too.

Why bubblewrap: it is the unprivileged namespace sandbox that Flatpak and agent CLIs use, a
single Debian package with no daemon, and it sets the whole sandbox up from its arguments,
so what a trial may touch is this one list.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.arms import net_allow, net_relay
from flightdeck.arms import sandbox_paths as paths
from flightdeck.arms.limits import Limits, prlimit_argv
from flightdeck.errors import InputError

WORKSPACE = "/flightdeck/workspace"
OUT = "/flightdeck/out"
FALLBACK_HOME = "/flightdeck/home"
MODES = ("bwrap", "none")
NO_SANDBOX_NOTE = "arm ran without a sandbox"
NETWORK_OFF = "off: its own network namespace (loopback only; no host socket, no internet)"
NETWORK_HOST = (
    "host: shares this machine's network namespace, so every service it offers (loopback "
    "ones included, and abstract unix sockets) and the internet are reachable"
)
# Environment variables every harness gets when set (locale and time zone), besides PATH,
# HOME, TMPDIR and the FLIGHTDECK_* protocol variables; anything else must be named.
LOCALE_ENV = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ")
# Where a private $HOME may not go: over the runtime or the sandbox's own folders.
_NOT_HOME = ("/", *paths.SYSTEM_TOPS, "/etc", "/proc", "/dev", "/tmp", "/flightdeck")


@dataclass(frozen=True)
class Bind:
    """A host path bound read-only into the sandbox at ``dest``; ``origin`` says why."""

    source: Path
    dest: Path
    origin: str  # "harness", "flightdeck", "command line" or "--bind"


@dataclass(frozen=True)
class SandboxPolicy:
    """How an arm's harnesses are confined; ``meta()`` is what the arm's meta records."""

    mode: str = "bwrap"  # "bwrap" or "none"
    network: bool = False  # the host's network namespace, shared
    pass_env: tuple[str, ...] = ()
    binds: tuple[Bind, ...] = ()
    system: tuple[tuple[str, str, str], ...] = ()  # (kind, source, dest) of the runtime
    withheld: tuple[str, ...] = ()  # automatic binds left out: they hold protected data
    home: str = FALLBACK_HOME
    limits: Limits = field(default_factory=Limits)
    bwrap: str = "bwrap"  # the executable, as found on PATH
    version: str | None = None
    prlimit: str = "prlimit"
    network_allow: tuple[net_allow.Target, ...] = ()  # reached through the relay, alone

    @property
    def opens(self) -> bool | list[str]:
        """What the network is: the host's (True), none (False) or the allowed targets."""
        return [str(t) for t in self.network_allow] if self.network_allow else self.network

    @property
    def network_words(self) -> str:
        """The network in a few words, for a trace's header: on, off or the allow-list."""
        if self.network_allow:
            return "allow " + ",".join(str(t) for t in self.network_allow)
        return "on" if self.network else "off"

    def meta(self) -> dict[str, Any]:
        if self.mode == "none":
            return {
                "mode": "none",
                "note": NO_SANDBOX_NOTE,
                "network": True,
                "pass_env": sorted(self.pass_env),
                "limits": self.limits.meta(sandboxed=False),
            }
        bound: dict[str, list[str]] = {}
        for bind in self.binds:
            shown = str(bind.dest)
            if bind.source != bind.dest:
                shown += f" (from {bind.source})"
            bound.setdefault(bind.origin, []).append(shown)
        return {
            "mode": "bwrap",
            "bwrap_version": self.version,
            "filesystem": "allow-list: only the paths below exist inside",
            "network": self.network,
            "network_scope": NETWORK_HOST if self.network else NETWORK_OFF,
            **self._allow_meta(),
            "pass_env": sorted(self.pass_env),
            "runtime": sorted(dest for _, _, dest in self.system),
            "bound": {origin: sorted(found) for origin, found in sorted(bound.items())},
            "bind": sorted(str(b.dest) for b in self.binds if b.origin == "--bind"),
            "withheld": sorted(self.withheld),
            "workspace": f"{WORKSPACE} (read-only)",
            "out": f"{OUT} (read-write)",
            "private": ["/tmp", self.home, "/dev/shm"],
            "limits": self.limits.meta(sandboxed=True),
        }

    def _allow_meta(self) -> dict[str, Any]:
        if not self.network_allow:
            return {}
        targets = self.network_allow
        return {
            "network_allow": [str(t) for t in targets],
            "network_scope": net_allow.scope(targets),
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


def require_prlimit(path_env: str) -> str:
    """util-linux's ``prlimit``, which sets a trial's caps; an error says how to get it."""
    found = shutil.which("prlimit", path=path_env) or shutil.which("prlimit")
    if found is None:
        raise InputError(
            "--max-output-mb",
            None,
            "prlimit is not installed; it sets each trial's output, memory and process caps "
            "(apt-get install util-linux)",
        )
    return found


@dataclass(frozen=True)
class PolicyRequest:
    """What an arm asks of its sandbox; a built-in arm may widen ``network`` or ``pass_env``."""

    mode: str
    network: bool
    pass_env: tuple[str, ...]
    bind: tuple[Path, ...]
    limits: Limits
    network_allow: tuple[str, ...] = ()  # HOST:PORT targets, as the operator wrote them


def policy_for(
    request: PolicyRequest,
    *,
    root: Path,
    suite_dir: Path,
    repos: list[Path],
    holdouts: Path,
    argv: Sequence[str],
    path: str,
    cwd: Path,
) -> SandboxPolicy:
    """An arm's sandbox: bwrap found and tried once, and what it binds in."""
    if request.mode not in MODES:
        raise InputError("--sandbox", None, f"{request.mode!r} is not a sandbox; use bwrap or none")
    names = check_env_names(request.pass_env)
    limits = request.limits.check()
    targets = net_allow.check_allow(request.network_allow, request.network, request.mode)
    prlimit = require_prlimit(path)
    if request.mode == "none":
        return SandboxPolicy("none", True, names, limits=limits, prlimit=prlimit)
    status = require_bwrap(path)
    assert status.path is not None
    if targets:
        net_relay.require_relay(status.path)
    protected = paths.protected_paths(
        root=root, suite_dir=suite_dir, repos=repos, holdouts=holdouts
    )
    binds, withheld = _binds(request.bind, argv, path, cwd, protected)
    return SandboxPolicy(
        "bwrap",
        request.network,
        names,
        binds,
        tuple(paths.system_binds()),
        withheld,
        private_home(os.environ.get("HOME", "")),
        limits,
        status.path,
        status.version,
        prlimit,
        targets,
    )


def _binds(
    named: Iterable[Path], argv: Sequence[str], path: str, cwd: Path, protected: Sequence[Path]
) -> tuple[tuple[Bind, ...], tuple[str, ...]]:
    """The binds of an arm: ``--bind`` ones checked (an error), automatic ones filtered."""
    found: list[Bind] = []
    for folder in named:
        absolute = Path(os.path.abspath(folder))
        if not absolute.exists():
            raise InputError("--bind", None, f"{folder}: no such file or folder; check the path")
        real = absolute.resolve()
        guarded = paths.overlaps(real, protected)
        if guarded is not None:
            raise InputError(
                "--bind",
                None,
                f"{folder} holds or lies in {guarded}, which a score depends on; bind a "
                "folder that does not",
            )
        found.append(Bind(real, absolute, "--bind"))
    withheld: list[str] = []
    automatic = [(p, "harness") for p in paths.install_paths(argv[0], path)]
    automatic += [(p, "flightdeck") for p in paths.flightdeck_paths()]
    automatic += [(p, "command line") for p in paths.command_line_paths(argv, cwd)]
    for named_path, origin in automatic:
        if named_path.is_symlink() or not named_path.exists():
            continue  # a link is recreated by its chain's last hop's bind; see bwrap_argv
        real = named_path.resolve()
        if paths.overlaps(real, protected) is not None:
            withheld.append(str(named_path))
            continue
        found.append(Bind(real, named_path, origin))
    links = [p for p, _ in automatic if p.is_symlink()]
    found += [Bind(p, p, "link") for p in links]
    unique: dict[Path, Bind] = {}
    for bind in found:
        unique.setdefault(bind.dest, bind)
    return tuple(unique.values()), tuple(dict.fromkeys(withheld))


def private_home(home: str) -> str:
    """Where the private, empty $HOME goes: the host's $HOME path, unless that is unusable."""
    if not home or not os.path.isabs(home):
        return FALLBACK_HOME
    normal = Path(os.path.normpath(home))
    if any(normal == Path(top) or normal.is_relative_to(top) for top in _NOT_HOME[1:]):
        return FALLBACK_HOME
    return FALLBACK_HOME if normal == Path("/") else str(normal)


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
    policy: SandboxPolicy, *, path: str, protocol: Mapping[str, str], home: str, tmp: str
) -> dict[str, str]:
    """The harness's whole environment: PATH, HOME, TMPDIR, locale, protocol, named ones."""
    env = {"PATH": path, "HOME": home, "TMPDIR": tmp}
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


def bwrap_argv(
    policy: SandboxPolicy,
    command: Sequence[str],
    *,
    mounts: Sequence[tuple[str, Path]],
    out_dir: Path,
    cwd: Path,
) -> list[str]:
    """The full ``bwrap ... -- prlimit ... -- command`` for one trial.

    ``mounts`` are ``(name, tree)``: each tree is bound read-only at ``WORKSPACE/name``.
    """
    etc = out_dir.parent / "net"  # the relay's hosts, nsswitch.conf and log, outside
    relay = net_relay.relay_argv(policy.network_allow, etc) if policy.network_allow else []
    argv = [*relay, policy.bwrap, "--unshare-all"]
    if policy.network or relay:
        argv.append("--share-net")  # the host's, or the relay's own namespace
    argv += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    for kind, source, dest in policy.system:
        argv += ["--symlink", source, dest] if kind == "link" else ["--ro-bind", source, dest]
    if relay:
        argv += net_relay.etc_binds(etc)
    size = str(policy.limits.tmp_mb << 20)
    argv += ["--proc", "/proc", *paths.proc_covers(), "--dev", "/dev", "--size", size]
    argv += ["--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--size", size, "--perms", "1777"]
    argv += ["--tmpfs", "/tmp", "--size", size, "--perms", "0700", "--tmpfs", policy.home]
    argv += ["--dir", WORKSPACE]
    for name, tree in mounts:
        argv += ["--ro-bind", str(tree), f"{WORKSPACE}/{name}"]
    argv += ["--bind", str(out_dir), OUT]
    bound: list[Path] = [Path(p) for p in paths.SYSTEM_TOPS]
    for bind in sorted(policy.binds, key=lambda b: (len(b.dest.parts), str(b.dest))):
        if bind.source == bind.dest and paths.covered(bind.dest, bound):
            continue  # inside a folder bound already, at its own path
        if bind.origin == "link":
            argv += ["--symlink", os.readlink(bind.dest), str(bind.dest)]
            continue
        argv += ["--ro-bind", str(bind.source), str(bind.dest)]
        if bind.source == bind.dest:
            bound.append(bind.dest)
    if not paths.covered(cwd, bound):
        argv += ["--dir", str(cwd)]
    argv += ["--remount-ro", "/", "--chdir", str(cwd), "--"]
    argv += prlimit_argv(policy.prlimit, policy.limits, processes=True)
    argv += list(command)
    return argv
