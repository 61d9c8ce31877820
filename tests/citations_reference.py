"""The spec's citation classes in plain Python, one citation at a time: a test oracle.

flightdeck classes citations as polars joins (`scoring/tables.py`); this is the spec read
literally, kept only to hold those frames to it (tests/unit/test_tables.py, test_citations.py)
and as the plain-Python baseline of benchmarks/bench_score.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from flightdeck.suite.citations import CitationClass, is_flagged_unsupported, strip_span


class Cited(Protocol):
    """A cited or valid source: ``schema.Source``, not imported (schema imports this module)."""

    @property
    def uri(self) -> str: ...

    @property
    def sha256(self) -> str: ...


def valid_hashes(valid_sources: Iterable[Cited]) -> dict[str, set[str]]:
    """Valid sources by uri without span -> the hashes they may have: what a citation matches."""
    table: dict[str, set[str]] = {}
    for source in valid_sources:
        table.setdefault(strip_span(source.uri), set()).add(source.sha256)
    return table


def classify_citation(
    citation: Cited,
    valid_sources: Sequence[Cited] | Mapping[str, set[str]],
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
