"""The built-in repo-search arm: read and grep the workspace, rank passages with BM25, cite.

It is a real, offline, deterministic baseline with no model. For one question it

1. reads every file under the workspace (``<repo>/<path>``), skipping binary files (a NUL
   byte in the first 8 KiB) and files over 2 MiB;
2. splits each file into passages a reader would quote whole (:mod:`.passages`): markdown
   sections (heading to the next heading of the same or a higher level), YAML entries,
   paragraphs, at most 60 lines each, each also carrying the words of its file's path;
3. scores every passage with BM25 over the question's terms (NFKC, casefolded, stop words
   dropped, folded to stems by :func:`.bm25.stem`; no-break spaces and non-ASCII hyphens
   split words; neighbouring words also count glued together; a CODEOWNERS or OWNERS file's
   path says "owns"), its heading path counted as a second field
   (:func:`.passages.section_arrays`), times the weight the question's kind gives its file
   and section (:mod:`.kinds`: the task's kind, else read from the question);
4. answers with what :mod:`.compose` takes from the best passages (each whole, with its
   heading path; a record's sections for the kind; the records it supersedes or is
   superseded by; a short ownership file whole) and cites the quoted lines as
   ``<repo>/<path>#L<a>-L<b>`` with the SHA-256 of the file's bytes.

``passages="window"`` is the first version's behaviour, kept so that answers rated under it
can be reproduced byte for byte: passages of :data:`WINDOW` lines every :data:`STRIDE`, quoted
as at most 12 lines from the one before the first query word.

Ties are broken by path, then line, so the same workspace and question give the same
answer, byte for byte. The words and the BM25 formula are :mod:`.bm25`'s.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from flightdeck.arms.agents import kinds
from flightdeck.arms.agents.bm25 import (
    bm25_scores,
    occurrences,
    path_terms_of,
    query_words,
    spaced_words,
    stem_occurrences,
    terms_of,
)
from flightdeck.arms.agents.compose import Hit, Quote, cited, compose
from flightdeck.arms.agents.passages import Block, normalise_bytes, section_arrays
from flightdeck.arms.agents.passages import words as text_words

if TYPE_CHECKING:
    pass

WINDOW = 20  # lines per passage
STRIDE = 10  # lines between passage starts
MAX_FILE_BYTES = 2 << 20
MAX_PASSAGES = 3  # passages quoted in the answer
MAX_CITATIONS = 3
MIN_RELATIVE_SCORE = 0.5  # a passage below half the best one's score is not quoted
CONTEXT_LINES = 1  # lines kept before the first line holding a query word
MAX_EXCERPT_LINES = 12  # window mode
MAX_EXCERPT_CHARS = 700  # window mode
MAX_QUOTE_CHARS = 2400  # a whole passage, up to about 40 lines of prose
PASSAGE_MODES = ("section", "window")
MAX_RANKED = 400  # passages, best first, that the answer may draw on (compose.py)
TRACE_LISTED = 20  # skipped files the trace names before it only counts them


@dataclass(frozen=True)
class Passage:
    """One ranked passage; lines are 1-based and inclusive."""

    uri: str
    path: str  # relative to the workspace: "<repo>/<path>"
    start: int
    end: int
    score: float
    text: str


@dataclass(frozen=True)
class SearchResult:
    answer: str
    citations: tuple[tuple[str, str], ...]  # (uri with span, sha256 of the whole file)
    passages: tuple[Passage, ...]  # the quoted ones

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "citations": [{"uri": uri, "sha256": sha} for uri, sha in self.citations],
        }


@dataclass
class _Corpus:
    paths: list[str]
    data: list[bytes]  # the raw bytes read, for hashes and excerpts
    skipped: list[str]


def read_workspace(workspace: Path) -> _Corpus:
    """Every readable text file under the workspace, sorted by path."""
    found: list[tuple[str, os.DirEntry[str]]] = []
    pending = [("", str(workspace))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((prefix + entry.name + "/", entry.path))
                else:
                    found.append((prefix + entry.name, entry))
    found.sort(key=lambda item: item[0])
    corpus = _Corpus([], [], [])
    for path, entry in found:
        try:
            if not entry.is_file(follow_symlinks=False):
                corpus.skipped.append(f"{path}: not a regular file")
                continue
            if entry.stat(follow_symlinks=False).st_size > MAX_FILE_BYTES:
                corpus.skipped.append(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
                continue
            with open(entry.path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            corpus.skipped.append(f"{path}: {exc.strerror}")
            continue
        if b"\0" in data[:8192]:
            corpus.skipped.append(f"{path}: binary")
            continue
        corpus.paths.append(path)
        corpus.data.append(data)
    return corpus


def search(
    workspace: Path,
    question: str,
    *,
    trace: TextIO | None = None,
    passages: str = "section",
    kind: str | None = None,
) -> SearchResult:
    """Answer ``question`` from the files under ``workspace``; write what it did to ``trace``.

    ``passages`` is ``"section"`` (whole sections, blocks, paragraphs) or ``"window"`` (the
    first version's 20-line windows and 12-line excerpts). ``kind`` is the question's kind
    (the task's); when it is none of :data:`.kinds.KINDS` it is read from the question.
    """
    import numpy as np

    if passages not in PASSAGE_MODES:
        raise ValueError(f"passages must be one of {PASSAGE_MODES}, got {passages!r}")

    def log(line: str) -> None:
        if trace is not None:
            trace.write(line + "\n")

    corpus = read_workspace(workspace)
    section = passages == "section"
    words = terms_of(question) if section else query_words(question)
    kind = kinds.kind_of(question, kind)
    asked = kinds.mentions(question)  # the versions and dates it names
    # Every text file is read, so the trace says how many and which were skipped, never
    # the whole list (1.8 MB per trial on a 12,000-file repository).
    total = sum(len(data) for data in corpus.data)
    log(
        f"repo-search: {len(corpus.paths)} files read, {len(corpus.skipped)} skipped "
        f"({total} bytes: every text file of the workspace)"
    )
    for reason in corpus.skipped[:TRACE_LISTED]:
        log(f"skipped {reason}")
    if len(corpus.skipped) > TRACE_LISTED:
        log(f"skipped {len(corpus.skipped) - TRACE_LISTED} more")
    log(f"query words: {' '.join(words) or '(none)'}")
    if section:
        log(f"kind: {kind}")
    if not corpus.paths or not words:
        return _no_answer(log)

    # One buffer of every file, lines separated by "\n"; a second copy with words lowercased
    # and everything else a space, padded so each word has a space on both sides.
    big = b"\n".join(normalise_bytes(data) for data in corpus.data)  # same lines as the data
    flat = spaced_words(big)
    raw = np.frombuffer(big, dtype=np.uint8)
    line_starts = np.concatenate(([0], np.flatnonzero(raw == 10) + 1))
    lines_per_file = np.array([d.count(b"\n") + 1 for d in corpus.data])
    # The lines a reader counts: a final "\n" ends the last line rather than starting one.
    real_lines = lines_per_file - np.array([d.endswith(b"\n") for d in corpus.data], dtype=int)
    file_first_line = np.concatenate(([0], np.cumsum(lines_per_file)[:-1]))
    is_word = np.frombuffer(flat, dtype=np.uint8) != 32
    word_starts = np.flatnonzero(is_word[1:] & ~is_word[:-1])  # offsets into ``big``
    line_ends = np.append(line_starts[1:], len(big))
    words_by_line = np.searchsorted(word_starts, line_ends) - np.searchsorted(
        word_starts, line_starts
    )
    tf_by_line = np.zeros((len(words), len(line_starts)), dtype=np.int64)
    path_words = [path_terms_of(p) if section else text_words(p) for p in corpus.paths]
    tf_path = np.zeros((len(words), len(corpus.paths)))
    for row, word in enumerate(words):
        found = stem_occurrences(flat, word) if section else occurrences(flat, word.encode())
        hits = np.array(found, dtype=np.int64)
        if hits.size:
            tf_by_line[row] = np.bincount(
                np.searchsorted(line_starts, hits, side="right") - 1, minlength=len(line_starts)
            )
        tf_path[row] = [pw.count(word) for pw in path_words]

    if passages == "window":  # WINDOW lines every STRIDE lines, never across files
        per_file = np.maximum(1, -(-(lines_per_file - (WINDOW - STRIDE)) // STRIDE))
        file_of = np.repeat(np.arange(len(corpus.paths)), per_file)
        rank_in_file = np.arange(per_file.sum()) - np.repeat(
            np.cumsum(per_file) - per_file, per_file
        )
        first = file_first_line[file_of] + rank_in_file * STRIDE
        last = np.minimum(first + WINDOW, file_first_line[file_of] + lines_per_file[file_of])
        local: list[Block] = []
    else:
        sections = section_arrays(
            corpus.paths, corpus.data, file_first_line, kind=kind, asked=asked
        )
        file_of, first, last, local = (
            sections.file_of,
            sections.first,
            sections.end,
            sections.blocks,
        )
    cum_words = np.concatenate(([0], np.cumsum(words_by_line)))
    cum_tf = np.concatenate((np.zeros((len(words), 1), dtype=np.int64), tf_by_line.cumsum(1)), 1)
    path_len = np.array([len(pw) for pw in path_words], dtype=np.float64)
    lengths = (cum_words[last] - cum_words[first]).astype(np.float64) + path_len[file_of]
    tf = (cum_tf[:, last] - cum_tf[:, first]).astype(np.float64) + tf_path[:, file_of]
    if section:  # the heading path is a second field: its words count again, in tf and length
        pair_block, pair_line = sections.heading_passage, sections.heading_line
        lengths += np.bincount(pair_block, weights=words_by_line[pair_line], minlength=len(first))
        for row in range(len(words)):
            tf[row] += np.bincount(
                pair_block, weights=tf_by_line[row, pair_line], minlength=len(first)
            )
    scores = bm25_scores(tf, lengths)
    if section:
        scores = scores * sections.weight
    order = np.lexsort((np.arange(len(scores)), -scores))  # best first; ties by path, line

    for i in order[:10]:  # spans as a citation gives them: the file's lines, 1-based
        f = int(file_of[i])
        a = int(first[i] - file_first_line[f]) + 1
        b = max(a, min(int(last[i] - file_first_line[f]), int(real_lines[f])))
        log(f"rank {float(scores[i]):.4f} {corpus.paths[f]}#L{a}-L{b}")
    best = float(scores[order[0]])
    if best <= 0:
        return _no_answer(log)

    if section:
        ranked = [
            Hit(int(file_of[i]), local[i], float(scores[i]))
            for i in order[:MAX_RANKED]
            if scores[i] > 0
        ]
        quotes = compose(corpus.paths, corpus.data, ranked, kind=kind, terms=words, asked=asked)
        chosen = [_passage(corpus, q) for q in quotes]
        cited_passages = [_passage(corpus, q) for q in cited(quotes)]
    else:
        chosen = _windows(corpus, order, scores, file_of, first, last, file_first_line, tf_by_line)
        cited_passages = chosen

    citations: list[tuple[str, str]] = []
    seen: set[str] = set()
    for passage in cited_passages:
        key = passage.uri if section else passage.path
        if key not in seen and (section or len(citations) < MAX_CITATIONS):
            seen.add(key)
            data = corpus.data[corpus.paths.index(passage.path)]
            citations.append((passage.uri, hashlib.sha256(data).hexdigest()))
    answer = "\n\n".join(f"{p.uri}:\n{p.text}" for p in chosen)
    for passage in chosen:
        log(f"quote {passage.uri}")
    for uri, sha in citations:
        log(f"cite {uri} sha256={sha}")
    return SearchResult(answer, tuple(citations), tuple(chosen))


def _passage(corpus: _Corpus, quote: Quote) -> Passage:
    path = corpus.paths[quote.file]
    start, end = quote.start + 1, max(quote.start + 1, quote.end)
    return Passage(f"{path}#L{start}-L{end}", path, start, end, quote.score, quote.text)


def _windows(
    corpus: _Corpus,
    order: Any,
    scores: Any,
    file_of: Any,
    first: Any,
    last: Any,
    file_first_line: Any,
    tf_by_line: Any,
) -> list[Passage]:
    """The first version's choice: up to three non-overlapping windows, 12-line excerpts."""
    best = float(scores[order[0]])
    chosen: list[Passage] = []
    taken: dict[int, list[tuple[int, int]]] = {}
    hit_lines = tf_by_line.sum(axis=0)
    for i in order:
        score = float(scores[i])
        if score < best * MIN_RELATIVE_SCORE or len(chosen) == MAX_PASSAGES:
            break
        f = int(file_of[i])
        lo, hi = int(first[i]), int(last[i])
        if any(lo < t_hi and t_lo < hi for t_lo, t_hi in taken.get(f, [])):
            continue  # overlaps a passage already quoted
        taken.setdefault(f, []).append((lo, hi))
        start = int(file_first_line[f])
        chosen.append(_excerpt(corpus, f, lo, hi, start, hit_lines, score))
    return chosen


def _excerpt(
    corpus: _Corpus,
    file: int,
    lo: int,
    hi: int,
    file_start: int,
    hit_lines: Sequence[int],
    score: float,
) -> Passage:
    """The passage's lines from the one before its first query word, at most a dozen."""
    first_hit = next((n for n in range(lo, hi) if hit_lines[n]), lo)
    lo = max(lo, first_hit - CONTEXT_LINES)
    hi = min(hi, lo + MAX_EXCERPT_LINES)
    text_lines = corpus.data[file].decode("utf-8", "replace").split("\n")
    excerpt = "\n".join(text_lines[lo - file_start : hi - file_start]).strip("\n")
    if len(excerpt) > MAX_EXCERPT_CHARS:
        excerpt = excerpt[: MAX_EXCERPT_CHARS - 3].rstrip() + "..."
    real_lines = len(text_lines) - (1 if text_lines[-1] == "" else 0)
    start = lo - file_start + 1
    end = max(start, min(hi - file_start, real_lines))
    path = corpus.paths[file]
    return Passage(f"{path}#L{start}-L{end}", path, start, end, score, excerpt)


def _no_answer(log: Any) -> SearchResult:
    log("no passage matches the question's words")
    return SearchResult("No passage in the workspace matches the question.", (), ())
