"""What a sandboxed harness may see: the allow-list of host paths, and what may never be bound.

The sandbox starts from an empty root and binds in, read-only, only:

- the system's runtime: :data:`SYSTEM_TOPS` (``/usr``, ``/bin``, ``/lib*``, ``/sbin``) and the
  parts of ``/etc`` a program needs (:data:`ETC_ENTRIES`: name service, resolver, certificates,
  dynamic linker, time zone, alternatives), never ``/etc/shadow``;
- the harness's installation (:func:`install_paths`): its executable as found on PATH, each
  symlink on the way to it and, for an executable in ``<prefix>/bin``, that prefix (a
  virtualenv and the interpreter it was made from); for a script, its ``#!`` interpreter too;
- flightdeck's own interpreter and package (:func:`flightdeck_paths`): the harness's PATH
  starts with it, and the built-in agents are ``python -m flightdeck ...``;
- paths named on the harness command line, and folders the operator names with ``--bind``.

:func:`protected_paths` lists what a score depends on (suites and their keys, repositories and
their ``.git``, holdouts, the cache, results, reports, runs, traces, the project's git folders
and their twins in other worktrees). A bind that holds or lies in one of them is refused
(``--bind``) or left out (anything automatic), so no allow-list entry can reopen them.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from flightdeck.project.names import CHECKOUT_MARKS
from flightdeck.project.paths import ProjectPaths, suites_in

SYSTEM_TOPS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "crypto-policies",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "pki",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
    "timezone",
)
_ETC_GLOBS = ("python3*",)  # Debian's system Python reads its sitecustomize from /etc
# bubblewrap binds /proc/irq and /proc/bus read-only over its new /proc, and means to bind
# /proc/sys too, but skips a folder it cannot open for writing, and a sysctl folder refuses
# that even to root: every sysctl file stayed writable to a harness whose uid is the host's
# root (CI), kernel.core_pattern included, which runs a program as root on the host. These
# are bound read-only again from the host's /proc (the same files; net/ is per namespace).
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/pressure", "/proc/fs")


def covered(path: Path, folders: Iterable[Path]) -> bool:
    """Whether ``path`` is one of ``folders`` or lies inside one."""
    return any(path == f or path.is_relative_to(f) for f in folders)


def overlaps(path: Path, protected: Iterable[Path]) -> Path | None:
    """The first protected path that ``path`` holds or lies in, else None."""
    for guarded in protected:
        if path == guarded or path.is_relative_to(guarded) or guarded.is_relative_to(path):
            return guarded
    return None


def proc_covers() -> list[str]:
    """bwrap arguments that make :data:`PROC_READ_ONLY` read-only over the sandbox's /proc."""
    argv: list[str] = []
    for path in PROC_READ_ONLY:
        argv += ["--ro-bind-try", path, path]
    return argv


def system_binds() -> list[tuple[str, str, str]]:
    """``(kind, source, dest)`` for the runtime: ``ro`` binds, or ``link`` (symlink target)."""
    found: list[tuple[str, str, str]] = []
    for top in SYSTEM_TOPS:
        _add_system(Path(top), found)
    etc = Path("/etc")
    names = list(ETC_ENTRIES)
    for pattern in _ETC_GLOBS:
        names += sorted(p.name for p in etc.glob(pattern))
    for name in names:
        _add_system(etc / name, found)
    return found


def _add_system(path: Path, found: list[tuple[str, str, str]]) -> None:
    if path.is_symlink():
        target = os.readlink(path)
        resolved = path.resolve()
        # A link into the runtime stays a link; one elsewhere (resolv.conf -> /run/...) is
        # bound as the file it names, so the target's folder is not needed.
        if covered(resolved, map(Path, SYSTEM_TOPS)) or not resolved.exists():
            found.append(("link", target, str(path)))
            return
        found.append(("ro", str(resolved), str(path)))
    elif path.exists():
        found.append(("ro", str(path), str(path)))


def _prefix_of(executable: Path) -> list[Path]:
    """The installation an executable in ``<prefix>/bin`` belongs to, with a venv's base."""
    if executable.parent.name not in ("bin", "sbin"):
        return []
    prefix = executable.parent.parent
    if prefix == Path("/") or covered(prefix, map(Path, SYSTEM_TOPS)):
        return []
    if not _is_installation(prefix):
        return []  # a bare bin folder (~/bin, even beside a ~/lib): the executable alone
    found = [prefix]
    config = prefix / "pyvenv.cfg"
    if config.is_file():
        for line in config.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                home = Path(value.strip()).resolve()
                found += _prefix_of(home / "python")
    return found


# What an installation prefix holds: a virtualenv's config, an interpreter's library folder,
# node's packages or shared libraries. A folder with none (a $HOME with a ~/lib) is not one.
_INSTALL_MARKS = ("pyvenv.cfg", "lib*/python*", "lib/node_modules", "lib*/*.so", "lib*/*.so.*")
# A folder holding one of names.CHECKOUT_MARKS, or whose child does, holds a checkout (a
# teammate's clone, a CI workspace), never an installation: binding it would show its keys.


def _is_installation(prefix: Path) -> bool:
    """Whether ``prefix`` (of ``prefix/bin/x``) may be bound whole as ``x``'s installation.

    Never the host's ``$HOME`` or a folder holding it, never one without an installation's
    marks, never one that holds a checkout at its top or one level down.
    """
    homes = {os.environ.get("HOME", ""), pwd.getpwuid(os.getuid()).pw_dir}
    for home in filter(os.path.isabs, homes):
        if covered(Path(home).resolve(), [prefix]):
            return False
    if not any(next(prefix.glob(mark), None) is not None for mark in _INSTALL_MARKS):
        return False
    try:
        children = [prefix, *(c for c in prefix.iterdir() if c.is_dir() and not c.is_symlink())]
    except OSError:
        return False
    return not any((c / mark).exists() for c in children for mark in CHECKOUT_MARKS)


def _chain(found: Path) -> list[Path]:
    """``found`` and every symlink hop from it to the file it names."""
    hops = [found]
    current = found
    for _ in range(40):
        if not current.is_symlink():
            break
        target = Path(os.readlink(current))
        current = target if target.is_absolute() else current.parent / target
        current = Path(os.path.normpath(current))
        hops.append(current)
    real = found.resolve()
    if real not in hops:
        hops.append(real)
    return hops


def _interpreter(script: Path, path: str) -> Path | None:
    """The ``#!`` interpreter of a script (``/usr/bin/env NAME`` looked up on PATH)."""
    import shutil

    try:
        with script.open("rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        names = [w for w in words[1:] if not w.startswith("-")]
        found = shutil.which(names[0], path=path) if names else None
        return Path(found) if found else None
    return Path(words[0])


def install_paths(executable: str, path: str) -> list[Path]:
    """What running ``executable`` needs besides the runtime: its chain, prefix, interpreter."""
    import shutil

    found: list[Path] = []
    todo = [executable]
    for _ in range(3):  # the executable, its interpreter, that one's (env -> node -> ...)
        if not todo:
            break
        name = todo.pop()
        located = shutil.which(name, path=path)
        if located is None:
            break
        hops = _chain(Path(os.path.abspath(located)))
        found += hops
        real = hops[-1]
        found += _prefix_of(real)
        interpreter = _interpreter(real, path)
        if interpreter is not None:
            todo.append(str(interpreter))
    return found


def flightdeck_paths() -> list[Path]:
    """flightdeck's interpreter installation and package: the harness's PATH starts there."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found: list[Path] = []
    for prefix in sorted(Path(p).resolve() for p in prefixes):
        if covered(prefix, map(Path, SYSTEM_TOPS)) or _is_installation(prefix):
            found.append(prefix)
        else:  # a prefix that is $HOME or holds a checkout: the interpreter's own files alone
            found += _interpreter_files(prefix)
    found += _chain(Path(sys.executable))
    found.append(Path(__file__).resolve().parents[1])  # the flightdeck package folder
    return found


def _interpreter_files(prefix: Path) -> list[Path]:
    """What this Python needs of ``prefix``: its library folder, libpython, a venv's config."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = [
        prefix / lib / version for lib in ("lib", "lib64") if (prefix / lib / version).is_dir()
    ]
    found += sorted(p for lib in ("lib", "lib64") for p in (prefix / lib).glob("libpython*"))
    return found + [p for p in (prefix / "pyvenv.cfg",) if p.is_file()]


def command_line_paths(argv: Sequence[str], cwd: Path) -> list[Path]:
    """Paths named on the harness command line (``PATH``, ``--opt=PATH``) that exist."""
    found: list[Path] = []
    for arg in argv[1:]:
        for word in (arg, arg.partition("=")[2]):
            if os.sep not in word:
                continue
            candidate = Path(os.path.normpath(cwd / word))
            try:
                exists = candidate.exists()
            except OSError:
                exists = False
            if exists:
                found.append(candidate)
                break
    return found


def protected_paths(
    *,
    root: Path,
    suite_dir: Path,
    repos: Iterable[Path],
    holdouts: Path | None,
) -> tuple[Path, ...]:
    """What a score depends on: no bind may hold or lie in any of these (existing or not).

    The project's own (:meth:`ProjectPaths.protected`), then its git folders and the same
    paths in the project's other git worktrees.
    """
    suite = suite_dir.resolve()
    found = ProjectPaths(root, holdouts).protected(suite_dir, repos)
    project = root.resolve()
    found += _git_dirs(project)
    found += _worktree_twins(project, found, suite)
    unique: dict[Path, None] = {}
    for path in found:
        if path != Path("/"):
            unique.setdefault(path, None)
    return tuple(unique)


def _git(root: Path, *args: str) -> list[str] | None:
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    return proc.stdout.splitlines() if proc.returncode == 0 else None


def _worktree_twins(root: Path, guarded: list[Path], suite: Path) -> list[Path]:
    """The same paths in the project's other git worktrees: each holds its own keys."""
    top = _git(root, "rev-parse", "--show-toplevel")
    listed = _git(root, "worktree", "list", "--porcelain")
    if not top or listed is None:
        return []
    here = Path(top[0]).resolve()
    others = [Path(line[9:]).resolve() for line in listed if line.startswith("worktree ")]
    twins: list[Path] = []
    for other in others:
        if other == here:
            continue
        for path in guarded:
            if path.is_relative_to(here) and path != here:
                twins.append(other / path.relative_to(here))
        if suite.is_relative_to(here):
            twins += suites_in(other / suite.parent.relative_to(here))
    return twins


def _git_dirs(root: Path) -> list[Path]:
    """The project's own git folders (its history holds the keys): work tree's and common."""
    lines = _git(root, "rev-parse", "--absolute-git-dir", "--git-common-dir") or []
    dirs = [(Path(line) if Path(line).is_absolute() else root / line).resolve() for line in lines]
    if (root / ".git").exists():
        dirs.append((root / ".git").resolve())
    return dirs
