"""The lines a citation points at, read from its repository at the question's ``as_of``.

A cited span is shown with a few lines around it; a citation without a span shows the whole
file. Either is shown a page of :data:`PAGE` lines at a time, and the rater pages through
every line of it (#21: whole files and long spans were cut at 40 and 300 lines). Files are
read through one ``git cat-file --batch`` process per repository and kept in a small cache,
so moving to the next item or page reads at most a few blobs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.suite.records import Question, Source, parse_source_uri
from flightdeck.suite.repos import BlobReader, RepoSet

CONTEXT = 3  # lines shown before and after a cited span
PAGE = 40  # lines on one page of a citation; the rater pages through the rest
_CACHE_FILES = 64
_BINARY = "binary"


@dataclass(frozen=True, slots=True)
class ShownLine:
    number: int  # from 1
    text: str
    cited: bool


@dataclass(frozen=True, slots=True)
class CitationView:
    """One numbered citation: its uri, the lines to show, and a note when there are none."""

    number: int
    uri: str
    lines: tuple[ShownLine, ...]  # the lines of page ``page``
    note: str  # "" when the lines are simply shown
    page: int = 0  # from 0
    pages: int = 1  # pages of PAGE lines over everything this citation shows
    first: int = 0  # the first and last line number over all its pages (0: no lines)
    last: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "uri": self.uri,
            "note": self.note,
            "lines": [[line.number, line.text, line.cited] for line in self.lines],
            "page": self.page,
            "pages": self.pages,
            "first": self.first,
            "last": self.last,
        }


class LineReader:
    """Files at a commit, as lists of lines, through one git process per repository."""

    def __init__(self, repos: RepoSet) -> None:
        self._repos = repos
        self._stack = ExitStack()
        self._readers: dict[str, BlobReader] = {}
        self._cache: OrderedDict[tuple[str, str, str], list[str] | str | None] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, cited: Iterable[tuple[Question, tuple[Source, ...], Path]]) -> None:
        """Fail early, naming the fix, when a cited repository or its as_of commit is missing."""
        self._repos.require_commits(
            (parsed[0], question.as_of[parsed[0]], path, question.line)
            for question, citations, path in cited
            for cite in citations
            if (parsed := _parse(cite.uri)) is not None and parsed[0] in question.as_of
        )

    def lines(self, repo: str, commit: str, path: str) -> list[str] | str | None:
        """The file's lines, ``"binary"`` for a binary file, None when it is not there."""
        key = (repo, commit, path)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            reader = self._readers.get(repo)
            if reader is None:
                reader = self._stack.enter_context(self._repos.get(repo).blobs())
                self._readers[repo] = reader
            data = reader.read(commit, path)
            value: list[str] | str | None
            if data is None:
                value = None
            elif b"\0" in data[:8000]:
                value = _BINARY
            else:  # lines end at \n alone, as git and the #L<n> anchors count them
                text = data.decode("utf-8", errors="replace")
                value = [line.removesuffix("\r") for line in text.split("\n")]
                if value[-1] == "":
                    value.pop()
            self._cache[key] = value
            if len(self._cache) > _CACHE_FILES:
                self._cache.popitem(last=False)
            return value

    def close(self) -> None:
        with self._lock:
            self._stack.close()
            self._readers.clear()


def _parse(uri: str) -> tuple[str, str, int | None, int | None] | None:
    """``(repo, path, start, end)`` of a source uri, or None for an opaque one."""
    parsed = parse_source_uri(uri)
    return None if parsed is None else (parsed.repo, parsed.path, parsed.start, parsed.end)


def cited_lines(
    reader: LineReader, question: Question, citations: Iterable[Source]
) -> tuple[CitationView, ...]:
    """Each citation, numbered from 1, with the first page of its lines at ``as_of``."""
    return tuple(
        cited_page(reader, question, number=number, uri=cite.uri, page=0)
        for number, cite in enumerate(citations, start=1)
    )


def cited_page(
    reader: LineReader, question: Question, *, number: int, uri: str, page: int
) -> CitationView:
    """Page ``page`` (from 0; clamped to the last) of one citation's lines at ``as_of``.

    A span is shown with :data:`CONTEXT` lines around it, a citation without a span as the
    whole file; either in pages of :data:`PAGE` lines.
    """
    parsed = _parse(uri)
    if parsed is None:
        return CitationView(number, uri, (), "not a repository file; not shown")
    repo, path, start, end = parsed
    if repo not in question.as_of:
        return CitationView(
            number, uri, (), f"repository {repo!r} is not in this question's as_of; not shown"
        )
    content = reader.lines(repo, question.as_of[repo], path)
    if content is None:
        return CitationView(number, uri, (), "not found at as_of")
    if isinstance(content, str):
        return CitationView(number, uri, (), "binary file; not shown")
    total = len(content)
    if not total:
        return CitationView(number, uri, (), "empty file")
    note, cited = "", range(0)
    if start is None or end is None:
        first, last = 1, total
    elif start > total:
        first, last = max(1, total - CONTEXT + 1), total
        note = f"the span starts past the end of the file ({total} lines)"
    else:
        first, last = max(1, start - CONTEXT), min(total, end + CONTEXT)
        cited = range(start, min(end, total) + 1)
        if end > total:
            note = f"the span ends past the end of the file ({total} lines)"
    pages = -(-(last - first + 1) // PAGE)
    page = min(max(page, 0), pages - 1)
    top = first + page * PAGE
    shown = _lines(content, top, min(last, top + PAGE - 1), cited=cited)
    return CitationView(number, uri, shown, note, page, pages, first, last)


def _lines(content: list[str], first: int, last: int, *, cited: range) -> tuple[ShownLine, ...]:
    return tuple(ShownLine(n, content[n - 1], n in cited) for n in range(first, last + 1))
