"""What the workspaces of a run hold, decided before a single file is linked.

Each question's trees (one per repository, commit and scope), the files of a tree a trial
may read and why the others are left out (symlinks, submodules, suite folders), what a
tree's folders cost on disk, and the order trials run in so consecutive trees differ little.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from flightdeck.arms.blobstore import BLOCK
from flightdeck.project.names import SEALED_FILES
from flightdeck.suite.records import Question
from flightdeck.suite.repos import RepoSet, scope_filter

SUITE_FILES = frozenset(SEALED_FILES)  # a suite folder's files: never in a workspace
SYMLINK, SUBMODULE, SUITE = "symlink", "submodule", "inside a suite folder"
TreeKey = tuple[str, str, tuple[str, ...]]  # repository, commit, scope


@dataclass
class Listing:
    """The files a tree links (with their blobs), what it leaves out, which are executable."""

    files: dict[str, tuple[str, int]]  # path -> (blob id, size)
    omitted: list[tuple[str, str]]
    executable: dict[str, bool]


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


def list_tree(
    repo: str, scope: tuple[str, ...], entries: list[tuple[str, str, str, int]]
) -> Listing:
    """The files of a commit's entries a tree links, what it leaves out (and why)."""
    allowed = scope_filter(scope)
    hidden = suite_folders(path for path, *_ in entries)
    listing = Listing({}, [], {})
    for path, oid, mode, size in entries:
        uri = f"{repo}/{path}"
        if not allowed(uri):
            continue
        if mode == "120000":
            listing.omitted.append((uri, SYMLINK))
        elif mode == "160000":
            listing.omitted.append((uri, SUBMODULE))
        elif _under(path, hidden) or path.rpartition("/")[2] in SUITE_FILES:
            listing.omitted.append((uri, SUITE))
        elif mode in ("100644", "100755"):
            listing.files[path] = (oid, size)
            listing.executable[path] = mode == "100755"
    return listing


def tree_keys(question: Question) -> list[TreeKey]:
    """A question's trees: one per repository of its ``as_of``, with its normalised scope."""
    scope = tuple(sorted(set(question.scope)))
    return [(repo, question.as_of[repo], scope) for repo in sorted(question.as_of)]


def tree_disk(files: Mapping[str, object]) -> int:
    """The folders a tree of these files needs, in bytes (its links cost no blocks)."""
    folders = {path.rpartition("/")[0] for path in files}
    for folder in list(folders):
        while folder:
            folder = folder.rpartition("/")[0]
            folders.add(folder)
    return (len(folders) + 1) * BLOCK


def commit_order(repos: RepoSet, questions: list[Question]) -> list[Question]:
    """Questions grouped so trials sharing a tree run together, commits in time order.

    Consecutive trees then differ little, so a freed tree is turned into the next one by
    relinking a few files. Order among questions is otherwise kept.
    """
    times: dict[tuple[str, str], int] = {}
    by_repo: dict[str, set[str]] = {}
    for question in questions:
        for repo, commit in question.as_of.items():
            by_repo.setdefault(repo, set()).add(commit)
    for repo, commits in by_repo.items():
        git_dir = repos.get(repo).git_dir
        proc = subprocess.run(
            ["git", f"--git-dir={git_dir}", "log", "--no-walk=unsorted", "--format=%H %ct"]
            + sorted(commits),
            capture_output=True,
            text=True,
            check=False,
        )
        for line in proc.stdout.splitlines():
            commit, _, when = line.partition(" ")
            times[(repo, commit)] = int(when) if when.isdigit() else 0
    first = {id(q): i for i, q in enumerate(questions)}

    def key(question: Question) -> tuple[object, ...]:
        repos_ = tuple(sorted(question.as_of))
        scope = tuple(sorted(set(question.scope)))
        when = tuple(times.get((r, question.as_of[r]), 0) for r in repos_)
        commits = tuple(question.as_of[r] for r in repos_)
        return (len(repos_) > 1, repos_, scope, when, commits, first[id(question)])

    return sorted(questions, key=key)
