"""Workspaces from the blob store: written once, relinked across commits, freed, capped."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.builders import project_repos
from tests.gitrepo import git_env, make_bundle, make_git_repo
from tests.tree import gen

from flightdeck.arms.runner import RunConfig, run_experiment
from flightdeck.arms.workspace import WorkspaceCache
from flightdeck.suite import repos as repos_module
from flightdeck.suite.records import CANARY_PREFIX, Question
from flightdeck.suite.repos import RepoSet

CANARY = CANARY_PREFIX + "0123456789abcdef0123456789abcdef"
BASE = {f"docs/d{i // 10}/f{i}.md": f"file {i}\n" * (i + 1) for i in range(40)}
CHANGES = [{}, {"docs/d0/f1.md": "changed\n", "docs/d3/f30.md": None, "new/n.md": "new\n"}]


def question(qid: str, commit: str, scope: tuple[str, ...] = ()) -> Question:
    return Question(qid, "?", "how-to", {"sdlc": commit}, scope)


def files_of(top: Path) -> dict[str, bytes]:
    return {p.relative_to(top).as_posix(): p.read_bytes() for p in top.rglob("*") if p.is_file()}


@pytest.fixture
def history(tmp_path: Path) -> tuple[RepoSet, list[str]]:
    first = dict(BASE)
    commits = make_git_repo(tmp_path / "sdlc", [first, *CHANGES[1:]])
    return RepoSet({"sdlc": tmp_path / "sdlc"}, tmp_path / "cache"), commits


def test_each_blob_is_written_once_and_trees_link_to_it(
    history: tuple[RepoSet, list[str]], tmp_path: Path
) -> None:
    repos, (c1, c2) = history
    cache = WorkspaceCache(repos, tmp_path / "ws", checked=False)
    try:
        one = cache.acquire(question("a", c1))
        two = cache.acquire(question("b", c2))
        assert one.path is not None
        assert two.path is not None
        same = one.path / "sdlc" / "docs/d2/f20.md"
        assert same.stat().st_ino == (two.path / "sdlc" / "docs/d2/f20.md").stat().st_ino
        assert same.stat().st_nlink == 3  # the store's file and one link per tree
        stored = [p for p in (cache.root / "blobs").rglob("*") if p.is_file()]
        assert len(stored) == 40 + 2  # 40 blobs at the first commit, 2 new at the second
    finally:
        cache.close()


def test_a_freed_tree_is_relinked_into_the_next_commit_and_equals_a_fresh_build(
    history: tuple[RepoSet, list[str]], tmp_path: Path
) -> None:
    repos, (c1, c2) = history
    first, second = question("a", c1), question("b", c2)
    cache = WorkspaceCache(repos, tmp_path / "ws", checked=False)
    try:
        cache.plan([first, second])
        held = cache.acquire(first)
        assert held.path is not None
        top = held.path
        cache.release(held)  # no pending trial needs c1, one needs c2: kept to relink
        again = cache.acquire(second)
        assert again.path == top  # the same folder, relinked
        relinked = files_of(top)
        cache.release(again)
        assert not top.exists()  # nothing pending needs it now
    finally:
        cache.close()
    fresh = WorkspaceCache(repos, tmp_path / "ws2", checked=False)
    try:
        built = fresh.acquire(second)
        assert built.path is not None
        assert relinked == files_of(built.path)
        assert relinked["sdlc/new/n.md"] == b"new\n"
        assert "sdlc/docs/d3/f30.md" not in relinked
        assert not (built.path / "sdlc" / "docs" / "d3" / "f30.md").exists()
    finally:
        fresh.close()


def test_a_tree_still_pending_stays_and_the_cap_waits_for_none(
    history: tuple[RepoSet, list[str]], tmp_path: Path
) -> None:
    repos, (c1, c2) = history
    a, b = question("a", c1), question("b", c1)
    cache = WorkspaceCache(repos, tmp_path / "ws", cap_bytes=1, checked=False)
    try:
        cache.plan([a, b])
        held = cache.acquire(a)  # over a 1-byte cap, but nothing runs: built anyway
        assert held.path is not None
        cache.release(held)
        assert held.path.exists()  # b still needs it
        other = cache.acquire(question("c", c2, ("sdlc/new/**",)))  # nothing in use: built
        assert other.path is not None
        assert files_of(other.path) == {"sdlc/new/n.md": b"new\n"}
        assert cache.peak >= cache.disk > 1
    finally:
        cache.close()


def _commit_with_odd_entries(repo: Path) -> str:
    """A commit with a symlink, a submodule, a missing blob and a file holding a canary."""
    env = git_env()

    def git(*args: str, data: bytes | None = None) -> str:
        out = subprocess.run(
            ["git", "-C", str(repo), *args], input=data, env=env, capture_output=True, check=True
        )
        return out.stdout.decode().strip()

    repo.mkdir(parents=True)
    git("init", "-q")
    ok = git("hash-object", "-w", "--stdin", data=b"fine\n")
    leak = git("hash-object", "-w", "--stdin", data=f"pasted: {CANARY}\n".encode())
    link = git("hash-object", "-w", "--stdin", data=b"ok.md")
    for mode, oid, path in [
        ("100644", ok, "ok.md"),
        ("100644", leak, "notes/leak.md"),
        ("120000", link, "link.md"),
        ("160000", "1" * 40, "vendor/lib"),
        ("100644", "2" * 40, "gone.md"),
    ]:
        git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}")
    tree = git("write-tree", "--missing-ok")
    return git("commit-tree", tree, "-m", "odd", data=b"")


def test_what_a_tree_leaves_out_is_said_with_the_reason(tmp_path: Path) -> None:
    commit = _commit_with_odd_entries(tmp_path / "sdlc")
    cache = WorkspaceCache(RepoSet({"sdlc": tmp_path / "sdlc"}, tmp_path / "c"), tmp_path / "ws")
    try:
        workspace = cache.acquire(question("a", commit))
        assert workspace.path is not None
        assert files_of(workspace.path) == {"sdlc/ok.md": b"fine\n"}
        assert dict(workspace.omitted) == {
            "sdlc/gone.md": "blob missing from the repository",
            "sdlc/link.md": "symlink",
            "sdlc/notes/leak.md": "holds a sealed-key canary",
            "sdlc/vendor/lib": "submodule",
        }
    finally:
        cache.close()


def test_trace_says_what_was_left_out_and_what_the_harness_read(tmp_path: Path) -> None:
    commit = _commit_with_odd_entries(tmp_path / "sdlc")
    suite = tmp_path / "suites" / "s-v1"
    record = {"id": "q1", "question": "?", "kind": "how-to", "as_of": {"sdlc": commit}}
    gen(suite, {"questions.jsonl": [{**record, "scope": []}]})
    result = json.dumps({"answer": "a", "citations": [], "read": ["sdlc/ok.md"]})
    command = shlex.join(["sh", "-c", f"cat >/dev/null; printf '%s' '{result}'"])
    config = RunConfig(suite, "arm1", command, root=tmp_path)
    run = run_experiment(config, repos=project_repos(tmp_path, {"sdlc": tmp_path / "sdlc"}))
    assert not run.failed, run.failed
    assert run.omissions == {
        "blob missing from the repository": 1,
        "holds a sealed-key canary": 1,
        "submodule": 1,
        "symlink": 1,
    }
    header = (tmp_path / "traces" / "s-v1" / "arm1" / "q1.log").read_text().split("==>")[0]
    assert "workspace: 1 files (sdlc@" in header
    assert "left out: 4 (1 blob missing from the repository, 1 holds a sealed-key canary" in header
    assert "sdlc/link.md (symlink)" in header
    assert "read: 1 files: sdlc/ok.md" in header
    assert CANARY not in header
    line = (suite / "answers" / "arm1.jsonl").read_text()
    assert json.loads(line) == {"id": "q1", "answer": "a", "citations": []}  # no "read"


def test_a_bundle_is_hashed_once_and_found_again_by_its_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_git_repo(tmp_path / "src", [{"a.md": "a\n"}])
    bundle = make_bundle(tmp_path / "src", tmp_path / "b.bundle")
    hashed: list[Any] = []
    real = hashlib.file_digest

    def counting(handle: Any, name: str) -> Any:
        hashed.append(handle.name)
        return real(handle, name)

    monkeypatch.setattr(repos_module.hashlib, "file_digest", counting)
    first = RepoSet({"x": bundle}, tmp_path / "cache").get("x").git_dir
    again = RepoSet({"x": bundle}, tmp_path / "cache").get("x").git_dir
    assert first == again
    assert len(hashed) == 1  # the second open read nothing of the bundle
    os.utime(bundle, ns=(1, 1))  # touched: hashed again, same content, same clone
    assert RepoSet({"x": bundle}, tmp_path / "cache").get("x").git_dir == first
    assert len(hashed) == 2
    assert len(list((tmp_path / "cache" / "bundles").glob("*.git"))) == 1


def test_past_the_cap_a_new_tree_waits_for_a_running_trial_to_give_one_back(
    history: tuple[RepoSet, list[str]], tmp_path: Path
) -> None:
    repos, (c1, c2) = history
    cache = WorkspaceCache(repos, tmp_path / "ws", checked=False)
    try:
        first = cache.acquire(question("a", c1))
        # room for one more tree's worth of folders: the second commit's tree fits alone,
        # not beside the first
        cache.cap = cache.disk + 3 * 4096
        got: list[Any] = []
        waiter = threading.Thread(target=lambda: got.append(cache.acquire(question("b", c2))))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive(), "built past the cap while the first trial held its tree"
        cache.release(first)  # no pending trial needs it: removed, its blobs evicted
        waiter.join(60)
        assert not waiter.is_alive()
        (second,) = got
        assert second.path is not None
        assert files_of(second.path)["sdlc/new/n.md"] == b"new\n"
        assert first.path is not None
        assert not first.path.exists()
        assert cache.disk <= cache.cap
    finally:
        cache.close()
