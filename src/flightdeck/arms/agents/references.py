"""Which workspace files a line of a document refers to, however the document writes it.

The repo-search arm follows a record's "superseded by" line to the record that supersedes it
(:mod:`.compose`). Repositories write that reference in many ways, and each is read here:

- a markdown link, relative to the document (``[0036](036-multi-cluster.md)``) or to the
  repository's root (``](/docs/adr/0036.md)``), or a link to the same repository on a forge
  (``https://github.com/org/repo/blob/main/docs/adr/0036.md``, also GitLab's ``/-/blob/``
  and ``/tree/``): the path after the ref is looked up as a path of the workspace, and when
  several repositories hold it, the one of the document wins;
- reStructuredText's ``:doc:`title <path>``` and ``:doc:`path``` (``.rst`` added);
- AsciiDoc's ``xref:path.adoc[...]``, ``<<path.adoc#,...>>`` and ``link:path[...]``;
- a record named by its number with no link at all ("Superseded by ADR-0036", "replaced by
  RFC 12", "see decision 7"): the file beside the document whose name starts with that number
  (``0036-...``, ``036-...``, ``adr-036-...``, zero padding ignored).

Paths are ``<repo>/<path>`` as the workspace lists them; a reference that resolves to no file
of the workspace is dropped, never guessed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)")
_FORGE = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]+/(?:[^/]+/)+?(?:-/)?(?:blob|tree|raw)/[^/]+/(.+)$")
_RST_DOC = re.compile(r":doc:`(?:[^`<]*<([^>`]+)>|([^`<]+))`")
_ADOC = re.compile(r"(?:xref:|link:)([^\[\s]+)\[|<<([^#,>\s]+\.adoc)")
_NUMBERED = re.compile(
    r"\b(?:adr|rfc|kep|decision|record|proposal)s?[\s#:_-]*(?:no\.?\s*)?0*(\d{1,5})\b",
    re.IGNORECASE,
)
_DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".erb", ".html")


class References:
    """Resolves the references of one workspace's documents to its paths."""

    def __init__(self, index: Mapping[str, int]) -> None:
        self.index = index
        self._by_tail: dict[str, list[str]] | None = None
        self._numbered: dict[str, dict[int, str]] = {}

    def files(self, path: str, line: str) -> list[int]:
        """The workspace files (their indices) ``line`` of ``path`` refers to, in line order."""
        found: list[int] = []
        for target in self._targets(path, line):
            n = self.index.get(target)
            if n is not None and target != path and n not in found:
                found.append(n)
        return found

    def _targets(self, path: str, line: str) -> list[str]:
        base = posixpath.dirname(path)
        repo = path.split("/", 1)[0]
        targets: list[str] = []
        for raw in _MD_LINK.findall(line):
            targets += self._link(base, repo, raw)
        for titled, bare in _RST_DOC.findall(line):
            target = (titled or bare).strip()
            if not target.endswith(_DOC_SUFFIXES):
                target += ".rst"
            targets += self._link(base, repo, target)
        for xref, inline in _ADOC.findall(line):
            targets += self._link(base, repo, xref or inline)
        for number in _NUMBERED.findall(line):
            beside = self._beside(base).get(int(number))
            if beside is not None:
                targets.append(beside)
        return targets

    def _link(self, base: str, repo: str, raw: str) -> list[str]:
        target = raw.split("#", 1)[0].split("?", 1)[0]
        if not target:
            return []
        forge = _FORGE.match(target)
        if forge:
            return self._by_path_tail(repo, forge[1].strip("/"))
        if "://" in target or target.startswith("mailto:"):
            return []
        if target.startswith("/"):
            return [posixpath.normpath(f"{repo}/{target.lstrip('/')}")]
        return [posixpath.normpath(posixpath.join(base, target))]

    def _by_path_tail(self, repo: str, tail: str) -> list[str]:
        """Workspace paths ``<repo>/<tail>``; the document's own repository first."""
        if self._by_tail is None:
            self._by_tail = {}
            for p in self.index:
                self._by_tail.setdefault(p.split("/", 1)[-1], []).append(p)
        held = self._by_tail.get(tail, [])
        return sorted(held, key=lambda p: (not p.startswith(repo + "/"), p))[:1]

    def _beside(self, folder: str) -> dict[int, str]:
        """The documents of ``folder`` named by a number: ``0036-x.md`` is 36."""
        if folder not in self._numbered:
            numbered: dict[int, str] = {}
            prefix = folder + "/"
            for p in sorted(self.index):
                if not p.startswith(prefix) or "/" in p[len(prefix) :]:
                    continue
                name = p[len(prefix) :].lower()
                match = re.match(r"(?:adr|rfc|kep)?[-_]?0*(\d{1,5})(?:[-_. ]|$)", name)
                if match and name.endswith(_DOC_SUFFIXES):
                    numbered.setdefault(int(match[1]), p)
            self._numbered[folder] = numbered
        return self._numbered[folder]
