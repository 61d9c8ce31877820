"""Build real git repositories for tests, with the same commit ids on every run.

Each commit is a dict mapping a path to its new content (``str`` is written as UTF-8,
``bytes`` as is) or to ``None`` to delete the file. Author and committer names, emails and
dates are fixed through git's environment variables, and the user's and system's git
config are ignored, so the ids depend only on the contents::

    from tests.gitrepo import make_git_repo

    first, second = make_git_repo(tmp_path / "sdlc", [
        {"docs/adr/0001.md": "# Use Postgres\n", "README.md": "hello\n"},
        {"docs/adr/0001.md": "# Use SQLite\n", "README.md": None},
    ])

Import it as ``tests.gitrepo`` (``python -m pytest`` from the project root puts the root on
``sys.path``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flightdeck.suite.repos import Repository

AUTHOR = ("Ada Tester", "ada@example.com")
COMMITTER = ("Flightdeck Tests", "tests@example.com")
EPOCH = 1_700_000_000  # 2023-11-14T22:13:20Z; commit i is dated EPOCH + 60 * i


def git_env(index: int = 0) -> dict[str, str]:
    """Environment for a git command whose result must not depend on the machine."""
    date = f"@{EPOCH + 60 * index} +0000"
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME=AUTHOR[0],
        GIT_AUTHOR_EMAIL=AUTHOR[1],
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_NAME=COMMITTER[0],
        GIT_COMMITTER_EMAIL=COMMITTER[1],
        GIT_COMMITTER_DATE=date,
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        TZ="UTC",
    )
    return env


def _git(repo: Path, *args: str, index: int = 0) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        env=git_env(index),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def make_git_repo(
    path: Path, commits: Sequence[Mapping[str, str | bytes | None]], *, branch: str = "main"
) -> list[str]:
    """Create (or extend) a repository at ``path`` with one commit per dict; return their ids.

    Calling it again on an existing repository adds commits on top, dated after the ones
    already there, so ``make_git_repo(p, [a]) + make_git_repo(p, [b])`` gives the same ids
    as ``make_git_repo(p, [a, b])``.
    """
    path.mkdir(parents=True, exist_ok=True)
    if not (path / ".git").exists():
        _git(path, "init", "--quiet", f"--initial-branch={branch}")
        existing = 0
    else:
        existing = int(_git(path, "rev-list", "--count", "--all") or 0)
    ids = []
    for offset, changes in enumerate(commits):
        index = existing + offset
        for name, content in changes.items():
            target = path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        _git(path, "add", "--all", "--", ".")
        _git(
            path,
            "commit",
            "--quiet",
            "--allow-empty",
            "--no-gpg-sign",
            "--no-verify",
            "-m",
            f"commit {index}",
            index=index,
        )
        ids.append(_git(path, "rev-parse", "HEAD"))
    return ids


def make_bundle(repo: Path, bundle: Path) -> Path:
    """Write every ref of ``repo`` to a git bundle file (what params.yaml may point at)."""
    _git(repo, "bundle", "create", "--quiet", str(bundle.resolve()), "--all")
    return bundle


def sha256_at(
    repo: Repository, items: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], str | None]:
    """SHA-256 of each ``(commit, path)`` blob, or None when missing, read through one
    ``git cat-file --batch`` (the product's ``BlobReader``): what the reader tests compare."""
    import hashlib

    result: dict[tuple[str, str], str | None] = {}
    with repo.blobs() as reader:
        for commit, path in items:
            data = reader.read(commit, path)
            result[(commit, path)] = None if data is None else hashlib.sha256(data).hexdigest()
    return result
