"""What a chat-product arm worked from: a folder of attached documents, or the commits behind it.

Both chat-product arms use it: ``import-answers --snapshot DIR`` (a person's run) and
``experiment agent attached --attach DIR`` (the same baseline through the API). An attached
file's name relative to the folder is its source uri, so ``DIR/sdlc/docs/adr/0001.md`` is
cited as ``sdlc/docs/adr/0001.md`` and hashed from the attached bytes, not from ``as_of``:
an attachment older or newer than ``as_of`` scores as a stale citation, which is the point.
``import-answers --snapshot-commit REPO=SHA`` names the commits the attachments were exported
from instead, and cited files are hashed from those, read through git.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.files.jsonl import sha256_file
from flightdeck.suite.records import COMMIT_RE, parse_source_uri
from flightdeck.suite.repos import RepoSet

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()  # recorded for a cited file not attached


def split_uri(uri: str) -> tuple[str, str] | None:
    """``(repo, path)`` of a repository uri (span dropped); None for an opaque one."""
    parsed = parse_source_uri(uri)
    return None if parsed is None else (parsed.repo, parsed.path)


def folder_files(folder: Path) -> list[tuple[str, Path]]:
    """Every file under the folder as ``(name, path)``; names relative, sorted bytewise."""
    entries: list[tuple[bytes, str, Path]] = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in files:
            full = Path(top) / name
            relative = full.relative_to(folder).as_posix()
            entries.append((relative.encode("utf-8", "surrogateescape"), relative, full))
    entries.sort()
    return [(name, full) for _, name, full in entries]


def folder_hash(folder: Path) -> tuple[str, int]:
    """SHA-256 over the folder's files, and how many there are.

    The hash is of the lines ``"<sha256>  <path>\\n"`` (``sha256sum``'s format) for every
    file, paths relative to the folder and sorted bytewise; the same as
    ``find . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum``.
    """
    digest = hashlib.sha256()
    files = folder_files(folder)
    for name, full in files:
        digest.update(
            sha256_file(full).encode() + b"  " + name.encode("utf-8", "surrogateescape") + b"\n"
        )
    return digest.hexdigest(), len(files)


def snapshot_record(folder: Path) -> dict[str, Any]:
    """The arm meta's ``knowledge_snapshot`` for an attachment folder: path, sha256, files."""
    folder_sha, files = folder_hash(folder)
    return {"folder": folder.as_posix(), "sha256": folder_sha, "files": files}


def hash_from_folder(folder: Path, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """SHA-256 of each wanted ``(repo, path)`` that the folder holds as ``<repo>/<path>``.

    Only the files :func:`folder_files` lists, which :func:`folder_hash` covers: a file
    reached through a symlinked folder is not in the snapshot, since its bytes could change
    without the recorded snapshot hash changing.
    """
    files = dict(folder_files(folder))
    found = {}
    for repo, path in wanted:
        file = files.get(f"{repo}/{path}")
        if file is not None and file.is_file():
            found[(repo, path)] = sha256_file(file)
    return found


def hash_from_commits(
    repos: RepoSet, commits: Mapping[str, str], wanted: set[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """SHA-256 of each wanted ``(repo, path)`` as its repository's snapshot commit holds it."""
    found = {}
    for repo in sorted({r for r, _ in wanted}):
        with repos.get(repo).blobs() as reader:
            for r, path in sorted(wanted):
                if r == repo:
                    data = reader.read(commits[repo], path)
                    if data is not None:
                        found[(r, path)] = hashlib.sha256(data).hexdigest()
    return found


def parse_snapshot_commits(values: tuple[str, ...]) -> dict[str, str]:
    """``REPO=SHA`` pairs (``--snapshot-commit``) -> mapping; each SHA a full 40-hex commit."""
    commits = {}
    for value in values:
        repo, sep, commit = value.partition("=")
        if not sep or not repo or not COMMIT_RE.match(commit):
            raise InputError(
                "--snapshot-commit",
                None,
                f"{value!r} is not REPO=<40-hex commit>; e.g. sdlc=$(git rev-parse v1.2)",
            )
        commits[repo] = commit.lower()
    return commits


def check_snapshot_commits(
    commits: Mapping[str, str], wanted: set[tuple[str, str]], repos: RepoSet
) -> None:
    """Every cited repository has a snapshot commit, and every snapshot commit exists."""
    uncovered = sorted({r for r, _ in wanted} - set(commits))
    if uncovered:
        raise InputError(
            "--snapshot-commit",
            None,
            f"citations name repository {uncovered[0]!r}; "
            f"add --snapshot-commit {uncovered[0]}=<commit>",
        )
    repos.require_commits(
        (repo, commit, "--snapshot-commit", None) for repo, commit in sorted(commits.items())
    )
