"""Where a document's headings are, and their levels: markdown, reStructuredText, AsciiDoc.

The repo-search arm quotes a document by its sections, so it must see every heading a
reader sees, in the markup the repository writes:

- **Markdown** (``.md``, ``.markdown``, ``.mdx``, also as a docs site's template such as
  ``x.html.md.erb``): ATX headings (``#`` to ``######``) and setext headings (a line
  underlined with ``===``: level 1, or ``---``: level 2). Lines inside fenced code blocks and
  a YAML front matter block (``---`` on the first line to the next ``---``) are never
  headings, and a ``---`` under a list item, a table row or a quote is a rule, not an
  underline.
- **reStructuredText** (``.rst``, ``.rest``, and plain ``.txt`` notes, which often use its
  underlines): a title underlined (and optionally overlined) with one repeated punctuation
  character at least as long as the title. Levels follow the order in which the styles
  first appear, as docutils assigns them; an overlined style is another style than the same
  character underlined alone. Literal blocks (after ``::``) are skipped.
- **AsciiDoc** (``.adoc``, ``.asciidoc``, ``.asc``): ``=`` to ``======`` followed by a space
  (``= Title`` is level 1), also markdown's ``#`` form, which AsciiDoc accepts; lines inside
  delimited blocks (``----``, ``....``, ``````` ``` `````, ``++++``, ``////``) are skipped.

A heading is reported at its title line (for an overlined RST title, the line after the
overline), so the heading's words are that line's words; a section starts there.
"""

from __future__ import annotations

import re

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
TEMPLATE_SUFFIXES = (".erb", ".j2", ".jinja", ".tmpl", ".tpl", ".liquid")  # docs sites' sources
RST_SUFFIXES = (".rst", ".rest", ".txt")
ASCIIDOC_SUFFIXES = (".adoc", ".asciidoc", ".asc")

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_MARKUP_STARTS = frozenset("#`~ =-")  # first characters of a heading, an underline or a fence
_NOT_A_TITLE_RE = re.compile(r"^\s*([-*+>|]|\d+[.)]\s|#|<!--|```|~~~)")
_RST_ADORNMENT_RE = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_ADOC_RE = re.compile(r"^(={1,6}|#{1,6})[ \t]+\S")
_ADOC_DELIMITER_RE = re.compile(r"^(-{4,}|\.{4,}|\+{4,}|/{4,}|_{4,}|\*{4,}|```)[ \t]*$")


def _base_name(name: str) -> str:
    name = name.rsplit("/", 1)[-1].lower()
    for suffix in TEMPLATE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def markup(name: str) -> str | None:
    """The heading markup of a file name: ``"markdown"``, ``"rst"``, ``"asciidoc"`` or none."""
    base = _base_name(name)
    if base.endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    if base.endswith(RST_SUFFIXES):
        return "rst"
    if base.endswith(ASCIIDOC_SUFFIXES):
        return "asciidoc"
    return None


def headings(name: str, lines: list[str]) -> list[tuple[int, int]]:
    """The headings of a file as ``(line, level)``, in file order (lines 0-based)."""
    kind = markup(name)
    if kind == "markdown":
        return _markdown(lines)
    if kind == "rst":
        return _rst(lines)
    if kind == "asciidoc":
        return _asciidoc(lines)
    return []


def _front_matter_end(lines: list[str]) -> int:
    """The first line after a YAML front matter block, or 0 when there is none."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for n in range(1, min(len(lines), 200)):
        if lines[n].rstrip() in ("---", "..."):
            return n + 1
    return 0


def _markdown(lines: list[str]) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    fenced = False
    start = _front_matter_end(lines)
    for n in range(start, len(lines)):
        line = lines[n]
        if line[:1] not in _MARKUP_STARTS:
            continue  # neither a heading, an underline nor a fence: most lines, no regex
        if _FENCE_RE.match(line):
            fenced = not fenced
        elif fenced:
            continue
        elif match := _ATX_RE.match(line):
            found.append((n, len(match[1])))
        elif (match := _SETEXT_RE.match(line)) and _setext_title(lines, n - 1, start, found):
            found.append((n - 1, 1 if match[1][0] == "=" else 2))
    return found


def _setext_title(lines: list[str], n: int, start: int, found: list[tuple[int, int]]) -> bool:
    """Whether line ``n`` is a one-line paragraph the next line's underline makes a title."""
    if n < start or not lines[n].strip() or _NOT_A_TITLE_RE.match(lines[n]):
        return False
    if found and found[-1][0] == n:
        return False
    before = lines[n - 1] if n > start else ""
    after_heading = bool(found) and found[-1][0] == n - 1
    return not before.strip() or bool(_FENCE_RE.match(before)) or after_heading


def _rst(lines: list[str]) -> list[tuple[int, int]]:
    styles: list[tuple[str, bool]] = []  # (character, overlined), in order of first use
    found: list[tuple[int, int]] = []
    literal_indent: int | None = None  # inside a literal block: lines indented past this
    n = 0
    while n < len(lines):
        line = lines[n]
        stripped = line.strip()
        if literal_indent is not None:
            if stripped and len(line) - len(line.lstrip()) <= literal_indent:
                literal_indent = None
            else:
                n += 1
                continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            literal_indent = len(line) - len(line.lstrip())
            n += 1
            continue
        title = _rst_title(lines, n)
        if title is None:
            n += 1
            continue
        at, style, last = title
        if style not in styles:
            styles.append(style)
        found.append((at, min(6, styles.index(style) + 1)))
        n = last + 1
    return found


def _rst_title(lines: list[str], n: int) -> tuple[int, tuple[str, bool], int] | None:
    """An RST title starting at line ``n``: (title line, style, last line), or none."""
    line = lines[n].rstrip()
    over = _RST_ADORNMENT_RE.match(line)
    if over and n + 2 < len(lines):  # overline, title, underline of the same character
        title, under = lines[n + 1], lines[n + 2].rstrip()
        if (
            title.strip()
            and not _RST_ADORNMENT_RE.match(title.rstrip())
            and under == line
            and len(line) >= len(title.rstrip())
        ):
            return n + 1, (line[0], True), n + 2
    if over or not line.strip() or line[:1].isspace() or n + 1 >= len(lines):
        return None
    under = lines[n + 1].rstrip()
    match = _RST_ADORNMENT_RE.match(under)
    if match is None or len(under) < len(line):
        return None
    if n > 0 and lines[n - 1].strip() and not _RST_ADORNMENT_RE.match(lines[n - 1].rstrip()):
        return None  # the last line of a paragraph underlined: a transition, not a title
    return n, (under[0], False), n + 1


def _asciidoc(lines: list[str]) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    delimiter: str | None = None
    for n, line in enumerate(lines):
        stripped = line.rstrip()
        if _ADOC_DELIMITER_RE.match(stripped):
            if delimiter is None:
                delimiter = stripped
            elif stripped == delimiter:
                delimiter = None
            continue
        if delimiter is None and (match := _ADOC_RE.match(line)):
            found.append((n, len(match[1])))
    return found
