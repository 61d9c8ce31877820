"""Classify each citation exactly as the spec orders it: fabricated, stale, unsupported, valid."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from flightdeck.formats import OPAQUE_RE, Source


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


def classify_citation(
    citation: Source, valid_sources: Sequence[Source], flagged: Iterable[str]
) -> CitationClass:
    """Class of one citation, in the spec's order (the first that applies wins)."""
    bare = strip_span(citation.uri)
    matches = [s for s in valid_sources if strip_span(s.uri) == bare]
    if not matches:
        return CitationClass.FABRICATED
    if all(s.sha256 != citation.sha256 for s in matches):
        return CitationClass.STALE
    if is_flagged_unsupported(citation.uri, flagged):
        return CitationClass.UNSUPPORTED
    return CitationClass.VALID
