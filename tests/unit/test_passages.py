"""Passages a reader would quote whole: sections, YAML entries, paragraphs; Unicode matching."""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path

import pytest

from flightdeck.arms.agents.bm25 import query_words
from flightdeck.arms.agents.passages import MAX_LINES, Block, blocks, normalise_line
from flightdeck.arms.agents.repo_search import search

ADR = """\
# ADR-0003: Move the job queue to Postgres

Status: accepted

## Context

Redis lost jobs on failover.

### Numbers

Two incidents in March.

## Decision

Use Postgres with SKIP LOCKED.
The cutover waits on DBA-77.

```
# not a heading: a shell comment in a code block
```

## Consequences

One fewer service to run.
"""


def test_markdown_sections_run_to_the_next_heading_of_the_same_or_higher_level() -> None:
    found = blocks("sdlc/docs/adr/0003.md", ADR.split("\n"))
    spans = [(b.start + 1, b.end) for b in found]  # 1-based, inclusive, as a uri gives them
    assert spans == [(1, 24), (5, 11), (9, 11), (13, 20), (22, 24)]
    numbers = next(b for b in found if b.start == 8)
    assert numbers.context == (0, 4)  # the ADR's title and "## Context" above "### Numbers"


def test_yaml_entries_take_their_comments_and_indented_lines() -> None:
    text = "# gateway models\nmodels:\n  - claude-3-opus\n  - gpt-4o\n\n# spend\nbudget:\n  monthly: 400\n"
    assert blocks("sdlc/src/gateway/models.yaml", text.split("\n")) == [Block(0, 4), Block(5, 8)]


def test_other_files_are_paragraphs_and_short_ones_join_the_next() -> None:
    owners = "# review bot\nsrc/reviewbot/ @dana\n\n# gateway\nsrc/gateway/ @li-wei\n"
    assert blocks("sdlc/CODEOWNERS", owners.split("\n")) == [Block(0, 5)]  # 2 lines < 4: joined
    code = '"""Doc."""\n\ndef a():\n    x = 1\n    y = 2\n    return x\n\ndef b():\n    pass\n'
    assert blocks("sdlc/src/a.py", code.split("\n")) == [Block(0, 6), Block(7, 9)]


def test_a_codeowners_file_answers_who_owns(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "CODEOWNERS").write_text("src/reviewbot/ @dana\n")
    for name in ("notes", "pilot", "design"):  # "review" and "bot" are common words here
        (tmp_path / "r" / f"{name}.md").write_text(
            f"# Review {name}\n\nThe review bot posts comments.\n"
        )
    assert query_words("Who owns the review bot?", compounds=True) == [
        "owns",
        "review",
        "bot",
        "ownsreview",
        "reviewbot",
    ]
    # "owns" (the file's name says it) and "reviewbot" (glued) against "review" and "bot"
    assert search(tmp_path, "Who owns the review bot?").passages[0].path == "r/CODEOWNERS"


def test_a_passage_over_the_cap_is_split_at_its_paragraphs() -> None:
    paragraph = ["word"] * 25
    lines = ["# Runbook", "", *paragraph, "", *paragraph, "", *paragraph]
    found = blocks("r/run.md", lines)
    # paragraphs at lines 2-26, 28-52, 54-78: the first two join the title (53 lines), the
    # third would make it 79
    assert [(b.start, b.end) for b in found] == [(0, 53), (54, 79)]
    assert all(b.end - b.start <= MAX_LINES for b in found)
    wall = blocks("r/wall.txt", ["x"] * 130)
    assert [(b.start, b.end) for b in wall] == [(0, 60), (60, 120), (120, 130)]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param("on\u2011call", "on call", id="non-breaking-hyphen"),
        pytest.param("10\u00a0GB", "10 gb", id="no-break-space"),
        pytest.param("p95\u2013p99", "p95 p99", id="en-dash"),
        pytest.param("\uff21\uff24\uff32", "adr", id="fullwidth-nfkc"),
        pytest.param("Stra\u00dfe", "strasse", id="casefold"),
    ],
)
def test_text_is_normalised_before_matching(text: str, words: str) -> None:
    assert normalise_line(text).split() == words.split()


def test_the_answer_is_the_whole_section_with_its_title(tmp_path: Path) -> None:
    (tmp_path / "sdlc" / "docs").mkdir(parents=True)
    (tmp_path / "sdlc" / "docs" / "0003.md").write_text(ADR)
    (tmp_path / "sdlc" / "docs" / "other.md").write_text("# Other\n\nNothing about queues.\n")
    result = search(tmp_path, "What does the cutover wait on?")
    best = result.passages[0]
    assert best.uri == "sdlc/docs/0003.md#L13-L20"
    assert best.text.splitlines()[0] == "# ADR-0003: Move the job queue to Postgres"
    assert "The cutover waits on DBA-77." in best.text
    assert best.text.endswith("```")


def test_a_non_breaking_hyphen_in_a_file_matches_a_plain_question(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "a.md").write_text("# Pager\n\nThe on\u2011call rota is weekly.\n")
    (tmp_path / "r" / "b.md").write_text("# Vendors\n\nEmail the vendor weekly.\n")
    assert query_words("Who is on-call?") == ["call"]
    # "on\u2011call" read as one word would match nothing; split, "call" finds the rota
    assert search(tmp_path, "Who is on-call?").citations == (
        ("r/a.md#L1-L3", sha256((tmp_path / "r" / "a.md").read_bytes()).hexdigest()),
    )
