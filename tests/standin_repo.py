"""Workspaces for the repo-search arm's tests, built from real git repositories.

``workspace`` makes a repository with one commit (fixed author and dates, tests/gitrepo.py)
and materialises its tree as a trial's workspace (``<repo>/<path>``, read from git with
``git archive``); ``check_citations`` asserts that every cited span is quoted in the answer
verbatim and returns the cited files.
"""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from pathlib import Path

from tests.gitrepo import git_env, make_git_repo

from flightdeck.arms.agents.repo_search import SearchResult

_SPAN = re.compile(r"^(?P<path>.+)#L(?P<a>\d+)-L(?P<b>\d+)$")


def workspace(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    """A workspace holding repository ``name`` at its one commit, as a trial sees it."""
    (commit,) = make_git_repo(tmp_path / "repos" / name, [files])
    archive = subprocess.run(
        ["git", "-C", str(tmp_path / "repos" / name), "archive", "--format=tar", commit],
        env=git_env(),
        capture_output=True,
        check=True,
    ).stdout
    root = tmp_path / "workspace"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root / name, filter="data")
    return root


def check_citations(root: Path, result: SearchResult) -> list[str]:
    """The cited files; asserts every cited span's lines are quoted in the answer verbatim."""
    cited = []
    for uri, _ in result.citations:
        match = _SPAN.match(uri)
        assert match is not None, uri
        lines = (root / match["path"]).read_text(encoding="utf-8").split("\n")
        quoted = "\n".join(lines[int(match["a"]) - 1 : int(match["b"])])
        assert quoted in result.answer, uri
        cited.append(match["path"])
    return cited
