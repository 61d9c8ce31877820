"""The score task reads the arms in the order given, then draws the comparison.

What a user sees does not depend on that order: the numbers, the arms' order in every
output, and which error is reported when several arms are bad (the first in the order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks.bench_score import make_suite

from flightdeck.errors import InputError
from flightdeck.params import load_params
from flightdeck.project import Project
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.scoring.outcomes import ScoreResult
from flightdeck.tasks.scoring import compute_scores


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return make_suite(tmp_path, 60)


def params_at(root: Path):  # type: ignore[no-untyped-def]
    (root / "params.yaml").write_text("holdouts: holdouts\nresamples: 500\n", encoding="utf-8")
    return load_params(root / "params.yaml")


def score(suite: Path, arms: list[str], **options: Any) -> ScoreResult:
    """Score ``arms`` of the suite, retrieval against search, with params.yaml beside it."""
    params = params_at(suite.parents[1])
    folder = SuiteFolder(suite, ProjectPaths(params.root))
    return compute_scores(
        folder,
        arms,
        params=params,
        repos=Project(params).repos,
        baseline="search",
        candidate="retrieval",
        **options,
    )


def test_reading_order_changes_no_number_and_no_arm_order(suite: Path) -> None:
    arms = ["search", "projects", "retrieval"]
    ahead = score(suite, arms)
    # the same comparison with the compared arms first in the list
    plain = score(suite, ["search", "retrieval", "projects"])
    assert list(ahead.arms) == arms
    assert list(plain.arms) == ["search", "retrieval", "projects"]
    (a,), (b,) = ahead.comparisons, plain.comparisons
    for metric in ("correctness", "citation_validity"):
        x, y = a.metrics[metric], b.metrics[metric]
        assert (x.diff, x.lo, x.hi, x.shown) == (y.diff, y.lo, y.hi, y.shown)


def test_the_first_bad_arm_in_the_given_order_is_the_one_reported(suite: Path) -> None:
    answers = suite / "answers"
    (answers / "projects.jsonl").write_text('{"id": "q0"}\n', encoding="utf-8")  # bad line
    lines = (answers / "retrieval.jsonl").read_text(encoding="utf-8").splitlines()
    (answers / "retrieval.jsonl").write_text(lines[0] + "\n" + lines[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        score(suite, ["search", "projects", "retrieval"])
    assert caught.value.path == str(answers / "projects.jsonl")  # not retrieval's, also bad
    assert "missing field 'answer'" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_progress_says_bootstrapping_only_once_every_arm_is_read(suite: Path) -> None:
    said: list[str] = []
    score(suite, ["search", "projects", "retrieval"], on_progress=said.append)
    assert said == ["bootstrapping retrieval vs search"]
    (suite / "answers" / "projects.jsonl").write_text('{"id": "q0"}\n', encoding="utf-8")
    said.clear()
    with pytest.raises(InputError, match="missing field 'answer'"):
        score(suite, ["search", "projects", "retrieval"], on_progress=said.append)
    assert said == []  # a bad arm is reported before any word of a bootstrap
