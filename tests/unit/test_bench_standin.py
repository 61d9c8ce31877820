"""The held-out public corpus is consistent, and bench_standin counts what it says it counts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.bench_standin import CORPUS, measure

ADR = "docs/architecture/decisions"
GI_NEW = "2e60c718b389abcf374798b03fd4e565bb395aac"  # govuk-infrastructure, upstream 2026-08-21
NO_HASH = "0" * 64


def test_every_required_fact_is_in_a_valid_source_at_as_of() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.corpus_tools", "check-facts", str(CORPUS)],
        cwd=CORPUS.parents[1],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip().endswith("46 keys, 0 problems")


def _line_count(git_dir: Path, path: str) -> int:
    shown = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{GI_NEW}:{path}"], capture_output=True, check=True
    )
    return len(shown.stdout.splitlines())


def test_measure_counts_facts_citations_and_spans(tmp_path: Path) -> None:
    reference = tmp_path / "reference.git"
    bundle = CORPUS / "repos" / "govuk-infrastructure.bundle"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(reference)], check=True)
    concourse, state = f"{ADR}/0018-use-concourse-ci.md", f"{ADR}/0014-replace-terraform-cloud.md"
    last = _line_count(reference, concourse)
    answers = [
        {  # both facts, in another case and spacing (a no-break space, a line break)
            "id": "p01",
            "answer": "Kargo's sharding was INTENTIONALLY\u00a0left\n  undocumented, for the Commercial one.",
            "citations": [
                {"uri": f"govuk-infrastructure/{concourse}#L1-L{last}", "sha256": NO_HASH},
                {"uri": "govuk-infrastructure/README.md", "sha256": NO_HASH},
            ],
        },
        {  # one fact of two; a span past the end of a valid source
            "id": "p02",
            "answer": "It had 93 workspaces.",
            "citations": [
                {"uri": f"govuk-infrastructure/{state}#L2-L{last + 10**6}", "sha256": NO_HASH}
            ],
        },
    ]
    result = measure(answers, tmp_path / "project")
    assert result["questions"] == 46
    assert result["answered"] == 2
    assert result["facts_held"]["count"] == 1
    assert result["facts_held_by_kind"]["decision-why"] == {"count": 1, "of": 9}
    assert result["citations"] == {"count": 3, "valid": 2, "share_valid": 2 / 3}
    assert result["spans"] == {"count": 2, "inside_file": 1, "all_inside": False}
    assert result["spans_outside"] == [
        f"p02: govuk-infrastructure/{state}#L2-L{last + 10**6} "
        f"(file has {_line_count(reference, state)} lines)"
    ]
    missing = {row["id"]: row["missing"] for row in result["per_question"]}
    assert missing["p01"] == []
    assert missing["p02"] == ["99% saving"]
    assert missing["p03"] == ["CNCF graduated", "Rego"]  # not answered: every fact missing
