"""The modes a verb can be asked for, each an enum instead of an on/off flag.

The CLI's flags stay as they are and map to these (``--allow-dry-run``, ``--unchecked``,
``--adjudicate``, ``init --force``); a Python caller names the mode it wants, e.g.
``suite.score(dry_runs=DryRuns.ALLOW)``. They live here, beside the facade whose verbs take
them, and import nothing, so the facade can name them in its signatures.
"""

from __future__ import annotations

import enum


class DryRuns(enum.Enum):
    """Whether ``knowledge score`` takes an arm answered by a dry run (``mockllm/model``)."""

    REFUSE = "refuse"  # its answers check a pipeline, never decide
    ALLOW = "allow"  # ``--allow-dry-run``: scored, and the report says what it is


class ExistingFiles(enum.Enum):
    """What ``flightdeck init`` does with a file it writes that is already there."""

    REFUSE = "refuse"  # name it (exit 2): init never overwrites a file
    REPLACE = "replace"  # ``--force``: write ours over it


class ReposNotAtHand(enum.Enum):
    """What ``knowledge seal`` (and ``check``) does with an as_of repository not at hand."""

    REFUSE = "refuse"  # name it, and how to give it (--repo NAME=PATH) or seal --unchecked
    SKIP = "skip"  # ``--unchecked``: seal without checking its sources; the manifest says so


class ToRate(enum.Enum):
    """Which answers ``knowledge rate`` shows the rater."""

    EVERY_ANSWER = "every"  # every answer of the arms rated, mixed blind
    SPLIT_ANSWERS = "split"  # ``--adjudicate``: only those the first two raters split on
