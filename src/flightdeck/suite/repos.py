"""Repositories by name, read through git itself at a pinned commit.

Files are read with one long-lived ``git cat-file --batch`` process per repository (never a
checkout, never one process per file), so hashes are of the raw blob bytes that git
stores. A git bundle is cloned once, bare, into a cache keyed by the bundle's hash.
"""

from __future__ import annotations

import hashlib
import os
import re
import select
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path
from subprocess import PIPE

from flightdeck.errors import InputError, InternalError


def _git(git_dir: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        input=input,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(git_dir, None, f"git {args[0]} failed: {message[-1] if message else '?'}")
    return proc.stdout


class Repository:
    """One named repository: a clone (work tree or bare) or a bundle file."""

    def __init__(self, name: str, location: Path, cache_dir: Path) -> None:
        self.name = name
        self.location = location
        self.git_dir = _resolve_git_dir(location, cache_dir)

    def has_commit(self, commit: str) -> bool:
        proc = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
            check=False,
        )
        return proc.returncode == 0

    def list_files(self, commit: str) -> list[tuple[str, str]]:
        """``(path, blob id)`` of every file at ``commit`` (symlinks and submodules left out)."""
        out = _git(self.git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
        files = []
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, kind, oid = meta.split(b" ")
            if kind == b"blob" and mode in (b"100644", b"100755"):
                files.append((path.decode("utf-8", errors="surrogateescape"), oid.decode()))
        return files

    def list_entries(self, commit: str) -> list[tuple[str, str, str, int]]:
        """``(path, object id, mode, size)`` of every entry at ``commit``, symlinks (mode
        ``120000``) and submodules (``160000``, size -1) included, for a caller that says
        what it leaves out."""
        out = _git(self.git_dir, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        entries = []
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, _kind, oid, size = meta.split()
            entries.append(
                (
                    path.decode("utf-8", errors="surrogateescape"),
                    oid.decode(),
                    mode.decode(),
                    int(size) if size.isdigit() else -1,
                )
            )
        return entries

    @contextmanager
    def blobs(self) -> Iterator[BlobReader]:
        reader = BlobReader(self.git_dir)
        try:
            yield reader
        finally:
            reader.close()


class BlobReader:
    """A ``git cat-file --batch`` process: many blobs, one process.

    The one reader of cat-file's replies in flightdeck: :meth:`read` asks for one object and
    waits, :meth:`fetch` streams many (the workspace store's blobs). An exchange left half
    done (a fetch its consumer left, an error mid-reply) leaves replies that belong to no
    one: its process is killed and the next call starts a fresh one."""

    def __init__(self, git_dir: Path) -> None:
        self._git_dir = git_dir
        self._proc: subprocess.Popen[bytes] | None = self._start()
        self._half_done = False  # an exchange began and did not read all its replies

    def _start(self) -> subprocess.Popen[bytes]:
        argv = ["git", f"--git-dir={self._git_dir}", "cat-file", "--batch"]
        return subprocess.Popen(argv, stdin=PIPE, stdout=PIPE, stderr=subprocess.DEVNULL)

    def _begin(self) -> subprocess.Popen[bytes]:
        """The process for a new exchange: a fresh one when the last was left half done."""
        if self._half_done or self._proc is None:
            self._discard()
            self._proc = self._start()
        self._half_done = True
        return self._proc

    def read(self, rev: str, path: str | None = None) -> bytes | None:
        """Bytes of ``rev:path`` (or of object ``rev``), or None when it is not a file there."""
        name = rev if path is None else f"{rev}:{path}"
        if "\n" in name:
            return None
        proc = self._begin()
        _send(proc, name.encode("utf-8", errors="surrogateescape") + b"\n")
        data = _reply(proc, name)
        self._half_done = False
        return data

    def fetch(self, oids: list[str]) -> Iterator[tuple[str, bytes | None]]:
        """``(oid, bytes)`` in order, None for an object that is missing or not a blob.

        No thread, no deadlock: git stops reading names while its replies fill the pipe, so
        the names not answered yet stay within what a pipe always holds (``PIPE_BUF``) and
        a write never waits; refilled at half, the window keeps git busy."""
        assert not any("\n" in oid for oid in oids), "an object id holds a newline"
        names = [oid.encode() + b"\n" for oid in oids]
        proc = self._begin()
        sent = pending = 0  # names written; bytes of those whose replies are not read
        try:
            for i, oid in enumerate(oids):
                if pending <= _WINDOW // 2 and (batch := sent) < len(names):
                    while sent < len(names) and pending + len(names[sent]) <= _WINDOW or i == sent:
                        pending, sent = pending + len(names[sent]), sent + 1
                    _send(proc, b"".join(names[batch:sent]))
                data = _reply(proc, oid)
                pending -= len(names[i])
                yield oid, data
                if self._proc is not proc:
                    raise InternalError("BlobReader used by another call while a fetch was open")
        except BaseException:
            if self._proc is proc:
                self._discard()
            raise
        self._half_done = False

    def _discard(self) -> None:
        """Kill the process, whatever replies it still holds; the next call starts another."""
        proc, self._proc, self._half_done = self._proc, None, False
        if proc is not None:
            proc.kill()
            _close(proc)

    def close(self) -> None:
        if self._proc is not None:
            if self._half_done:
                self._proc.kill()
            _close(self._proc)


_WINDOW = select.PIPE_BUF  # bytes an empty pipe takes without a wait (at least 512, POSIX)


def _send(proc: subprocess.Popen[bytes], names: bytes) -> None:
    assert proc.stdin is not None
    with suppress(BrokenPipeError):  # git died: the reply awaited says so
        proc.stdin.write(names)
        proc.stdin.flush()


def _reply(proc: subprocess.Popen[bytes], name: str) -> bytes | None:
    """The answer to one name: the blob's bytes, or None (missing, ambiguous, not a blob)."""
    stdout = proc.stdout
    assert stdout is not None
    header = stdout.readline().rstrip(b"\n")
    if not header:
        raise InternalError(f"git cat-file stopped before answering {name!r}")
    # "<oid> <type> <size>" or "<name> missing"/"ambiguous": a name may hold spaces.
    if header.endswith((b" missing", b" ambiguous")):
        return None
    parts = header.rsplit(b" ", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        raise InternalError(f"git cat-file answered {name!r} with {header[:80]!r}")
    data = stdout.read(int(parts[2]))
    if len(data) != int(parts[2]) or stdout.read(1) != b"\n":
        raise InternalError(f"git cat-file stopped in the middle of {name!r}")
    return data if parts[1] == b"blob" else None


def _close(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with suppress(OSError):
                stream.close()
    proc.wait()


def _resolve_git_dir(location: Path, cache_dir: Path) -> Path:
    if location.is_file():
        return _bundle_clone(location, cache_dir)
    if (location / ".git").exists():
        return location / ".git"
    if (location / "HEAD").is_file() and (location / "objects").is_dir():
        return location  # bare repository
    raise InputError(location, None, "not a git repository or bundle; check params.yaml repos")


def _bundle_clone(bundle: Path, cache_dir: Path) -> Path:
    """The bare clone of a bundle: made once per bundle content, found again by its stat.

    A bundle whose path, size, mtime and inode match one seen before is not read again; a
    changed one is hashed (streamed, never held whole in memory) and cloned when new.
    """
    folder = cache_dir / "bundles"
    info = bundle.stat()
    seen = f"{bundle.resolve()}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}"
    pointer = folder / "by-stat" / hashlib.sha256(seen.encode()).hexdigest()[:24]
    try:
        known = folder / pointer.read_text(encoding="utf-8").strip()
    except OSError:
        pass
    else:
        if known.is_dir():
            return known
    with bundle.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()[:16]
    target = folder / f"{bundle.stem}-{digest}.git"
    if not target.is_dir():
        _clone_bundle(bundle, target)
    pointer.parent.mkdir(parents=True, exist_ok=True)
    tmp = pointer.with_name(f".{pointer.name}.{os.getpid()}.tmp")
    tmp.write_text(target.name + "\n", encoding="utf-8")
    os.replace(tmp, pointer)
    return target


def _clone_bundle(bundle: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".clone-"))
    try:
        proc = subprocess.run(
            ["git", "clone", "--quiet", "--mirror", str(bundle.resolve()), str(tmp / "r.git")],
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            reason = proc.stderr.decode(errors="replace").strip().splitlines()
            raise InputError(
                bundle, None, f"not a readable git bundle: {reason[-1] if reason else '?'}"
            )
        try:
            os.replace(tmp / "r.git", target)
        except OSError:
            if not target.is_dir():  # another process won the race: use theirs
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class RepoSet:
    """Repositories by name, as params.yaml ``repos:`` and ``--repo`` give them.

    ``cache_dir`` is where bundles are cloned: the project's ``ProjectPaths.cache``.
    """

    def __init__(self, locations: Mapping[str, Path], cache_dir: Path) -> None:
        self.locations = dict(locations)
        self.cache_dir = cache_dir
        self._open: dict[str, Repository] = {}

    def get(self, name: str) -> Repository:
        """The repository, or an InputError saying how to point flightdeck at it."""
        if name not in self._open:
            location = self.locations.get(name)
            if location is None:
                raise InputError(
                    "params.yaml",
                    None,
                    f"repository {name!r} is not configured; add it "
                    f"under repos: or pass --repo {name}=PATH",
                )
            if not location.exists():
                raise InputError(
                    location,
                    None,
                    f"repository {name!r} not found at this path; fix repos: in params.yaml "
                    f"or --repo {name}=PATH",
                )
            self._open[name] = Repository(name, location, self.cache_dir)
        return self._open[name]

    def commit_error(
        self, name: str, commit: str, where: str | Path, line: int | None
    ) -> InputError | None:
        """The error for ``commit`` missing from repository ``name``, named at ``where:line``.

        None when the commit is there. The one wording of this error, wherever a commit is
        named (a suite's as_of, a snapshot flag, a cited line's repository).
        """
        repo = self.get(name)
        if repo.has_commit(commit):
            return None
        return InputError(
            where,
            line,
            f"commit {commit} is not in repository {name!r} ({repo.location}); fix the "
            f"commit, fetch it there, or point --repo {name}=PATH at a clone that has it",
        )

    def require_commits(self, needed: Iterable[tuple[str, str, str | Path, int | None]]) -> None:
        """Refuse the first ``(repo, commit, file, line)`` whose commit its repository lacks.

        ``file`` and ``line`` say where the commit was named (a suite file, or a flag), so the
        one message names the place to fix. Each ``(repo, commit)`` is checked once.
        """
        checked: set[tuple[str, str]] = set()
        for name, commit, where, line in needed:
            if (name, commit) in checked:
                continue
            error = self.commit_error(name, commit, where, line)
            if error is not None:
                raise error
            checked.add((name, commit))


# --- scope: git glob pathspecs over "<repo>/<path>" -------------------------------------

_WILDCARD = re.compile(r"[*?\[\\]")


@lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a git ``:(glob)`` pathspec to a regex over whole paths.

    ``*`` and ``?`` stay within a segment; ``**`` as a whole segment spans segments; a pattern
    with no wildcard matches that path and everything under it, as git's pathspecs do.
    """
    if not _WILDCARD.search(pattern):
        return re.compile(re.escape(pattern.rstrip("/")) + r"(?:/.*)?\Z", re.DOTALL)
    parts = pattern.split("/")
    out = []
    for i, seg in enumerate(parts):
        last = i == len(parts) - 1
        if seg == "**":
            out.append(".*" if last else "(?:.*/)?")
        else:
            out.append(_segment_regex(seg) + ("" if last else "/"))
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _segment_regex(seg: str) -> str:
    out, i = [], 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append("[^/]*")
            while i + 1 < len(seg) and seg[i + 1] == "*":
                i += 1
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < len(seg):
            i += 1
            out.append(re.escape(seg[i]))
        elif c == "[":
            end = seg.find("]", i + 2 if seg[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = seg[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\").replace("/", "") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def scope_filter(scope: Iterable[str]) -> Callable[[str], bool]:
    """A predicate over ``<repo>/<path>``: True when the scope allows it (empty = everything)."""
    patterns = [glob_regex(p) for p in scope]
    if not patterns:
        return lambda _uri: True
    return lambda uri: any(p.match(uri) for p in patterns)
