"""Headings in markdown (ATX and setext), reStructuredText and AsciiDoc, and their sections."""

from __future__ import annotations

import pytest

from flightdeck.arms.agents.headings import headings, markup
from flightdeck.arms.agents.passages import blocks

SETEXT = """\
---
title: front matter
---
Rotate the keys
===============

Intro.

Before you start
----------------

- a list item
---

| a | b |
|---|---|

```
Not a title
-----------
```
Steps
-----
"""

RST = """\
=========
 Runbook
=========

Failing over
============

Check the replica::

    Not a title
    -----------

Drain the workers
-----------------

Text.

Resume
------
"""

ADOC = """\
= Upgrade guide

== Before you start

----
== not a heading: inside a listing block
----

=== Back up etcd

## Rollback
"""


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        pytest.param("docs/keys.md", SETEXT, [(3, 1), (8, 2), (21, 2)], id="setext"),
        pytest.param("docs/runbook.rst", RST, [(1, 1), (4, 2), (12, 3), (17, 3)], id="rst"),
        pytest.param("docs/upgrade.adoc", ADOC, [(0, 1), (2, 2), (8, 3), (10, 2)], id="asciidoc"),
        pytest.param("README.md", "# A\n## B\n    # code\n", [(0, 1), (1, 2)], id="atx"),
        pytest.param("src/a.py", "# comment\nx = 1\n", [], id="code-has-none"),
    ],
)
def test_headings_and_levels(name: str, text: str, expected: list[tuple[int, int]]) -> None:
    assert headings(name, text.split("\n")) == expected


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a/README.MD", "markdown"),
        ("source/x.html.md.erb", "markdown"),
        ("docs/index.rst", "rst"),
        ("NOTES.txt", "rst"),
        ("docs/guide.ADOC", "asciidoc"),
        ("CODEOWNERS", None),
    ],
)
def test_markup_by_file_name(name: str, kind: str | None) -> None:
    assert markup(name) == kind


def test_an_rst_runbook_is_quoted_by_its_sections() -> None:
    found = blocks("ops/runbook.rst", RST.split("\n"))
    drain = next(b for b in found if b.start == 12)
    assert (drain.start, drain.end, drain.level) == (12, 16, 3)
    assert drain.context == (1, 4)  # the title and "Failing over" above it
    title = next(b for b in found if b.start == 1)
    assert title.level == 1
