"""What the runner benchmarks share: a synthetic suite over one repository, and the load line.

``bench_runner`` and ``bench_llm_arm`` both time ``flightdeck experiment run`` over a suite
of generated how-to questions about one commit of a generated ``sdlc`` repository (fixed
author and dates, so the commit is the same on every machine); both say how busy the machine
was at the start and at the end, since every figure they print is only as good as that.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.gitrepo import make_git_repo


@dataclass(frozen=True)
class SyntheticSuite:
    """The suite folder, the repository it asks about and the commit its questions pin."""

    suite: Path
    repo: Path
    commit: str


def synthetic_suite(
    root: Path,
    name: str,
    *,
    files: Mapping[str, str],
    questions: Sequence[tuple[str, str]],
    scope: Sequence[str] = (),
) -> SyntheticSuite:
    """``root/repos/sdlc`` with ``files`` in one commit, and ``root/suites/<name>`` asking
    ``questions`` (id, text) about it: each a how-to question with ``scope``, unsealed."""
    repo = root / "repos" / "sdlc"
    (commit,) = make_git_repo(repo, [files])
    suite = root / "suites" / name
    suite.mkdir(parents=True)
    with (suite / "questions.jsonl").open("w") as out:
        for question_id, text in questions:
            record = {
                "id": question_id,
                "question": text,
                "kind": "how-to",
                "as_of": {"sdlc": commit},
                "scope": list(scope),
            }
            out.write(json.dumps(record) + "\n")
    return SyntheticSuite(suite, repo, commit)


def load_line(when: str) -> str:
    """``"2 cores, load average 1.20 at start"``: how busy the machine was ``when``."""
    return f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at {when}"
