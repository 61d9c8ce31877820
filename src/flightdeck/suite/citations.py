"""Source uris and the citations that name them: what a uri is, and how a citation is classed.

The one place that decides what a uri is: ``<repo>/<path>[#L<start>[-L<end>]]`` or an opaque
``scheme:...`` string. The record schema (``schema.py``) checks the shape with
:data:`URI_PATTERN` in msgspec and the span order with :func:`span_in_order`; the harness
protocol, the rating tool and the scoring rules take uris apart with :func:`parse_source_uri`
and name the classes a citation falls in, in the spec's order: fabricated, stale, unsupported,
valid (`scoring/tables.py` classes them, as frames).
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import chain

OPAQUE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
SOURCE_URI_RE = re.compile(
    r"(?P<repo>[^/#\s]+)/(?P<path>[^#]+)(?:#L(?P<start>[1-9]\d{0,17})(?:-L(?P<end>[1-9]\d{0,17}))?)?\Z"
)
# A line number has at most 18 digits: more than any file holds, and a longer one would pass
# Python's int-string limit (a 5,000-digit span crashed a harness's result check).
_SPAN_RE = re.compile(r"#L([1-9]\d{0,17})-L([1-9]\d{0,17})\Z")
# Either form, anchored for msgspec (which searches): an opaque uri may hold anything after
# its scheme, newlines included. (A path holds no "#", so its greedy [^#]+ never backtracks.)
URI_PATTERN = rf"\A(?:(?s:{OPAQUE_RE.pattern}.*)|{SOURCE_URI_RE.pattern})"


@dataclass(frozen=True, slots=True)
class SourceUri:
    """A repository uri taken apart: ``<repo>/<path>[#L<start>[-L<end>]]``."""

    repo: str
    path: str
    start: int | None
    end: int | None  # equals start for a one-line span


def parse_source_uri(uri: str) -> SourceUri | None:
    """The parts of a repository uri; None for an opaque (``scheme:``) or malformed one.

    Anything that starts with a scheme and a colon is opaque, as the spec's ``https://``
    example.
    """
    if OPAQUE_RE.match(uri):
        return None
    match = SOURCE_URI_RE.match(uri)
    if match is None:
        return None
    start = int(match["start"]) if match["start"] else None
    end = int(match["end"]) if match["end"] else start
    return SourceUri(match["repo"], match["path"], start, end)


def span_in_order(uri: str) -> bool:
    """False only for a repository uri whose span ends before it starts (``#L9-L3``).

    A regex cannot compare two numbers, so this rule runs in Python, for a uri of either
    valid shape (a repository uri's ``#`` only ever starts its span).
    """
    if "-L" not in uri:  # no range, nothing to order (the common case, without a regex)
        return True
    match = _SPAN_RE.search(uri)
    if match is None or OPAQUE_RE.match(uri):
        return True
    return int(match[2]) >= int(match[1])


# The spans of many uris joined by newlines, each at the end of its line: for spans_in_order.
_SPANS_RE = re.compile(r"#L([1-9]\d{0,17})-L([1-9]\d{0,17})$", re.MULTILINE)


def spans_in_order(uris: list[str]) -> bool:
    """:func:`span_in_order` for every uri of a file at once: one search, no call per uri.

    The uris are joined by newlines and the spans found at the ends of lines in one pass;
    only the pairs found are compared in Python. When a uri holds a newline (an opaque uri
    may), a scheme uri holds a span (which it never orders) or a ``:``, the uris are checked
    one by one, as the rule says.
    """
    joined = "\n".join(uris)
    if "-L" not in joined:  # no range, nothing to order
        return True
    if ":" in joined or joined.count("\n") != len(uris) - 1:
        return all(map(span_in_order, uris))  # maybe an opaque uri: its "span" is no span
    numbers = list(map(int, chain.from_iterable(_SPANS_RE.findall(joined))))  # start, end, ...
    return all(map(operator.le, numbers[0::2], numbers[1::2]))


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


def first_unflagging(entries: Sequence[str], cited: Sequence[str]) -> str | None:
    """The first ``unsupported`` entry that flags none of the cited uris, if any.

    An entry flags a citation when equal to it, or spanless and equal to it without its span
    (:func:`is_flagged_unsupported` read entry by entry, here beside it so the rule has
    one owner; test_check_labels_property holds the two together).
    The spans are stripped once per uri, and only when an entry is not cited as written.
    """
    missing = [entry for entry in entries if entry not in cited]
    if not missing:
        return None
    bare = set(map(strip_span, cited))
    return next((e for e in missing if e not in bare or strip_span(e) != e), None)


def opaque_sha256(uri: str) -> str:
    """The hash an opaque uri (a URL) gets when none is given: that of the uri itself.

    flightdeck never fetches a URL, so it has no bytes to hash. The author's valid source and
    a person's citation of the same URL both default to this, so they match as whole strings
    (the spec's rule for opaque uris); a hash given on either side is compared as given.
    """
    return hashlib.sha256(uri.encode("utf-8", "surrogatepass")).hexdigest()
