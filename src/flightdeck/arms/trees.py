"""File trees of hard links: made, relinked, fingerprinted, made read-only, removed.

The file-system half of :mod:`flightdeck.arms.workspace`: no bookkeeping here, only what
happens to folders and links.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from flightdeck.arms.blobstore import BlobStore


def link_files(base: Path, files: Mapping[str, str], store: BlobStore) -> None:
    made: set[Path] = set()
    base.mkdir(parents=True)
    made.add(base)
    for path, name in files.items():
        out = base / path
        if out.parent not in made:
            out.parent.mkdir(parents=True, exist_ok=True)
            made.add(out.parent)
        os.link(store.path(name), out)


def relink(
    top: Path,
    *,
    base: Path,
    old: Mapping[str, str],
    files: Mapping[str, str],
    store: BlobStore,
    checked: bool,
) -> None:
    """Turn a tree into another commit's: only the files that differ are unlinked or linked."""
    if checked:  # its folders were made read-only
        for walked, _dirs, _files in os.walk(top):
            os.chmod(walked, 0o755)
    gone = [p for p, name in old.items() if files.get(p) != name]
    for path in gone:
        os.unlink(base / path)
    for gone_path in gone:
        folder = (base / gone_path).parent
        while folder != base:
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
    for path, name in files.items():
        if old.get(path) != name:
            out = base / path
            out.parent.mkdir(parents=True, exist_ok=True)
            os.link(store.path(name), out)


def fingerprint(top: Path) -> dict[str, tuple[int, ...]]:
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


def merge_trees(sources: list[Path], target: Path) -> None:
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
    make_read_only(staging)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staging, target)


def make_read_only(top: Path) -> None:
    for folder, _dirs, _files in os.walk(top, topdown=False):
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
        if pid != os.getpid() and not pid_alive(pid):
            remove_tree(entry)


def pid_alive(pid: int) -> bool:
    """Whether the process ``pid`` exists (a stale folder's owner), ours or another user's."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
