"""Every line of a whole-file or long citation can be paged to (#21), in the session and the
terminal; the page's own paging runs in chromium (tests/browser/test_rate_pages.py)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from tests.unit.test_rating import session, suite_over_big_file

from flightdeck.cli import FlightdeckGroup
from flightdeck.cli.rating import rate_command
from flightdeck.rating.lines import PAGE


def test_a_whole_file_pages_through_every_line(tmp_path: Path) -> None:
    project = suite_over_big_file(tmp_path, ["big/big.txt"])
    with session(project) as s:
        (first,) = s.view(0).citations
        assert (first.page, first.pages, first.first, first.last) == (0, 125, 1, 5000)
        seen = []
        for page in range(first.pages):
            view = s.citation_page(0, 1, page)
            assert view.page == page
            seen += [(line.number, line.text) for line in view.lines]
        # every line once, in order, with its text at as_of; none cited (no span)
        assert seen == [(n, f"line {n}") for n in range(1, 5001)]
        assert s.citation_page(0, 1, 999).page == 124  # past the last: the last
        assert [line.number for line in s.citation_page(0, 1, 124).lines][-1] == 5000


def test_a_long_span_pages_with_its_context(tmp_path: Path) -> None:
    project = suite_over_big_file(tmp_path, ["big/big.txt#L100-L1000"])
    with session(project) as s:
        (first,) = s.view(0).citations
        assert (first.first, first.last) == (97, 1003)
        assert first.pages == -(-(1003 - 97 + 1) // PAGE)
        lines = [line for p in range(first.pages) for line in s.citation_page(0, 1, p).lines]
    assert [line.number for line in lines] == list(range(97, 1004))
    assert [line.number for line in lines if line.cited] == list(range(100, 1001))


@click.group(cls=FlightdeckGroup)
def root() -> None:
    """Test root."""


root.add_command(rate_command)


def test_the_terminal_pages_with_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = suite_over_big_file(tmp_path, ["big/big.txt"])
    monkeypatch.chdir(project.root)
    # m1, then m alone (the first citation with more lines): pages 2 and 3; then quit
    result = CliRunner().invoke(
        root,
        ["rate", str(project.suite), "--rater", "ada", "--tui", "--repo", "big=repos/big"],
        input="m1\nm\nq\n",
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "lines 1-40 of 1-5000 (page 1 of 125); m1 for more" in out
    assert "lines 41-80 of 1-5000 (page 2 of 125); m1 for more" in out
    assert "lines 81-120 of 1-5000 (page 3 of 125); m1 for more" in out
    assert "      120 | line 120" in out
    assert "line 121\n" not in out
