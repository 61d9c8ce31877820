"""Which files a canary scan reads: folders walked once, the registry's own files left out.

Folders are walked in sorted order, each file read once however it is reached. The holdouts
manifest and the registered suites' sealed ``keys.jsonl`` files hold canaries by design, so
a scan leaves them out (:func:`plan_scan` says how it knows one) and scanning ``suites/`` or
the whole project by mistake voids nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.files.jsonl import sha256_file
from flightdeck.holdouts.manifest import ManifestRead, manifest_path, read_manifest, require_folder
from flightdeck.holdouts.manifest_format import SuiteEntry
from flightdeck.project.names import KEYS_FILE
from flightdeck.project.paths import suite_manifest
from flightdeck.suite.records import read_manifest as read_seal
from flightdeck.suite.sealed import registered_sha256


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """What :func:`plan_scan` found: the files to scan, the sealed keys files left out, and the
    scanned files' total size on disk (for a progress bar)."""

    files: tuple[Path, ...]
    sealed_keys: tuple[Path, ...]
    size: int
    paths: tuple[Path, ...] = ()  # what the plan was made of, as given
    # the manifest it was planned with, so that the scan does not read it again
    read: ManifestRead | None = field(default=None, compare=False)


def plan_scan(holdouts_dir: Path, paths: Sequence[Path]) -> ScanPlan:
    """The files a scan of ``paths`` reads, the sealed keys files it leaves out, and the size.

    Folders are walked recursively, in sorted order; folder walks leave out the holdouts
    manifest. Wherever it is found, named or walked, a registered suite's sealed keys file is
    left out: a file named ``keys.jsonl`` whose folder's ``manifest.json`` is the one that
    suite was registered with (same SHA-256 of its canonical JSON) and records the file's own
    SHA-256. It holds every canary of its suite by design, so scanning it would void the suite
    for nothing. A ``keys.jsonl`` that does not match its folder's manifest (changed, or a
    copy without that manifest) is scanned like any file: it may be a leak. A copy of the
    whole sealed suite folder matches too; ``sealed_keys`` lists every file left out, so the
    scan's summary shows where each one was.
    """
    require_folder(holdouts_dir)
    return plan_files(read_manifest(manifest_path(holdouts_dir)), paths)


def plan_files(read: ManifestRead, paths: Sequence[Path]) -> ScanPlan:
    """:func:`plan_scan` over a manifest already read."""
    files: list[Path] = []
    sealed_keys: list[Path] = []
    size = 0
    for file in collect_files(paths, exclude=[read.path]):
        if _is_sealed_keys(file, read.manifest.suites):
            sealed_keys.append(file)
            continue
        files.append(file)
        with contextlib.suppress(OSError):  # the scan itself reports an unreadable file
            size += file.stat().st_size
    return ScanPlan(tuple(files), tuple(sealed_keys), size, tuple(paths), read)


def _is_sealed_keys(file: Path, suites: Mapping[str, SuiteEntry]) -> bool:
    """Whether ``file`` is, byte for byte, the sealed keys file of a registered suite."""
    if file.name != KEYS_FILE:
        return False
    try:  # the suite's own reader of its seal, as `knowledge seal` wrote it
        seal = read_seal(suite_manifest(file.parent))
    except InputError:  # no manifest beside it, or not one: not a sealed suite
        return False
    registered = suites.get(seal.suite)
    if registered is None or registered_sha256(seal) != registered.manifest_sha256:
        return False  # another seal under the same name: not what was registered
    try:
        return sha256_file(file) == seal.files.get(KEYS_FILE)
    except OSError:  # the scan reports an unreadable file
        return False


def collect_files(paths: Sequence[Path], *, exclude: Iterable[Path] = ()) -> list[Path]:
    """Expand files and folders (recursively, in sorted order) into regular files, each once.

    Folder walks leave out the files in ``exclude`` (and their atomic-write temp files),
    anything that is not a regular file, and links to folders; a file named directly is
    always scanned.
    """
    skip = {os.path.realpath(p) for p in exclude}
    seen: set[str] = set()
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = [(p, key) for p, key in _walk(path) if not _excluded(key, skip)]
        elif path.is_file():
            found = [(path, os.path.realpath(path))]
        elif path.exists() or path.is_symlink():
            raise InputError(path, None, "not a regular file or folder; name a trace file")
        else:
            raise InputError(path, None, "no such file or folder; check the path")
        for file, key in found:
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


def _walk(folder: Path) -> Iterator[tuple[Path, str]]:
    """``(path, real path)`` of the regular files under ``folder``, depth first, sorted."""
    stack = [(str(folder), os.path.realpath(folder))]
    while stack:
        here, real = stack.pop()
        try:
            with os.scandir(here) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            raise InputError(
                here, None, f"cannot list ({exc.strerror}); check permissions"
            ) from None
        folders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append((entry.path, os.path.join(real, entry.name)))
                    continue
                if not entry.is_file():  # follows links: a dangling one holds no text
                    continue
                linked = entry.is_symlink()
            except OSError:
                continue
            key = os.path.realpath(entry.path) if linked else os.path.join(real, entry.name)
            yield Path(entry.path), key
        stack.extend(reversed(folders))


def _excluded(real: str, skip: set[str]) -> bool:
    return real in skip or _is_temp_of(real, skip)


def _is_temp_of(real: str, skip: set[str]) -> bool:
    """``.<name>.*.tmp`` beside an excluded file is its atomic-write temp: the same text."""
    folder, name = os.path.split(real)
    return name.endswith(".tmp") and any(
        os.path.dirname(s) == folder and name.startswith(f".{os.path.basename(s)}.") for s in skip
    )
