"""Source uris: ``<repo>/<path>[#L<start>[-L<end>]]`` or an opaque ``scheme:...`` string.

The one place that decides what a uri is. The record schema (``records.py``) checks the
shape with :data:`URI_PATTERN` in msgspec and the span order with :func:`span_in_order`;
the harness protocol, the rating tool and the citation classes take uris apart with
:func:`parse_source_uri`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPAQUE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
SOURCE_URI_RE = re.compile(
    r"(?P<repo>[^/#\s]+)/(?P<path>[^#]+)(?:#L(?P<start>[1-9]\d*)(?:-L(?P<end>[1-9]\d*))?)?\Z"
)
_SPAN_RE = re.compile(r"#L([1-9]\d*)-L([1-9]\d*)\Z")
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
    match = _SPAN_RE.search(uri)
    if match is None or OPAQUE_RE.match(uri):
        return True
    return int(match[2]) >= int(match[1])
