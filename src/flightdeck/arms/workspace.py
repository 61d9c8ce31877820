"""Read-only workspaces: what a trial may read, as trees of hard links into a blob store.

A question's workspace holds the files of its ``as_of`` commits that its ``scope`` allows,
laid out as ``<repo>/<path>``: no ``.git``, no suite file, no symlink or submodule, no file
holding a sealed-key canary, nothing newer. One tree is made per (repository, commit,
scope), of hard links into :class:`~flightdeck.arms.blobstore.BlobStore`, so a blob costs
its bytes once however many commits share it. Which files a tree holds, and the order the
trials run in, is :mod:`flightdeck.arms.workspace_plan`'s to decide.

The cache knows the run's plan (:meth:`WorkspaceCache.plan`): a tree that no pending trial
needs is removed at once, or, when a tree of the same repository and scope is still to be
made, turned into it by relinking only the files that differ between the two commits. The
cache stays under a disk cap: past it, unneeded trees and unlinked blobs go first, then a
new tree waits for a running trial to give one back.

Inside the sandbox the trees are mounted read-only. Without one (``--sandbox none``) file
modes are all that protect them, which root ignores: :meth:`WorkspaceCache.verify` then
compares a workspace with how it was built, and a changed one (and every tree sharing a
changed blob) is dropped.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from flightdeck.arms.blobstore import BlobStore, disk_size
from flightdeck.arms.trees import (
    fingerprint,
    link_files,
    make_read_only,
    merge_trees,
    relink,
    remove_stale,
    remove_tree,
)
from flightdeck.arms.workspace_plan import Listing, TreeKey, list_tree, tree_disk, tree_keys
from flightdeck.suite.records import Question
from flightdeck.suite.repos import RepoSet

DEFAULT_CAP_MB = 4096


@dataclass(frozen=True)
class Workspace:
    """What one trial reads: a host folder per repository, or one folder of them all."""

    mounts: tuple[tuple[str, Path], ...]  # repository name -> folder of its files
    path: Path | None  # folder holding <repo>/... (None in the sandbox: it mounts each)
    files: int
    omitted: tuple[tuple[str, str], ...]  # (<repo>/<path>, why)
    label: str
    trees: tuple[BuiltTree, ...] = ()


@dataclass
class BuiltTree:
    """One (repository, commit, scope) made of links: where, which files, what was left out."""

    key: TreeKey
    path: Path  # holds <repo>/<path>
    files: dict[str, str]  # path -> store name
    omitted: list[tuple[str, str]]
    disk: int
    users: int = 0
    stale: bool = False
    fingerprint: dict[str, tuple[int, ...]] = field(default_factory=dict)


class WorkspaceCache:
    """Builds, hands out and removes workspaces for one run; thread-safe.

    ``checked`` (no sandbox) keeps a fingerprint of every tree and makes folders read-only.
    """

    def __init__(
        self,
        repos: RepoSet,
        parent: Path,
        *,
        cap_bytes: int = DEFAULT_CAP_MB << 20,
        checked: bool = True,
    ) -> None:
        self._repos = repos
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(parent)
        self.root = Path(tempfile.mkdtemp(dir=parent, prefix=f"run-{os.getpid()}-"))
        self.store = BlobStore(self.root / "blobs", read_only=checked)
        self.cap = cap_bytes
        self.checked = checked
        self.peak = 0
        self._cond = threading.Condition()
        self._build_lock = threading.Lock()
        self._trees: dict[TreeKey, BuiltTree] = {}
        self._free: list[BuiltTree] = []
        self._pending: Counter[TreeKey] = Counter()
        self._listings: dict[tuple[str, str], list[tuple[str, str, str, int]]] = {}
        self._serial = itertools.count()
        self._active = 0  # workspaces handed out whole and not yet released
        self._merged: dict[Path, dict[str, tuple[int, ...]]] = {}
        self._held: list[tuple[tuple[TreeKey, ...], Workspace]] = []
        self.omissions: dict[tuple[str, str], str] = {}  # (commit, uri) -> why, for the run

    # --- the plan ---------------------------------------------------------------------

    def plan(self, questions: Iterable[Question]) -> None:
        """Count the trials that will need each tree, so a tree goes once none do."""
        with self._cond:
            for question in questions:
                for key in tree_keys(question):
                    self._pending[key] += 1

    def acquire(self, question: Question) -> Workspace:
        """The question's workspace, built or reused; :meth:`release` it after the trial."""
        keys = tree_keys(question)
        trees: list[BuiltTree] = []
        try:
            for key in keys:
                trees.append(self._tree(key))
        except BaseException:
            for tree in trees:
                self._release_tree(tree, count=False)
            raise
        with self._cond:
            self._active += 1
        omitted = tuple(o for t in trees for o in t.omitted)
        mounts = tuple((t.key[0], t.path / t.key[0]) for t in trees)
        label = ", ".join(f"{r}@{c[:12]}" for r, c, _ in keys)
        scope = keys[0][2]
        label += f"; scope {' '.join(scope)}" if scope else "; whole repositories"
        files = sum(len(t.files) for t in trees)
        path = trees[0].path if len(trees) == 1 else None
        if path is None and self.checked:
            path = self._merge([t.path for t in trees])
        return Workspace(mounts, path, files, omitted, label, tuple(trees))

    def release(self, workspace: Workspace) -> None:
        """The trial is over: trees no pending trial needs are reused or removed."""
        for tree in workspace.trees:
            self._release_tree(tree)
        with self._cond:  # after its trees are gone, so a waiting build sees the room
            self._active -= 1
            self._cond.notify_all()
        if workspace.path is not None and len(workspace.trees) > 1:
            with self._cond:
                self._merged.pop(workspace.path, None)
            remove_tree(workspace.path)

    def workspace(self, question: Question) -> Path:
        """The host folder of a question's workspace, held until :meth:`close` (for tests)."""
        keys = tuple(tree_keys(question))
        held = next((w for k, w in self._held if k == keys and not _stale(w)), None)
        if held is None:
            held = self.acquire(question)
            if held.path is None:
                merged = self._merge([t.path for t in held.trees])
                held = Workspace(
                    held.mounts, merged, held.files, held.omitted, held.label, held.trees
                )
            self._held.append((keys, held))
        assert held.path is not None
        return held.path

    def trees(self) -> list[BuiltTree]:
        with self._cond:
            return list(self._trees.values())

    @property
    def disk(self) -> int:
        """Bytes the cache holds on disk now (blobs, and the folders of every tree)."""
        with self._cond:
            return (
                self.store.disk
                + sum(t.disk for t in self._trees.values())
                + sum(t.disk for t in self._free)
            )

    # --- trees ------------------------------------------------------------------------

    def _tree(self, key: TreeKey) -> BuiltTree:
        with self._build_lock:
            with self._cond:
                tree = self._trees.get(key)
                if tree is not None and not tree.stale:
                    tree.users += 1
                    return tree
            listing = self._listing(key)

            def new_blobs() -> int:  # what the store must still write for this tree
                return sum(
                    disk_size(size)
                    for path, (oid, size) in listing.files.items()
                    if not self.store.has(BlobStore.name(oid, listing.executable[path]))
                )

            donor = self._room(key, tree_disk(listing.files), new_blobs)
            repository = self._repos.get(key[0])
            self.store.ensure(
                repository, ((oid, listing.executable[p]) for p, (oid, _) in listing.files.items())
            )
            linked: dict[str, str] = {}
            omitted = list(listing.omitted)
            for path, (oid, _size) in listing.files.items():
                why = self.store.refused(oid)
                if why is None:
                    linked[path] = BlobStore.name(oid, listing.executable[path])
                else:
                    omitted.append((f"{key[0]}/{path}", why))
            omitted.sort()
            if donor is not None:
                relink(
                    donor.path,
                    base=donor.path / donor.key[0],
                    old=donor.files,
                    files=linked,
                    store=self.store,
                    checked=self.checked,
                )
                donor.key, donor.files, donor.omitted = key, linked, omitted
                donor.disk = tree_disk(linked)
                tree = donor
            else:
                top = self.root / "trees" / str(next(self._serial))
                link_files(top / key[0], linked, self.store)
                tree = BuiltTree(key, top, linked, omitted, tree_disk(linked))
            if self.checked:
                make_read_only(tree.path)
                tree.fingerprint = fingerprint(tree.path)
            with self._cond:
                tree.users = 1
                self._trees[key] = tree
                if not any(  # no other pending tree lists this commit: forget its listing
                    n > 0 and k[:2] == key[:2] and k not in self._trees
                    for k, n in self._pending.items()
                ):
                    self._listings.pop(key[:2], None)
                for uri, why in tree.omitted:
                    self.omissions[(key[1], uri)] = why
                self.peak = max(self.peak, self._disk_locked())
            return tree

    def _disk_locked(self) -> int:
        trees = itertools.chain(self._trees.values(), self._free)
        return self.store.disk + sum(t.disk for t in trees)

    def _listing(self, key: TreeKey) -> Listing:
        """The files a tree would link, what it leaves out (and why), which are executable."""
        repo, commit, scope = key
        entries = self._listings.get((repo, commit))
        if entries is None:
            entries = self._repos.get(repo).list_entries(commit)
            self._listings[(repo, commit)] = entries
        return list_tree(repo, scope, entries)

    def _room(self, key: TreeKey, folders: int, blobs: Callable[[], int]) -> BuiltTree | None:
        """A free tree to turn into this one, or None once a new one fits under the cap.

        Past the cap: drop free trees and blobs no tree links, then wait for a running trial
        to give a tree back; with nothing running, build anyway (one tree over the cap is
        better than no trial).
        """
        with self._cond:
            while True:
                donor = next(
                    (t for t in self._free if t.key[0] == key[0] and t.key[2] == key[2]), None
                )
                if donor is not None:
                    self._free.remove(donor)
                    return donor
                if self._disk_locked() + folders + blobs() <= self.cap:
                    return None
                self._drop_unneeded_locked()
                self.store.evict_unlinked()
                if self._disk_locked() + folders + blobs() <= self.cap:
                    return None
                if not self._active:  # only a trial that holds its whole workspace
                    return None  # will give one back; a half-acquired one may wait on us
                self._cond.wait()

    def _drop_unneeded_locked(self) -> None:
        for tree in self._free:
            remove_tree(tree.path)
        self._free.clear()

    def _release_tree(self, tree: BuiltTree, *, count: bool = True) -> None:
        key = tree.key
        doomed = False
        with self._cond:
            tree.users -= 1
            if count and self._pending[key] > 0:
                self._pending[key] -= 1
            current = self._trees.get(key) is tree
            if tree.users > 0 or (current and self._pending[key] > 0 and not tree.stale):
                return
            if current:
                del self._trees[key]
            wanted = not tree.stale and any(
                n > 0 and k[0] == key[0] and k[2] == key[2] and k not in self._trees
                for k, n in self._pending.items()
            )
            if wanted:
                self._free.append(tree)
            else:
                doomed = True
            self._cond.notify_all()
        if doomed:
            remove_tree(tree.path)

    def _merge(self, sources: list[Path]) -> Path:
        target = self.root / "merged" / str(next(self._serial))
        merge_trees(sources, target)
        seen = fingerprint(target)
        with self._cond:
            self._merged[target] = seen
        return target

    # --- without a sandbox: did the harness change its workspace? ----------------------

    def verify(self, question: Question, workspace: Workspace) -> str | None:
        """None when the workspace is as built; else the first changed entry (all dropped)."""
        if not self.checked:
            return None
        changed: set[str] = set()
        for tree in workspace.trees:
            diff = _changes(fingerprint(tree.path), tree.fingerprint)
            if diff:
                self._poison(tree, diff)
                changed |= diff
        with self._cond:
            merged = self._merged.get(workspace.path) if workspace.path else None
        if merged is not None and workspace.path is not None:
            changed |= _changes(fingerprint(workspace.path), merged)
        if not changed:
            return None
        files = sorted(p for p in changed if p and not p.endswith("/"))
        return files[0] if files else (min(p for p in changed if p) if changed - {""} else ".")

    def _poison(self, tree: BuiltTree, changed: set[str]) -> None:
        """Mark a tree, and every tree linking a changed blob, stale; forget those blobs."""
        cut = len(tree.key[0]) + 1
        names = {tree.files[p[cut:]] for p in changed if p[cut:] in tree.files}
        for name in names:
            self.store.forget(name)
        with self._cond:
            tree.stale = True
            for other in list(self._trees.values()) + self._free:
                if names & set(other.files.values()):
                    other.stale = True
            self._free = [t for t in self._free if not t.stale]

    def close(self) -> None:
        """Stop the git readers and remove every workspace this cache built."""
        self.store.close()
        remove_tree(self.root)


def _stale(workspace: Workspace) -> bool:
    return any(t.stale for t in workspace.trees)


def _changes(actual: dict[str, tuple[int, ...]], expected: dict[str, tuple[int, ...]]) -> set[str]:
    return set(actual) ^ set(expected) | {
        n for n in set(actual) & set(expected) if actual[n] != expected[n]
    }
