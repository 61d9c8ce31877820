"""Where a file's passages start and end: whole sections, blocks and paragraphs, not windows.

A fixed window cuts a decision record or a runbook step in half, and the fact a question asks
for sits just past the quoted lines. So the repo-search arm ranks passages a reader would
quote whole:

- **Markdown**: each heading's section, from the heading to the next heading of the same or
  a higher level (so a section holds its subsections), and the lines before the first
  heading; headings inside fenced code blocks do not count. A section also carries its
  ancestors' heading lines as context (the ADR's title above its "Decision").
- **YAML**: each top-level entry (a key or a ``-`` item at column 0, with the comments just
  above it and everything indented under it).
- **Everything else** (CODEOWNERS, code, plain text): paragraphs, runs of non-blank lines;
  one of fewer than :data:`MIN_LINES` lines joins the next.

A passage longer than :data:`MAX_LINES` is split at its paragraphs into runs of at most that
many lines (a paragraph that is longer still is cut every :data:`MAX_LINES` lines). Lines are
0-based, spans half-open: ``(start, end)``.

:func:`section_arrays` lays every file's passages out as line ranges of the one buffer the arm
counts words in, with each passage's heading path (its own heading and its ancestors', so a
word in a heading counts again) and its weight for the question's kind (:mod:`.kinds`).

This module also normalises text for matching: NFKC, casefolded, with everything but letters
and digits a space, so "on‑call" (a non-breaking hyphen) and "on call", or "10 GB" with a
no-break space, match what the question says.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flightdeck.arms.agents import kinds
from flightdeck.arms.agents.headings import headings, markup

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_LINES = 60  # lines per passage: a generous cap, about a screenful of a document
MENTION_WEIGHT = 1.5  # a section headed with versions or months, none the question names: less
MIN_LINES = 4  # a shorter paragraph joins the next one (a docstring's first line alone says little)
_LABEL_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")  # "# review bot" above CODEOWNERS rules
_NOT_WORD_RE = re.compile(r"[\W_]+")
_NON_ASCII_NOT_WORD_RE = re.compile(r"[^\w\x00-\x7f]+")
YAML_SUFFIXES = (".yaml", ".yml")
YAML_NAMES = ("owners", "owners_aliases")  # Kubernetes-style ownership files are YAML


@dataclass(frozen=True)
class Block:
    """A passage's lines ``[start, end)``, the heading lines above it that give context.

    ``level`` is the heading level of its first line when a heading starts it (1 for a
    document's title), else 0.
    """

    start: int
    end: int
    context: tuple[int, ...] = ()
    level: int = 0


def normalise_line(line: str) -> str:
    """A line as matching sees it: NFKC, casefolded, non-word characters as spaces."""
    return _NOT_WORD_RE.sub(" ", unicodedata.normalize("NFKC", line).casefold())


def normalise_bytes(data: bytes) -> bytes:
    """:func:`normalise_line` over every line of a file, keeping its line count."""
    if data.isascii():
        return data  # ASCII needs none of it: the caller's byte table lowercases
    # The whole file at once, lines kept. ASCII punctuation is left to the caller's byte
    # table (it makes every non-word byte a space); only non-ASCII separators (no-break
    # spaces, non-ASCII hyphens and dashes) need replacing here.
    text = unicodedata.normalize("NFKC", data.decode("utf-8", "replace")).casefold()
    return _NON_ASCII_NOT_WORD_RE.sub(" ", text).encode()


def words(text: str) -> list[str]:
    """The words of a text, normalised as files are."""
    return normalise_line(text).split()


def blocks(path: str, lines: list[str]) -> list[Block]:
    """The passages of one file (``lines`` without their newlines), capped, in file order."""
    name = path.rsplit("/", 1)[-1].lower()
    found: list[Block] = []
    found = _sections(headings(name, lines), len(lines))
    if not found and (name.endswith(YAML_SUFFIXES) or name in YAML_NAMES):
        found = _yaml_entries(lines)
    paragraphs = _paragraphs(lines, 0, len(lines))
    if not found:
        found = [Block(a, b) for a, b in _joined(paragraphs)]
    capped: dict[tuple[int, int], Block] = {}
    for block in found:
        start, end = _trim(lines, block.start, block.end)
        if start >= end:
            continue
        spans = [(start, end)] if end - start <= MAX_LINES else _split(paragraphs, start, end)
        for a, b in spans:
            level = block.level if a == block.start else 0
            if (a, b) not in capped or level > capped[a, b].level:
                # a piece of a long parent that is a whole section is that section
                capped[a, b] = Block(a, b, block.context, level)
    return sorted(capped.values(), key=lambda b: (b.start, b.end))


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int]:
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _paragraphs(lines: list[str], start: int, end: int) -> list[tuple[int, int]]:
    found, begin = [], None
    for n in range(start, end):
        line = lines[n]
        if line and not line.isspace():
            if begin is None:
                begin = n
        elif begin is not None:
            found.append((begin, n))
            begin = None
    if begin is not None:
        found.append((begin, end))
    return found


def _joined(paragraphs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Paragraphs of fewer than MIN_LINES lines joined to the next, within MAX_LINES."""
    runs: list[tuple[int, int]] = []
    for a, b in paragraphs:
        if runs and runs[-1][1] - runs[-1][0] < MIN_LINES and b - runs[-1][0] <= MAX_LINES:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((a, b))
    return runs


def _split(paragraphs: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """Runs of the file's paragraphs within [start, end), at most MAX_LINES lines each."""
    import bisect

    pieces: list[tuple[int, int]] = []
    first = max(0, bisect.bisect_right(paragraphs, (start, end)) - 1)
    for a, b in paragraphs[first:]:
        if a >= end:
            break
        a, b = max(a, start), min(b, end)
        if a >= b:
            continue
        pieces += [(n, min(n + MAX_LINES, b)) for n in range(a, b, MAX_LINES)]
    runs: list[tuple[int, int]] = []
    for a, b in pieces:
        if runs and b - runs[-1][0] <= MAX_LINES:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((a, b))
    return runs


def _sections(found: list[tuple[int, int]], count: int) -> list[Block]:
    """Each heading's section (to the next heading of the same or a higher level)."""
    if not found:
        return []
    # A section ends at the next heading of the same or a higher level: one pass with the
    # open sections on a stack (the ancestors of the heading being read).
    ends = [count] * len(found)
    contexts: list[tuple[int, ...]] = []
    stack: list[int] = []  # indices into found of the open sections
    for i, (at, level) in enumerate(found):
        while stack and found[stack[-1]][1] >= level:
            ends[stack.pop()] = at
        contexts.append(tuple(found[j][0] for j in stack))
        stack.append(i)
    blocks = [Block(0, found[0][0])] if found[0][0] > 0 else []
    blocks += [
        Block(at, end, context, level)
        for (at, level), end, context in zip(found, ends, contexts, strict=True)
    ]
    return blocks


def _yaml_entries(lines: list[str]) -> list[Block]:
    starts = []
    for n, line in enumerate(lines):
        if line[:1] not in ("", " ", "\t", "#") and not line.startswith(("---", "...")):
            begin = n  # the comments just above an entry belong to it
            while begin > 0 and lines[begin - 1].startswith("#"):
                begin -= 1
            starts.append(begin)
    if not starts:
        return []
    ends = [*starts[1:], len(lines)]
    head = [Block(0, starts[0])] if starts[0] > 0 else []
    return head + [Block(a, b) for a, b in zip(starts, ends, strict=True)]


_ASCII_WORD_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class SectionArrays:
    """Every file's passages as line ranges of the one buffer, one entry per passage.

    ``heading_passage[i]`` and ``heading_line[i]`` are one pair: a passage and a (global) line
    of its heading path.
    """

    file_of: npt.NDArray[np.int64]  # the file of each passage
    first: npt.NDArray[np.int64]  # its first line in the buffer
    end: npt.NDArray[np.int64]  # the line after its last, in the buffer
    blocks: list[Block]  # its block in its own file's lines (0-based)
    heading_passage: npt.NDArray[np.int64]
    heading_line: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]  # its weight for the question's kind


def section_arrays(
    paths: list[str],
    data: list[bytes],
    file_first_line: npt.NDArray[np.int64],
    *,
    kind: str,
    asked: frozenset[kinds.Mention] = frozenset(),
) -> SectionArrays:
    """Every file's passages (:func:`.passages.blocks`) as global line ranges.

    Each passage's heading path comes as (passage, global line) pairs, and its weight for the
    question's kind (:func:`.kinds.file_weight` of its path and of what its headings show,
    times :func:`.kinds.section_weight`), divided by :data:`MENTION_WEIGHT` when its heading
    path (or its file's name) names versions or dates and none the question ``asked`` about
    (:func:`.kinds.mentions`): a changelog's other releases, a status page's other weeks,
    ``releases/v1.1.md`` when 1.2 is asked. Dividing the others, rather
    than multiplying the one asked, leaves the best score where the words put it, so the
    other documents that answer keep their place beside it.
    """
    import numpy as np

    files: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    local: list[Block] = []
    pair_block: list[int] = []
    pair_line: list[int] = []
    weights: list[float] = []
    for f, (path, raw) in enumerate(zip(paths, data, strict=True)):
        lines = raw.decode("utf-8", "replace").split("\n")
        found = blocks(path, lines) or [Block(0, len(lines))]
        offset = int(file_first_line[f])
        titles = [lines[b.start] for b in found if b.level]
        file_weight = kinds.file_weight(kind, path, kinds.content_classes(titles))
        labelled = markup(path) is None  # a comment opening a block of rules labels it
        heading_words: dict[int, set[str]] = {}
        named: dict[int, frozenset[kinds.Mention]] = {}
        by_name = kinds.mentions(path.rsplit("/", 1)[-1]) if asked else frozenset()
        for block in found:
            own = (
                (block.start,)
                if block.level or labelled and _LABEL_RE.match(lines[block.start])
                else ()
            )
            path_lines = block.context + own
            said: set[str] = set()
            for n in path_lines:
                if n not in heading_words:  # a heading's ASCII words: what section names use
                    heading_words[n] = set(_ASCII_WORD_RE.findall(lines[n].lower()))
                said |= heading_words[n]
                pair_block.append(len(files))
                pair_line.append(offset + n)
            weight = file_weight * kinds.section_weight(kind, said)
            if asked:
                for n in path_lines:
                    if n not in named:
                        named[n] = kinds.mentions(lines[n])
                named_here = [named[n] for n in path_lines if named[n]]
                if by_name:
                    named_here.append(by_name)
                if named_here and not any(kinds.names_the_same(asked, m) for m in named_here):
                    weight /= MENTION_WEIGHT
            weights.append(weight)
            files.append(f)
            starts.append(offset + block.start)
            ends.append(offset + block.end)
            local.append(block)
    as_array = np.array
    return SectionArrays(
        file_of=as_array(files, dtype=np.int64),
        first=as_array(starts, dtype=np.int64),
        end=as_array(ends, dtype=np.int64),
        blocks=local,
        heading_passage=as_array(pair_block, dtype=np.int64),
        heading_line=as_array(pair_line, dtype=np.int64),
        weight=as_array(weights, dtype=np.float64),
    )
