"""Classify each citation exactly as the spec orders it: fabricated, stale, unsupported, valid."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from flightdeck.suite.records import OPAQUE_RE, Source


class CitationClass(StrEnum):
    FABRICATED = "fabricated"  # matches none of the question's valid sources
    STALE = "stale"  # matches one, but the content the arm saw differs
    UNSUPPORTED = "unsupported"  # a rater says the cited span does not support the claim
    VALID = "valid"


def strip_span(uri: str) -> str:
    """``sdlc/a.md#L3-L9`` -> ``sdlc/a.md``; opaque uris (``https://…#frag``) stay whole."""
    if OPAQUE_RE.match(uri):
        return uri
    base, sep, span = uri.rpartition("#")
    return base if sep and span.startswith("L") else uri


def is_flagged_unsupported(uri: str, flagged: Iterable[str]) -> bool:
    """A rater's entry flags a citation when equal to it, or spanless and equal to its file."""
    bare = strip_span(uri)
    return any(entry == uri or (entry == strip_span(entry) and entry == bare) for entry in flagged)


def valid_hashes(valid_sources: Iterable[Source]) -> dict[str, set[str]]:
    """Valid sources by uri without span -> the hashes they may have: what a citation matches."""
    table: dict[str, set[str]] = {}
    for source in valid_sources:
        table.setdefault(strip_span(source.uri), set()).add(source.sha256)
    return table


def classify_citation(
    citation: Source,
    valid_sources: Sequence[Source] | Mapping[str, set[str]],
    flagged: Iterable[str],
) -> CitationClass:
    """Class of one citation, in the spec's order (the first that applies wins).

    ``valid_sources`` may be given as :func:`valid_hashes` of them, to classify many
    citations of one question without redoing that work.
    """
    table = valid_sources if isinstance(valid_sources, Mapping) else valid_hashes(valid_sources)
    hashes = table.get(strip_span(citation.uri))
    if hashes is None:
        return CitationClass.FABRICATED
    if citation.sha256 not in hashes:
        return CitationClass.STALE
    if flagged and is_flagged_unsupported(citation.uri, flagged):
        return CitationClass.UNSUPPORTED
    return CitationClass.VALID


def opaque_sha256(uri: str) -> str:
    """The hash an opaque uri (a URL) gets when none is given: that of the uri itself.

    flightdeck never fetches a URL, so it has no bytes to hash. The author's valid source and
    a person's citation of the same URL both default to this, so they match as whole strings
    (the spec's rule for opaque uris); a hash given on either side is compared as given.
    """
    return hashlib.sha256(uri.encode("utf-8", "surrogatepass")).hexdigest()
