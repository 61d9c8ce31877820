"""The one rule for arm names, wherever a name comes from: a flag, params.yaml, a file name.

A leaf module, so that params.yaml's sections (below ``project.py``, which re-exports the
rule with the suite paths it protects) check the same rule instead of a copy of it.
"""

from __future__ import annotations

import re
from pathlib import Path

from flightdeck.errors import InputError

ARM_NAME_MAX = 100
ARM_NAME_CHARS = "letters, digits and . _ @ + -"
_ARM_CHAR = re.compile(r"[A-Za-z0-9._@+-]")


def check_arm_name(arm: str, *, where: str | Path = "--arm", line: int | None = None) -> str:
    """Accept an arm name such as ``baseline-repo-search`` or ``retrieval@2026-12``.

    The name becomes part of file names (``answers/<arm>.jsonl``, ``labels/<arm>.jsonl``,
    ``traces/<suite>/<arm>/``), so it is refused when it could name another file or hide one:
    anything but ASCII letters, digits and ``. _ @ + -`` (a ``/`` would reach another folder,
    a space or a ``:`` breaks shells and Windows), a first character that is not a letter or
    digit (a leading ``.`` hides the file, a leading ``-`` reads as a flag), and names longer
    than 100 characters (file names stop at 255 bytes). Returns the name.
    """
    if not arm:
        raise InputError(where, line, "arm name is empty; name the arm, e.g. retrieval@2026-12")
    bad = next((c for c in arm if not _ARM_CHAR.fullmatch(c)), None)
    if bad is not None:
        raise InputError(
            where,
            line,
            f"arm name {arm!r} holds {bad!r}; use {ARM_NAME_CHARS} only "
            "(the name becomes a file name, answers/<arm>.jsonl)",
        )
    if not arm[0].isalnum():
        raise InputError(
            where,
            line,
            f"arm name {arm!r} must start with a letter or digit (a leading . hides its files, "
            "a leading - reads as a flag)",
        )
    if len(arm) > ARM_NAME_MAX:
        raise InputError(
            where,
            line,
            f"arm name {arm[:20]!r}... is {len(arm)} characters; use at most {ARM_NAME_MAX}",
        )
    return arm
