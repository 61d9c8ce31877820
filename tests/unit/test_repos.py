"""Repositories read through git: blob bytes at a commit, bundles, and scope globs.

Scope globs are checked against git itself: `git ls-files ':(glob)<pattern>'` is the
reference for which paths a pattern reaches.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from tests.gitrepo import make_bundle, make_git_repo, sha256_at

from flightdeck.errors import InputError
from flightdeck.suite.repos import RepoSet, Repository, scope_filter

TREE = {
    "docs/runbooks/deploy.md": "deploy\n",
    "docs/runbooks/old/x.md": "old\n",
    "docs/adr/0001.md": "adr\n",
    "docs/readme.txt": "r\n",
    "src/app.py": "print(1)\n",
    "src/docs/inner.md": "inner\n",
    "CODEOWNERS": "* @ada\n",
    "a?b.md": "odd\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("repo") / "sdlc"
    commits = make_git_repo(path, [TREE, {"docs/adr/0001.md": "changed\n", "CODEOWNERS": None}])
    return path, commits


def test_reads_blob_bytes_at_a_commit_not_head(repo: tuple[Path, list[str]]) -> None:
    path, (first, second) = repo
    r = Repository("sdlc", path, path.parent / "cache")
    hashes = sha256_at(
        r,
        [
            (first, "docs/adr/0001.md"),
            (second, "docs/adr/0001.md"),
            (first, "CODEOWNERS"),
            (second, "CODEOWNERS"),
            (first, "docs"),
        ],
    )
    assert hashes[(first, "docs/adr/0001.md")] == hashlib.sha256(b"adr\n").hexdigest()
    assert hashes[(second, "docs/adr/0001.md")] == hashlib.sha256(b"changed\n").hexdigest()
    assert hashes[(first, "CODEOWNERS")] is not None
    assert hashes[(second, "CODEOWNERS")] is None  # deleted later
    assert hashes[(first, "docs")] is None  # a tree, not a file
    assert r.has_commit(first)
    assert not r.has_commit("f" * 40)
    assert sorted(p for p, _ in r.list_files(first)) == sorted(TREE)


def test_one_git_process_for_many_blobs(
    repo: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, (first, _) = repo
    started = []
    real = subprocess.Popen

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        started.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    sha256_at(Repository("sdlc", path, path.parent / "cache"), [(first, p) for p in TREE] * 20)
    assert len(started) == 1
    assert "--batch" in started[0]


def test_bundle_reads_like_a_clone(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, (first, _) = repo
    bundle = make_bundle(path, tmp_path / "sdlc.bundle")
    repos = RepoSet({"sdlc": bundle}, cache_dir=tmp_path / "cache")
    got = sha256_at(repos.get("sdlc"), [(first, "src/app.py")])
    assert got[(first, "src/app.py")] == hashlib.sha256(b"print(1)\n").hexdigest()
    # A second open reuses the cached clone.
    again = RepoSet({"sdlc": bundle}, cache_dir=tmp_path / "cache").get("sdlc")
    assert again.git_dir == repos.get("sdlc").git_dir


def test_unknown_and_broken_repositories(tmp_path: Path) -> None:
    with pytest.raises(
        InputError,
        match=r"repository 'x' is not configured; add it under repos: or pass --repo x=PATH",
    ):
        RepoSet({}, tmp_path / "c").get("x")
    (tmp_path / "bad.bundle").write_text("not a bundle")
    with pytest.raises(InputError, match=r"bad\.bundle: not a readable git bundle"):
        RepoSet({"x": tmp_path / "bad.bundle"}, cache_dir=tmp_path / "c").get("x")
    (tmp_path / "plain").mkdir()
    with pytest.raises(InputError, match=r"plain: not a git repository or bundle"):
        RepoSet({"x": tmp_path / "plain"}, tmp_path / "c").get("x")


PATTERNS = [
    "docs/runbooks/*.md",
    "docs/**",
    "docs/**/*.md",
    "**/*.md",
    "**/docs/**",
    "docs",
    "docs/",
    "src/*.py",
    "*.md",
    "docs/r*/*",
    "docs/?dr/*",
    "docs/[ar]*/**",
    "docs/[!a]*/*.md",
    "CODEOWNERS",
    "a\\?b.md",
]


@pytest.fixture(scope="module")
def tree_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tree") / "sdlc"
    make_git_repo(path, [TREE])
    return path


@pytest.mark.parametrize("pattern", PATTERNS)
def test_scope_matches_git_glob_pathspecs(tree_repo: Path, pattern: str) -> None:
    path = tree_repo
    out = subprocess.run(
        ["git", "-C", str(path), "ls-files", "-z", "--", f":(glob){pattern}"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    expected = sorted(p for p in out.split("\0") if p)
    allowed = scope_filter([f"sdlc/{pattern}"])
    assert sorted(p for p in TREE if allowed(f"sdlc/{p}")) == expected


def test_scope_examples_from_the_spec() -> None:
    runbooks = scope_filter(["sdlc/docs/runbooks/*.md"])
    assert runbooks("sdlc/docs/runbooks/deploy.md")
    assert not runbooks("sdlc/docs/runbooks/old/x.md")
    assert scope_filter(["sdlc/docs/**"])("sdlc/docs/runbooks/old/x.md")
    assert scope_filter([])("anything/at/all")
    assert not scope_filter(["sdlc/docs/**"])("other/docs/x.md")


def test_fetch_streams_blobs_and_read_answers_alike(repo: tuple[Path, list[str]]) -> None:
    # The one cat-file reader: fetch (the workspace store's stream) and read give the same
    # bytes, None for a missing object and for a tree.
    path, (first, _) = repo
    r = Repository("sdlc", path, path.parent / "cache")
    oids = [oid for p, oid in sorted(r.list_files(first))]
    tree = subprocess.run(
        ["git", f"--git-dir={r.git_dir}", "rev-parse", f"{first}^{{tree}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    wanted = [*oids, "0" * 40, tree] * 300  # more than a pipe holds either way
    with r.blobs() as reader:
        fetched = list(reader.fetch(wanted))
        one_by_one = [reader.read(oid) for oid in wanted[: len(oids) + 2]]
    assert [oid for oid, _ in fetched] == wanted
    assert [data for _, data in fetched[: len(oids) + 2]] == one_by_one
    assert one_by_one[-2:] == [None, None]
    assert all(data is not None for data in one_by_one[:-2])
