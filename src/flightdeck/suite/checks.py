"""Every check a seal makes, as a list of problems: what ``seal`` refuses and ``check`` lists.

Sealing is irreversible (a changed question is a new suite version), so the checks look for
anything that could never work: a scope that names no repository of ``as_of`` or matches no
file there, a valid source that no arm could read (outside the scope, not a normal path, a
symlink or submodule that workspaces leave out, a blob missing from a partial clone), a
source whose bytes at ``as_of`` are not the recorded ones, and a repository that no
params.yaml or ``--repo`` names. Each problem names the file and line to fix.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.project.modes import ReposNotAtHand
from flightdeck.project.names import KEYS_FILE, QUESTIONS_FILE
from flightdeck.suite.records import UNHASHED, Key, Question, parse_source_uri
from flightdeck.suite.repos import BlobReader, RepoSet, Repository, glob_regex

REGULAR_MODES = ("100644", "100755")


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing to fix, located as an :class:`InputError` would say it."""

    path: str
    line: int
    message: str

    def error(self) -> InputError:
        return InputError(self.path, self.line or None, self.message)

    def __str__(self) -> str:
        return str(self.error())


@dataclass(frozen=True)
class SourceCheck:
    """What the checks found: the problems, sources checked, repositories not checked."""

    problems: tuple[Problem, ...]  # in file and line order
    first: Problem | None  # the first found, in the order seal has always checked
    checked_sources: int
    unchecked_repos: tuple[str, ...]
    # (repo, commit, path) -> sha256 of the file at as_of, for every source checked there
    hashes: dict[tuple[str, str, str], str]


def check_suite(
    *,
    questions_path: Path,
    keys_path: Path,
    questions: Sequence[Question],
    keys: Sequence[Key],
    repos: RepoSet,
    repos_not_at_hand: ReposNotAtHand = ReposNotAtHand.REFUSE,
    broken_ids: frozenset[str] = frozenset(),
) -> SourceCheck:
    """Every cross-file and repository check of a seal (``repos_not_at_hand``: refuse or skip).

    ``broken_ids`` are ids of lines that did not read (``knowledge check`` lists them): their
    partner in the other file is not also called an orphan.
    """
    problems: list[Problem] = []
    skip_absent = repos_not_at_hand is ReposNotAtHand.SKIP

    def problem(path: Path, line: int, message: str) -> None:
        problems.append(Problem(str(path), line, message))

    # In the order the first version checked, so seal's first refusal reads as it did.
    by_id = {q.id: q for q in questions}
    key_ids = {k.id for k in keys}
    deferred: list[Problem] = []
    for k in keys:
        q = by_id.get(k.id)
        if q is None and k.id in broken_ids:
            continue
        if q is None:
            problem(
                keys_path,
                k.line,
                f"id {k.id!r} has no question in questions.jsonl; the two files need the same ids",
            )
            continue
        # An as_of repository nobody names is likelier the typo than the uri: that problem,
        # on the question's line, comes first (below); the uri's follows it.
        typo = any(name not in repos.locations for name in q.as_of) and not skip_absent
        for source in k.valid_sources:
            parsed = parse_source_uri(source.uri)
            if parsed is not None and parsed.repo not in q.as_of:
                (deferred if typo else problems).append(
                    Problem(
                        str(keys_path),
                        k.line,
                        f"valid source {source.uri!r} names repository {parsed.repo!r}, which is "
                        f"not in the question's as_of ({', '.join(q.as_of)}); fix the uri",
                    )
                )
    for q in questions:
        if q.id not in key_ids and q.id not in broken_ids:
            problem(
                questions_path,
                q.line,
                f"id {q.id!r} has no key in keys.jsonl; the two files need the same ids",
            )

    # Repositories: named somewhere, present, holding the commit.
    not_named: set[str] = set()
    at_hand: dict[str, Repository] = {}
    for q in questions:
        for name, commit in q.as_of.items():
            if name not in repos.locations:
                if not skip_absent:
                    problem(
                        questions_path,
                        q.line,
                        f"as_of names repository {name!r}, which neither params.yaml repos: "
                        f"nor --repo names; add it (--repo {name}=PATH), or seal with "
                        "--unchecked to seal without checking it",
                    )
                not_named.add(name)
                continue
            if name in not_named:
                continue  # not at hand: reported once, at its first question
            repo = at_hand.get(name)
            if repo is None:
                try:
                    repo = at_hand[name] = repos.get(name)
                except InputError as exc:  # named but not there, or not a repository
                    absent = not repos.locations[name].exists()
                    if not (skip_absent and absent):  # --unchecked: a clone not at hand is skipped
                        message = exc.message
                        if absent:
                            message += ", or seal with --unchecked to seal without checking it"
                        problems.append(Problem(exc.path or "params.yaml", exc.line or 0, message))
                    not_named.add(name)
                    continue
            missing = repos.commit_error(name, commit, questions_path, q.line)
            if missing is not None:
                problem(questions_path, q.line, missing.message)
    problems.extend(deferred)
    trees = _Trees(at_hand)
    try:
        return _check_scopes_and_sources(
            questions_path, keys_path, questions, keys, by_id, trees, problems, not_named
        )
    finally:
        trees.close()


def _check_scopes_and_sources(
    questions_path: Path,
    keys_path: Path,
    questions: Sequence[Question],
    keys: Sequence[Key],
    by_id: dict[str, Question],
    trees: _Trees,
    problems: list[Problem],
    not_named: set[str],
) -> SourceCheck:
    def problem(path: Path, line: int, message: str) -> None:
        problems.append(Problem(str(path), line, message))

    # Scopes: each pattern starts with a repository of as_of and matches a file there.
    broken_scope: set[str] = set()  # its sources are not also reported as outside it
    for q in questions:
        for pattern in q.scope:
            repo_name = pattern.split("/", 1)[0]
            if repo_name not in q.as_of:
                names = ", ".join(sorted(q.as_of)) or "none"
                hint = sorted(q.as_of)[0] if q.as_of else "<repo>"
                problem(
                    questions_path,
                    q.line,
                    f"scope pattern {pattern!r} does not start with a repository of as_of "
                    f"({names}); write it as <repo>/<path>, e.g. {hint}/{pattern}",
                )
                broken_scope.add(q.id)
                continue
            tree = trees.get(repo_name, q.as_of[repo_name])
            if tree is None:
                continue  # repository not at hand or commit missing: reported above
            regex = glob_regex(pattern)
            if not any(regex.match(f"{repo_name}/{path}") for path in tree.regular):
                problem(
                    questions_path,
                    q.line,
                    f"scope pattern {pattern!r} matches no file of {repo_name!r} at as_of "
                    f"{q.as_of[repo_name][:12]}; fix the pattern",
                )
                broken_scope.add(q.id)

    # Valid sources: readable by an arm, with the recorded bytes.
    checked = 0
    hashes: dict[tuple[str, str, str], str] = {}
    for k in keys:
        if k.id not in by_id:
            continue
        q = by_id[k.id]
        scope = [glob_regex(p) for p in q.scope]
        for source in k.valid_sources:
            parsed = parse_source_uri(source.uri)
            if parsed is None:
                continue  # opaque: matched as a whole string
            where = f"valid source {source.uri!r}"
            if not _normal(parsed.path):
                problem(
                    keys_path,
                    k.line,
                    f"{where} is not a normal path (no '..', './', leading or double '/'); "
                    "write <repo>/<path> as git shows it",
                )
                continue
            if parsed.repo not in q.as_of:
                continue  # reported with the ids
            bare = f"{parsed.repo}/{parsed.path}"
            if scope and q.id not in broken_scope and not any(p.match(bare) for p in scope):
                problem(
                    keys_path,
                    k.line,
                    f"{where} is outside the scope of question {q.id!r} ({', '.join(q.scope)}), so "
                    "no arm could read it; widen the scope or fix the uri",
                )
                continue
            commit = q.as_of[parsed.repo]
            tree = trees.get(parsed.repo, commit)
            if tree is None:
                if source.sha256 == UNHASHED and parsed.repo in not_named:
                    problem(
                        keys_path,
                        k.line,
                        f"{where} has no sha256 and repository {parsed.repo!r} is not at hand "
                        f"to compute it; give its sha256 or the repository "
                        f"(--repo {parsed.repo}=PATH)",
                    )
                continue  # not checked: repository not at hand (or reported above)
            message, actual = tree.problem(parsed.path, source.sha256 or None, span=parsed.end)
            if message:
                problem(keys_path, k.line, f"{where} {message}")
            else:
                checked += 1
            if actual is not None:
                hashes[(parsed.repo, commit, parsed.path)] = actual
    return SourceCheck(
        tuple(sort_problems(problems)),
        problems[0] if problems else None,
        checked,
        tuple(sorted(not_named)),
        hashes,
    )


def sort_problems(problems: Sequence[Problem]) -> list[Problem]:
    """File order (questions, then keys, then any other file), then line order."""
    rank = {QUESTIONS_FILE: 0, KEYS_FILE: 1}
    return sorted(problems, key=lambda p: (rank.get(Path(p.path).name, 2), p.path, p.line))


def line_count(data: bytes) -> int:
    """Lines as git and ``#L<n>`` anchors count them: ended by ``\\n``, the last maybe not."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _normal(path: str) -> bool:
    """A path as git stores it: no empty, ``.`` or ``..`` segment, no leading ``/``."""
    return bool(path) and all(part not in ("", ".", "..") for part in path.split("/"))


class _Tree:
    """One commit's entries, and the bytes of the blobs asked for."""

    def __init__(self, repo: Repository, commit: str, reader: BlobReader) -> None:
        self.repo, self.commit, self.reader = repo, commit, reader
        self.entries: dict[str, tuple[str, str, str]] = {}  # path -> (mode, kind, oid)
        out = subprocess.run(
            ["git", f"--git-dir={repo.git_dir}", "ls-tree", "-r", "-z", "--full-tree", commit],
            capture_output=True,
            check=True,
        ).stdout
        for entry in out.split(b"\0"):
            if entry:
                meta, _, path = entry.partition(b"\t")
                mode, kind, oid = meta.decode().split(" ")
                self.entries[path.decode("utf-8", errors="surrogateescape")] = (mode, kind, oid)
        self.regular = [p for p, (mode, _, _) in self.entries.items() if mode in REGULAR_MODES]
        self._missing: set[str] | None = None

    def problem(
        self, path: str, sha256: str | None, *, span: int | None = None
    ) -> tuple[str | None, str | None]:
        """(why the file at ``path`` cannot be this source or None, its sha256 if read).

        ``span`` is the last line a ``#L<a>-L<b>`` span names: past the file's end, no arm
        could cite it as written (#21).
        """
        short = self.commit[:12]
        entry = self.entries.get(path)
        if entry is None:
            return (
                f"does not exist at as_of {short} of {self.repo.name!r}; fix the path or the "
                "commit",
                None,
            )
        mode, _, oid = entry
        if mode == "120000":
            return (
                f"is a symlink at as_of {short}; workspaces leave symlinks out: cite its target",
                None,
            )
        if mode == "160000":
            return f"is a submodule at as_of {short}; workspaces leave submodules out", None
        if mode not in REGULAR_MODES:
            return f"is not a file at as_of {short} (it is a folder); cite a file in it", None
        if oid in self.missing():
            return (
                f"exists at as_of {short}, but the blob is not in this clone (a partial clone?); "
                "fetch it or point repos: at a full clone",
                None,
            )
        data = self.reader.read(oid)
        if data is None:  # pragma: no cover - ls-tree listed it and it is not missing
            return f"could not be read at as_of {short}", None
        actual = hashlib.sha256(data).hexdigest()
        lines = line_count(data)
        if span is not None and span > lines:
            return (
                f"names line {span}, past the end of the file at as_of {short} ({lines} "
                f"lines); fix the span",
                actual,
            )
        if sha256 is not None and actual != sha256:
            return (
                f"has sha256 {actual} at as_of {short}, not {sha256}; "
                "record the hash of the file at as_of",
                actual,
            )
        return None, actual

    def missing(self) -> set[str]:
        """Blob ids a partial clone lacks, listed without fetching them."""
        if self._missing is None:
            self._missing = set()
            promisor = subprocess.run(
                [
                    "git",
                    f"--git-dir={self.repo.git_dir}",
                    "config",
                    "--get-regexp",
                    r"^(extensions\.partialclone|remote\..*\.promisor)$",
                ],
                capture_output=True,
                check=False,
            )
            if promisor.returncode == 0:  # a partial clone: some blobs may be absent
                out = subprocess.run(
                    [
                        "git",
                        f"--git-dir={self.repo.git_dir}",
                        "rev-list",
                        "--objects",
                        "--missing=print",
                        "--no-walk",
                        self.commit,
                    ],
                    capture_output=True,
                    check=False,
                ).stdout.decode()
                self._missing = {line[1:] for line in out.splitlines() if line.startswith("?")}
        return self._missing


class _Trees:
    """Trees by (repository, commit), read once each."""

    def __init__(self, repos: dict[str, Repository]) -> None:
        self.repos = repos
        self._trees: dict[tuple[str, str], _Tree | None] = {}
        self._readers: dict[str, BlobReader] = {}

    def get(self, name: str, commit: str) -> _Tree | None:
        if (name, commit) not in self._trees:
            repo = self.repos.get(name)
            tree = None
            if repo is not None and repo.has_commit(commit):
                if name not in self._readers:
                    self._readers[name] = BlobReader(repo.git_dir)
                tree = _Tree(repo, commit, self._readers[name])
            self._trees[(name, commit)] = tree
        return self._trees[(name, commit)]

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
