"""The LLM agent's tools: grep, read, list and submit over the workspace, and nothing else.

:class:`WorkspaceTools` does the work in plain Python (tested without a model);
:func:`inspect_tools` wraps it as inspect_ai tools. The tools only read files under the
workspace (``<repo>/<path>``): paths are checked against it after resolving symlinks, and
nothing is written. :meth:`WorkspaceTools.cite` hashes the cited file's bytes as it reads
them, so the model names what it cites but never supplies a hash.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.errors import ToolFailure
from flightdeck.suite.records import parse_source_uri

if TYPE_CHECKING:
    from inspect_ai.tool import Tool

MAX_GREP_HITS = 60
MAX_LINE_CHARS = 300
MAX_READ_LINES = 400
MAX_LIST = 500
MAX_CITATIONS = 8


@functools.lru_cache(maxsize=256)
def glob_regex(glob: str) -> re.Pattern[str]:
    """A glob over ``<repo>/<path>``: ``**`` spans folders, ``*`` and ``?`` do not."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass
class WorkspaceTools:
    """Read-only access to one trial's workspace; remembers what it read for the trace."""

    root: Path
    read_paths: list[str] = field(default_factory=list)
    _files: list[str] | None = None

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def files(self) -> list[str]:
        """Every regular file, as ``<repo>/<path>``, sorted."""
        if self._files is None:
            self._files = sorted(
                p.relative_to(self.root).as_posix()
                for p in self.root.rglob("*")
                if p.is_file() and not p.is_symlink()
            )
        return self._files

    def _bytes(self, path: str) -> bytes:
        path = path.strip().lstrip("/")
        if not path or any(part in ("", ".", "..") for part in path.split("/")):
            raise ToolFailure(f"{path!r}: give a path as <repo>/<path>, without '..'")
        full = (self.root / path).resolve()
        if not full.is_relative_to(self.root) or not full.is_file():
            raise ToolFailure(f"{path}: no such file in the workspace; use list or grep")
        data = full.read_bytes()
        if path not in self.read_paths:
            self.read_paths.append(path)
        return data

    def list_files(self, glob: str | None = None) -> str:
        """The files matching ``glob`` (all files without one), one per line."""
        pattern = glob_regex(glob or "**")
        found = [p for p in self.files() if pattern.match(p)]
        if not found:
            return f"no file matches {glob!r}"
        shown = found[:MAX_LIST]
        more = len(found) - len(shown)
        return "\n".join(shown) + (f"\n... {more} more; narrow the glob" if more else "")

    def grep(self, pattern: str, glob: str | None = None) -> str:
        """Lines matching a case-insensitive regex, as ``path:line: text``."""
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ToolFailure(f"bad regular expression {pattern!r}: {exc}") from None
        paths = glob_regex(glob or "**")
        hits: list[str] = []
        total = 0
        for path in self.files():
            if not paths.match(path):
                continue
            data = (self.root / path).read_bytes()
            if b"\0" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if regex.search(line):
                    total += 1
                    if len(hits) < MAX_GREP_HITS:
                        hits.append(f"{path}:{number}: {_clip(line)}")
        if not hits:
            return f"no line matches {pattern!r}" + (f" in {glob!r}" if glob else "")
        more = total - len(hits)
        return "\n".join(hits) + (f"\n... {more} more matches; narrow it" if more else "")

    def read(self, path: str, start: int | None = None, end: int | None = None) -> str:
        """Lines ``start``..``end`` (1-based, inclusive) of a file, numbered ``N: text``."""
        lines = self._bytes(path).decode("utf-8", "replace").splitlines()
        first = max(1, start or 1)
        last = min(len(lines), end if end is not None else first + MAX_READ_LINES - 1)
        last = min(last, first + MAX_READ_LINES - 1)
        if not lines:
            return f"{path} is empty"
        if first > len(lines):
            raise ToolFailure(f"{path} has {len(lines)} lines; start at most {len(lines)}")
        body = "\n".join(f"{n}: {lines[n - 1]}" for n in range(first, last + 1))
        if last < len(lines):
            body += f"\n... {len(lines) - last} more lines (read from {last + 1})"
        return body

    def cite(self, uri: str) -> tuple[str, str]:
        """``(uri, sha256)`` of a cited workspace file, the hash taken from its bytes now."""
        uri = uri.strip()
        parsed = parse_source_uri(uri)
        if parsed is None:
            raise ToolFailure(f"citation {uri!r} is not <repo>/<path>[#La-Lb]")
        data = self._bytes(f"{parsed.repo}/{parsed.path}")
        count = len(data.decode("utf-8", "replace").splitlines())
        start, end = parsed.start, parsed.end
        if start is not None and end is not None and not 1 <= start <= end <= count:
            raise ToolFailure(f"citation {uri!r}: lines must be within 1-{count} and in order")
        return uri, hashlib.sha256(data).hexdigest()

    def citations(self, uris: list[str]) -> list[tuple[str, str]]:
        """Every uri checked and hashed, duplicates dropped; the first bad one raises."""
        if len(uris) > MAX_CITATIONS:
            raise ToolFailure(f"cite at most {MAX_CITATIONS} sources, got {len(uris)}")
        seen: dict[str, str] = {}
        for uri in uris:
            cited, digest = self.cite(uri)
            seen.setdefault(cited, digest)
        return list(seen.items())


def _clip(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 3] + "..."


@dataclass
class Submission:
    """What the agent submitted, filled in by the submit tool."""

    answer: str | None = None
    citations: list[tuple[str, str]] = field(default_factory=list)


def inspect_tools(workspace: WorkspaceTools) -> list[Tool]:
    """grep, read and list as inspect tools (submit is :func:`submit_tool`)."""
    from inspect_ai.tool import ToolError, tool

    @tool(name="grep")
    def grep_tool() -> Tool:
        async def execute(pattern: str, glob: str | None = None) -> str:
            """Search the workspace's files for lines matching a regular expression.

            Args:
                pattern: A case-insensitive Python regular expression.
                glob: Only search files matching this glob over <repo>/<path>, e.g.
                    "sdlc/docs/**/*.md" (** spans folders).

            Returns:
                Matching lines as "<repo>/<path>:<line>: <text>".
            """
            try:
                return workspace.grep(pattern, glob)
            except ToolFailure as exc:
                raise ToolError(str(exc)) from None

        return execute

    @tool(name="read")
    def read_tool() -> Tool:
        async def execute(path: str, start: int | None = None, end: int | None = None) -> str:
            """Read a file of the workspace, with numbered lines.

            Args:
                path: The file, as <repo>/<path>.
                start: The first line to read (1-based); the file's start without it.
                end: The last line to read (inclusive); up to 400 lines without it.

            Returns:
                The lines as "<number>: <text>".
            """
            try:
                return workspace.read(path, start, end)
            except ToolFailure as exc:
                raise ToolError(str(exc)) from None

        return execute

    @tool(name="list")
    def list_tool() -> Tool:
        async def execute(glob: str | None = None) -> str:
            """List the workspace's files.

            Args:
                glob: Only files matching this glob over <repo>/<path> (** spans folders).

            Returns:
                One <repo>/<path> per line.
            """
            return workspace.list_files(glob)

        return execute

    return [grep_tool(), read_tool(), list_tool()]


def submit_tool(workspace: WorkspaceTools, submission: Submission) -> Any:
    """The submit tool: checks every citation against the workspace before accepting."""
    import json

    from inspect_ai.tool import ToolError, tool

    @tool(name="submit")
    def submit() -> Tool:
        async def execute(answer: str, citations: list[str]) -> str:
            """Submit the final answer and the sources that support it.

            Args:
                answer: The answer to the question, complete and self-contained.
                citations: The sources, each "<repo>/<path>" or "<repo>/<path>#L<a>-L<b>"
                    for the lines that support the answer.

            Returns:
                The accepted submission.
            """
            try:
                checked = workspace.citations(list(citations))
            except ToolFailure as exc:
                raise ToolError(f"{exc}; fix the citations and submit again") from None
            submission.answer = answer
            submission.citations = checked
            return json.dumps({"answer": answer, "citations": [uri for uri, _ in checked]})

        return execute

    return submit()
