"""How the repo-search arm composes an answer from its ranked passages (whole-passage mode).

BM25 finds where the question's words are; the fact the question asks for is often a
section away (the "Decision" under the "Status" line that matched, the superseding record
the old one points to, the whole OWNERS file rather than its comment). So, from the best
passages (every one within :data:`MIN_RELATIVE_SCORE` of the best, from at most
:data:`MAX_FILES` files), the answer quotes:

1. each passage whole, with its section's heading path above it;
2. for a structured record (a markdown file with a few sections named as the question's kind
   answers them: context/decision/consequences for decision-why, status/decision/update for
   what-changed, status/known issues for a blocker; see :mod:`.kinds`), those sections of
   the same file too;
3. the records it links to from a line that says it supersedes, is superseded by, replaces,
   amends or is replaced by another (relative markdown links that resolve in the
   workspace), with their record sections: an old decision's "Superseded by 0036" is
   followed to 0036's decision, and a new one's "supersedes 0003" back to what it changed;
4. a short ownership file (CODEOWNERS, OWNERS, MAINTAINERS) whole; of a long one, the
   passage that matched and its catch-all rule (``* @team``: who owns everything else).

The whole answer stays under :data:`MAX_ANSWER_CHARS`, each quote under
:data:`MAX_QUOTE_CHARS`, cut at a line's end; each quote's citation spans exactly the lines
it quotes (its heading path above is context, not cited). Quotes are cited when their
passage scored within :data:`CITE_RELATIVE_SCORE` of the best, or they were added for a
cited one (its record sections, its superseding record): a citation names a file the answer
leans on, not every file it mentions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flightdeck.arms.agents import kinds
from flightdeck.arms.agents.bm25 import stem
from flightdeck.arms.agents.headings import markup
from flightdeck.arms.agents.passages import Block, blocks, words
from flightdeck.arms.agents.references import References

MAX_FILES = 4  # files the ranked passages may bring into one answer
MIN_RELATIVE_SCORE = 0.5  # a passage below half the best one's score is not quoted
CITE_RELATIVE_SCORE = 0.8  # nor cited below 80% of it, unless added for a cited one
MAX_QUOTE_CHARS = 2400  # one passage, up to about 40 lines of prose
MAX_ANSWER_CHARS = 7000  # the whole answer: about three pages a reader would skim
MAX_RECORD_CHARS = 3600  # one file's added record sections stop here: room for other files
_CATCH_ALL = re.compile(r"^\s*(\*|/|/\*|\*\*(/\*)?)\s+[@\w]")  # CODEOWNERS' default rule
MAX_SECTION_CHARS = 6000  # one file's quotes, when a cut section is continued
MAX_CITATIONS = 4
CONTEXT_LINES = 1  # a cut passage starts this many lines before its first match
MAX_RECORD_SECTIONS = 8  # a file with more matching sections is a log, not one record
MAX_RANKED_NAMED = 20  # ranked passages looked at for one headed with what the question names
MAX_OWNERSHIP_LINES = 60  # an ownership file this short is quoted whole
# A line pointing to the records that replace this one (followed for every kind), and one
# pointing back to those it replaces (followed when the question asks what changed).
_FORWARD = re.compile(
    r"supe[rs][sc]eded\s+(?:by|in)|replaced\s+by|obsoleted\s+by|amended\s+by|deprecated\s+by"
    r"|in\s+favou?r\s+of|see\s+instead|moved\s+to",
    re.IGNORECASE,
)
_BACKWARD = re.compile(
    r"supe[rs][sc]edes\b|supersedes:|replaces\b|amends\b|obsoletes\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Hit:
    """A ranked passage: its file's index, its block (0-based lines), its score."""

    file: int
    block: Block
    score: float


@dataclass(frozen=True)
class Quote:
    """What the answer quotes from one file: lines ``[start, end)``, and whether it is cited."""

    file: int
    start: int
    end: int
    text: str  # the heading path, then the quoted lines
    score: float
    cited: bool


class _Answer:
    def __init__(
        self,
        paths: list[str],
        data: list[bytes],
        kind: str,
        terms: frozenset[str],
        asked: frozenset[kinds.Mention],
    ) -> None:
        self.paths, self.data, self.kind, self.terms = paths, data, kind, terms
        self.asked = asked
        self.index = {path: n for n, path in enumerate(paths)}
        self.references = References(self.index)
        self.quotes: list[Quote] = []
        self.used = 0
        self.used_by_file: dict[int, int] = {}
        self._lines: dict[int, list[str]] = {}
        self._blocks: dict[int, list[Block]] = {}

    def lines(self, file: int) -> list[str]:
        if file not in self._lines:
            self._lines[file] = self.data[file].decode("utf-8", "replace").split("\n")
        return self._lines[file]

    def blocks(self, file: int) -> list[Block]:
        if file not in self._blocks:
            lines = self.lines(file)
            self._blocks[file] = blocks(self.paths[file], lines) or [Block(0, len(lines))]
        return self._blocks[file]

    def add(
        self, file: int, block: Block, score: float, cited: bool, *, extra: bool = False
    ) -> bool:
        """Quote a block unless it overlaps one already quoted or the answer is full.

        An ``extra`` block (a record section added, not ranked) also stops at
        :data:`MAX_RECORD_CHARS` for its file.
        """
        if extra and self.used_by_file.get(file, 0) >= MAX_RECORD_CHARS:
            return False
        for q in self.quotes:
            if q.file == file and block.start < q.end and q.start < block.end:
                return False
        room = min(MAX_QUOTE_CHARS, MAX_ANSWER_CHARS - self.used)
        if extra:
            room = min(room, MAX_RECORD_CHARS - self.used_by_file.get(file, 0))
        lines = self.lines(file)
        heads = [lines[n].strip() for n in block.context if n < block.start]
        start = block.start
        if sum(len(lines[n]) + 1 for n in range(block.start, block.end)) > room:
            start = self.first_hit(file, block, room - sum(len(h) + 1 for h in heads))
            if start > block.start and block.level:
                heads.append(lines[block.start].strip())
        body: list[str] = []
        size = sum(len(h) + 1 for h in heads)
        end = start
        for n in range(start, block.end):
            if body and size + len(lines[n]) + 1 > room:
                break
            body.append(lines[n])
            size += len(lines[n]) + 1
            end = n + 1
        while end > start + 1 and not body[-1].strip():
            body.pop()
            end -= 1
        if not body or size > room + MAX_QUOTE_CHARS // 2:
            return False
        if block.level and start == block.start and not any(b.strip() for b in body[1:]):
            return False  # a heading alone (its section empty, or no room for its text)
        text = "\n".join([*heads, *body])
        if len(text) > MAX_QUOTE_CHARS:  # one line longer than a quote: cut it, say so
            text = text[: MAX_QUOTE_CHARS - 3].rstrip() + "..."
        self.quotes.append(Quote(file, start, end, text, score, cited))
        self.used += len(text) + len(self.paths[file]) + 20
        self.used_by_file[file] = self.used_by_file.get(file, 0) + len(text)
        return True

    def continue_section(self, file: int, block: Block, score: float, cited: bool) -> None:
        """After a quoted block cut short (by the quote's size, or at :data:`.passages.MAX_LINES`
        lines), the rest of its section: the block's remaining lines, then its next piece.

        A runbook's later steps, a record's context past its first screen: the fact is often
        just past the cut. In a document only, while its file has quoted less than
        :data:`MAX_SECTION_CHARS`.
        """
        if markup(self.paths[file]) is None:
            return
        end = self.quotes[-1].end
        if end < block.end:
            rest = Block(end, block.end, block.context)
            if not self.add_continued(file, rest, score, cited):
                return
            if self.quotes[-1].end < block.end:
                return
        lines = self.lines(file)
        for b in self.blocks(file):
            if b.start < block.end:
                continue
            if b.level or b.context != block.context:
                return  # the section ended: the next block is a heading's
            if all(not lines[n].strip() for n in range(block.end, b.start)):
                self.add_continued(file, b, score, cited)
            return

    def add_continued(self, file: int, block: Block, score: float, cited: bool) -> bool:
        """Quote more of a section while its file has quoted under :data:`MAX_SECTION_CHARS`."""
        if self.used_by_file.get(file, 0) >= MAX_SECTION_CHARS:
            return False
        return self.add(file, block, score, cited)

    def first_hit(self, file: int, block: Block, room: int) -> int:
        """Where to start quoting a block too long to quote whole, within ``room`` characters.

        The line holding most of the question's terms (the first such: in a long CODEOWNERS
        block every rule may name the folder, and only one the file asked about) must be in
        the quote; of the starts that keep it in, the one whose ``room`` holds the most
        distinct terms wins, the earliest on a tie (a two-part question's first answer sits
        above its second). The line before the best line is the latest start. A line that
        names the version or date the question asks about counts one term more (a dated list).
        """
        lines = self.lines(file)
        found = [
            self.terms.intersection(stem(word) for word in words(lines[n]))
            for n in range(block.start, block.end)
        ]
        if self.asked:  # a line naming the version or date asked counts as one more term
            for i, n in enumerate(range(block.start, block.end)):
                if kinds.names_the_same(self.asked, kinds.mentions(lines[n])):
                    found[i] = found[i] | {"\0asked"}
        sizes = [len(lines[n]) + 1 for n in range(block.start, block.end)]
        best = max(range(len(found)), key=lambda i: (len(found[i]), -i))
        if not found[best]:
            return block.start
        chosen, chosen_count = max(0, best - CONTEXT_LINES), -1
        for start in range(max(0, best - CONTEXT_LINES), -1, -1):
            size, said = 0, set[str]()
            for i in range(start, len(found)):
                size += sizes[i]
                if size > room and i > best:
                    break
                said |= found[i]
            if sum(sizes[start : best + 1]) > room:
                break  # the best line would fall out of the quote
            if len(said) >= chosen_count:
                chosen, chosen_count = start, len(said)
        return block.start + chosen

    def full(self) -> bool:
        return self.used >= MAX_ANSWER_CHARS - 200

    def record_sections(self, file: int, kind: str) -> list[Block]:
        """The file's sections whose own heading names a section ``kind`` quotes.

        When the question names a version or a date, a section headed with another one (a
        changelog's other releases, a status page's other weeks) is not one of them.
        """
        if markup(self.paths[file]) is None:
            return []
        lines = self.lines(file)
        found = [
            b
            for b in self.blocks(file)
            if b.level >= 2
            and kinds.is_record_section(kind, set(words(lines[b.start])))
            and not (self.asked and self.names_only_others(Hit(file, b, 0.0)))
        ]
        return found if len(found) <= MAX_RECORD_SECTIONS else []

    def path_mentions(self, hit: Hit) -> list[frozenset[kinds.Mention]]:
        """The versions and dates its heading path names, and its file's name."""
        lines = self.lines(hit.file)
        own = (hit.block.start,) if hit.block.level else ()
        name = kinds.mentions(self.paths[hit.file].rsplit("/", 1)[-1])
        return [name, *(kinds.mentions(lines[n]) for n in (*hit.block.context, *own))]

    def names_asked(self, hit: Hit) -> bool:
        return any(kinds.names_the_same(self.asked, m) for m in self.path_mentions(hit))

    def names_only_others(self, hit: Hit) -> bool:
        named = self.path_mentions(hit)
        return any(named) and not any(kinds.names_the_same(self.asked, m) for m in named)

    def linked(self, file: int) -> list[int]:
        """Files this one says it is superseded by, replaced by, ... (for what-changed, also
        those it supersedes, replaces, amends).

        However the line refers to them (:mod:`.references`: links, forge URLs, RST and
        AsciiDoc cross-references, a record's number).
        """
        found: list[int] = []
        backward = self.kind == "what-changed"
        for line in self.lines(file):
            if _FORWARD.search(line) or backward and _BACKWARD.search(line):
                found += [
                    n for n in self.references.files(self.paths[file], line) if n not in found
                ]
        return found


def compose(
    paths: list[str],
    data: list[bytes],
    ranked: list[Hit],
    *,
    kind: str,
    terms: list[str],
    asked: frozenset[kinds.Mention] = frozenset(),
) -> list[Quote]:
    """The quotes of one answer, in the order the answer gives them.

    ``terms`` are the question's (stems, :func:`.bm25.terms_of`): a passage too long to quote
    whole is quoted from the line before the first that holds one. ``asked``: the versions
    and dates the question names (:func:`.kinds.mentions`).
    """
    answer = _Answer(paths, data, kind, frozenset(terms), asked)
    if not ranked:
        return []
    best = ranked[0].score
    files: list[int] = []
    best_hit: dict[int, Hit] = {}
    for hit in ranked:
        best_hit.setdefault(hit.file, hit)
    # When the question names a version or a date that some ranked section is headed with,
    # the sections headed with other ones only are not quoted (the other releases, weeks).
    pick = answer.asked and any(answer.names_asked(h) for h in ranked[:MAX_RANKED_NAMED])
    for hit in ranked:
        if hit.score < best * MIN_RELATIVE_SCORE or answer.full():
            break
        if pick and answer.names_only_others(hit):
            continue
        first = hit.file not in files
        if first and len(files) == MAX_FILES:
            continue
        cited = hit.score >= best * CITE_RELATIVE_SCORE
        lines = answer.lines(hit.file)
        ownership = first and "ownership" in kinds.file_classes(paths[hit.file])
        if ownership and len(lines) <= MAX_OWNERSHIP_LINES:
            answer.add(hit.file, Block(0, len(lines)), hit.score, cited)
        elif ownership:  # a long one: the rule that matched, and the owners of everything else
            answer.add(hit.file, hit.block, hit.score, cited)
            for n, line in enumerate(lines):
                if _CATCH_ALL.match(line):
                    answer.add(hit.file, Block(n, n + 1), hit.score, cited, extra=True)
        elif answer.add(hit.file, hit.block, hit.score, cited):
            answer.continue_section(hit.file, hit.block, hit.score, cited)
        if not first:
            continue
        files.append(hit.file)
        for block in answer.record_sections(hit.file, kind):
            answer.add(hit.file, block, hit.score, cited, extra=True)
        for other in answer.linked(hit.file):
            target = best_hit.get(other)
            if target is not None:
                answer.add(other, target.block, hit.score, cited)
            for block in answer.record_sections(other, "what-changed") + answer.record_sections(
                other, kind
            ):
                answer.add(other, block, hit.score, cited, extra=True)
    by_file: dict[int, int] = {}  # quotes of one file together, in file order
    for n, q in enumerate(answer.quotes):
        by_file.setdefault(q.file, n)
    return sorted(answer.quotes, key=lambda q: (by_file[q.file], q.start))


def cited(quotes: list[Quote]) -> list[Quote]:
    """The quotes the answer cites: at most :data:`MAX_CITATIONS`, in answer order."""
    return [q for q in quotes if q.cited][:MAX_CITATIONS]
