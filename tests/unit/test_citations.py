"""Citation classes in the spec's order: fabricated, stale, unsupported, valid."""

from __future__ import annotations

import pytest
from tests.citations_reference import classify_citation

from flightdeck.suite.citations import CitationClass, strip_span
from flightdeck.suite.records import Source

A, B = "a" * 64, "b" * 64
VALID = [Source("sdlc/docs/adr.md#L1-L5", A), Source("https://wiki.example/page#intro", B)]


@pytest.mark.parametrize(
    ("uri", "sha", "flagged", "expected"),
    [
        pytest.param("sdlc/docs/adr.md", A, [], "valid", id="same-file-no-span"),
        pytest.param("sdlc/docs/adr.md#L30-L40", A, [], "valid", id="other-span-same-file"),
        pytest.param("sdlc/docs/other.md", A, [], "fabricated", id="not-a-valid-source"),
        pytest.param("other/docs/adr.md", A, [], "fabricated", id="other-repo"),
        pytest.param("sdlc/docs/adr.md#L2", B, [], "stale", id="other-content"),
        pytest.param(
            "sdlc/docs/adr.md#L2", B, ["sdlc/docs/adr.md"], "stale", id="stale-before-unsupported"
        ),
        pytest.param(
            "sdlc/docs/adr.md#L2", A, ["sdlc/docs/adr.md#L2"], "unsupported", id="flag-equal"
        ),
        pytest.param(
            "sdlc/docs/adr.md#L2",
            A,
            ["sdlc/docs/adr.md"],
            "unsupported",
            id="spanless-flag-covers-spans",
        ),
        pytest.param(
            "sdlc/docs/adr.md#L2", A, ["sdlc/docs/adr.md#L3"], "valid", id="other-span-flag"
        ),
        pytest.param(
            "sdlc/docs/adr.md", A, ["sdlc/docs/adr.md#L2"], "valid", id="span-flag-not-whole-file"
        ),
        pytest.param("https://wiki.example/page#intro", B, [], "valid", id="opaque-whole-string"),
        pytest.param(
            "https://wiki.example/page", B, [], "fabricated", id="opaque-no-fragment-stripping"
        ),
        pytest.param("https://wiki.example/page#intro", A, [], "stale", id="opaque-hash-as-given"),
    ],
)
def test_classify(uri: str, sha: str, flagged: list[str], expected: str) -> None:
    assert classify_citation(Source(uri, sha), VALID, flagged) == CitationClass(expected)


def test_strip_span() -> None:
    assert strip_span("sdlc/a.md#L3-L9") == "sdlc/a.md"
    assert strip_span("sdlc/a.md") == "sdlc/a.md"
    assert strip_span("https://x.org/a#L3") == "https://x.org/a#L3"


@pytest.mark.parametrize(
    ("uri", "parts"),
    [
        pytest.param("sdlc/docs/a.md", ("sdlc", "docs/a.md", None, None), id="plain"),
        pytest.param("sdlc/docs/a.md#L3", ("sdlc", "docs/a.md", 3, 3), id="one-line"),
        pytest.param("sdlc/docs/a b.md#L3-L9", ("sdlc", "docs/a b.md", 3, 9), id="span-and-space"),
        pytest.param("https://wiki.example/a/b", None, id="https-is-opaque"),
        pytest.param("mailto:ops/team", None, id="any-scheme-is-opaque"),
        pytest.param("sdlc", None, id="no-path"),
    ],
)
def test_one_rule_for_source_uris(uri: str, parts: tuple[object, ...] | None) -> None:
    from flightdeck.suite.records import parse_source_uri

    parsed = parse_source_uri(uri)
    assert (
        None if parsed is None else (parsed.repo, parsed.path, parsed.start, parsed.end)
    ) == parts
