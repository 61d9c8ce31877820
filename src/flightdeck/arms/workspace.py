"""Read-only workspaces: what a trial may read, materialised from git, built once, shared.

A question's workspace holds the files of its ``as_of`` commits that its ``scope`` allows,
laid out as ``<repo>/<path>``: no ``.git``, no suite file, nothing newer. One tree is built
per (repository, commit, scope) with a single ``git cat-file --batch`` process; a question
over several repositories gets a folder of hard links to those trees. Everything lives in
one cache folder that :meth:`WorkspaceCache.close` removes.

Files are made read-only (0444, or 0555 when git records them executable) and so are the
folders (0555), so a harness cannot change what the next trial reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from flightdeck.project import SEALED_FILES
from flightdeck.suite.records import CANARY_PREFIX, Question
from flightdeck.suite.repos import RepoSet, scope_filter

SUITE_FILES = frozenset(SEALED_FILES)  # a suite folder's files: never in a workspace
_CANARY = CANARY_PREFIX.encode()


@dataclass
class BuiltTree:
    """One materialised (repository, commit, scope): where it is and what was left out."""

    path: Path  # holds <repo>/<path> files
    files: int
    bytes: int
    excluded: list[str] = field(default_factory=list)  # "<repo>/<path>: why"


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def suite_folders(paths: Iterable[str]) -> set[str]:
    """Folders (``""`` for the top) that hold a suite file: nothing under them is readable."""
    folders = set()
    for path in paths:
        folder, _, name = path.rpartition("/")
        if name in SUITE_FILES:
            folders.add(folder)
    return folders


def _under(path: str, folders: set[str]) -> bool:
    if "" in folders:
        return True
    return any(path.startswith(folder + "/") for folder in folders)


class WorkspaceCache:
    """Builds and hands out read-only workspaces; thread-safe; one per run.

    File modes do not stop a harness running as root (or one that chmods its own files), so
    :meth:`verify` compares a workspace with how it was built; a changed one is dropped and
    the next trial that needs it gets a fresh copy.
    """

    def __init__(self, repos: RepoSet, parent: Path) -> None:
        self._repos = repos
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(parent)
        self.root = Path(tempfile.mkdtemp(dir=parent, prefix=f"run-{os.getpid()}-"))
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._trees: dict[str, BuiltTree] = {}
        self._workspaces: dict[str, Path] = {}
        self._fingerprints: dict[Path, dict[str, tuple[int, ...]]] = {}
        self._serial = itertools.count()

    def _lock_for(self, key: str) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(key, threading.Lock())

    def _target(self, kind: str, key: str) -> Path:
        with self._lock:
            return self.root / kind / f"{key}-{next(self._serial)}"

    def workspace(self, question: Question) -> Path:
        """The folder for this question's trials, built on first use."""
        scope, parts = _parts(question)
        trees = [self.tree(repo, commit, scope) for repo, commit in parts]
        if len(trees) == 1:
            return trees[0].path
        key = _key("ws", *scope, *(f"{r}@{c}" for r, c in parts))
        with self._lock_for(key):
            if key not in self._workspaces:
                target = self._target("ws", key)
                _link_trees([t.path for t in trees], target)
                self._remember(target)
                self._workspaces[key] = target
            return self._workspaces[key]

    def tree(self, repo: str, commit: str, scope: tuple[str, ...]) -> BuiltTree:
        """The tree of one repository at one commit, filtered by scope."""
        key = _key("tree", repo, commit, *scope)
        with self._lock_for(key):
            if key not in self._trees:
                built = self._build(repo, commit, scope, self._target("trees", key))
                self._remember(built.path)
                self._trees[key] = built
            return self._trees[key]

    def trees(self) -> list[BuiltTree]:
        with self._lock:
            return list(self._trees.values())

    def _remember(self, path: Path) -> None:
        fingerprint = _fingerprint(path)
        with self._lock:
            self._fingerprints[path] = fingerprint

    def verify(self, question: Question, path: Path) -> str | None:
        """None when ``path`` is as built; else the first changed entry, and it is dropped."""
        with self._lock:
            expected = self._fingerprints.get(path)
        if expected is None:
            return None
        actual = _fingerprint(path)
        if actual == expected:
            return None
        changed = sorted(
            set(actual) ^ set(expected)
            | {name for name in set(actual) & set(expected) if actual[name] != expected[name]}
        )
        scope, parts = _parts(question)
        with self._lock:  # later trials get fresh copies; running ones keep their paths
            self._fingerprints.pop(path, None)
            self._workspaces.pop(_key("ws", *scope, *(f"{r}@{c}" for r, c in parts)), None)
            for repo, commit in parts:
                self._trees.pop(_key("tree", repo, commit, *scope), None)
        return changed[0] or "."

    def _build(self, repo: str, commit: str, scope: tuple[str, ...], target: Path) -> BuiltTree:
        repository = self._repos.get(repo)
        allowed = scope_filter(scope)
        listing = repository.list_files(commit)
        hidden = suite_folders(path for path, _ in listing)
        built = BuiltTree(target, 0, 0)
        staging = target.with_name(target.name + ".tmp")
        base = staging / repo
        base.mkdir(parents=True)
        made_dirs = {base}
        with repository.blobs() as reader:
            for path, oid in listing:
                if not allowed(f"{repo}/{path}"):
                    continue
                if _under(path, hidden) or path.rpartition("/")[2] in SUITE_FILES:
                    built.excluded.append(f"{repo}/{path}: inside a suite folder")
                    continue
                data = reader.read(oid)
                if data is None:
                    continue
                if _CANARY in data:
                    built.excluded.append(f"{repo}/{path}: holds a sealed-key canary")
                    continue
                out = base / path
                if out.parent not in made_dirs:
                    out.parent.mkdir(parents=True, exist_ok=True)
                    made_dirs.add(out.parent)
                out.write_bytes(data)
                built.files += 1
                built.bytes += len(data)
        _make_read_only(staging)
        os.replace(staging, target)
        return built

    def close(self) -> None:
        """Remove every workspace this cache built."""
        remove_tree(self.root)


def _parts(question: Question) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """A question's normalised scope and its (repository, commit) pairs, sorted."""
    scope = tuple(sorted(set(question.scope)))
    return scope, [(repo, question.as_of[repo]) for repo in sorted(question.as_of)]


def _fingerprint(top: Path) -> dict[str, tuple[int, ...]]:
    """Every entry under ``top`` -> (inode, mode, size, mtime): what a write or chmod changes."""
    found: dict[str, tuple[int, ...]] = {}
    pending = [("", str(top))]
    while pending:
        prefix, folder = pending.pop()
        info = os.stat(folder)
        found[prefix] = (info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns)
        with os.scandir(folder) as entries:
            for entry in entries:
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((name + "/", entry.path))
                else:
                    st = entry.stat(follow_symlinks=False)
                    found[name] = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns)
    return found


def _link_trees(sources: list[Path], target: Path) -> None:
    """Merge several ``<repo>/...`` trees into ``target`` with hard links (copies if need be)."""
    staging = target.with_name(target.name + ".tmp")
    for source in sources:
        for folder, dirs, files in os.walk(source):
            dirs.sort()
            relative = Path(folder).relative_to(source)
            (staging / relative).mkdir(parents=True, exist_ok=True)
            for name in files:
                src, dst = Path(folder) / name, staging / relative / name
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copy2(src, dst)
    _make_read_only(staging)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staging, target)


def _make_read_only(top: Path) -> None:
    for folder, _dirs, files in os.walk(top, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            mode = os.stat(path).st_mode
            os.chmod(path, 0o555 if mode & stat.S_IXUSR else 0o444)
        os.chmod(folder, 0o555)


def remove_tree(top: Path) -> None:
    """``rm -rf`` for a tree whose folders were made read-only."""
    if not top.exists():
        return
    for folder, _dirs, _files in os.walk(top):
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o755)
    shutil.rmtree(top, ignore_errors=True)


def remove_stale(parent: Path) -> None:
    """Remove workspaces left by runs that were killed (their process no longer exists)."""
    for entry in parent.glob("run-*-*"):
        try:
            pid = int(entry.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not _alive(pid):
            remove_tree(entry)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
