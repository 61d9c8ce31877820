"""Names and shapes (#23 item 7): results with named fields, modes as enums, options by name.

A result read by index (``tango_bounds(...)[0]``) says nothing of what it reads; a boolean
mode flag turned back from an enum loses the name of the mode; a typo'd or wrong-typed mode
must be a bug (a traceback), never a safety check quietly switched off.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from flightdeck.errors import InputError
from flightdeck.holdouts import manifest as holdouts_manifest
from flightdeck.holdouts.manifest_format import EMPTY
from flightdeck.project.modes import ExistingFiles, ReposNotAtHand
from flightdeck.scoring import calibrated_levels
from flightdeck.scoring.calibrated_levels import (
    CalibratedLevel,
    calibrate,
    claim_bounds,
    compute,
    smallest_claiming_n,
)
from flightdeck.scoring.decision import RuleSize, cells, rule_size, seeded_claims
from flightdeck.scoring.intervals import ScoreBounds, tango_bounds, tango_interval
from flightdeck.scoring.regions import Problem, WorstCase, worst_case
from flightdeck.scoring.stats import normal_quantile
from flightdeck.suite import records
from flightdeck.suite.records import Canaries, load_suite_files, read_keys
from flightdeck.tasks import init, knowledge


def names(result: object) -> list[str]:
    return [f.name for f in fields(result)]  # type: ignore[arg-type]


def test_the_score_bounds_are_named() -> None:
    bounds = tango_bounds(12, 3, 40, normal_quantile(0.975))
    assert isinstance(bounds, ScoreBounds)
    assert names(bounds) == ["lo", "hi"]
    interval = tango_interval(20, 12, 3, 5, confidence=0.95)
    assert (bounds.lo, bounds.hi) == (interval.lo, interval.hi)
    assert bounds.lo < (12 - 3) / 40 < bounds.hi


def test_the_worst_case_is_named_and_is_the_calibrations() -> None:
    cal = compute(16, 15.0, alpha=0.025, side="shown")
    worst = worst_case(Problem(16, 15.0, "shown"), claim_bounds(cal))
    assert isinstance(worst, WorstCase)
    assert names(worst) == ["rate", "p_c"]
    # "shown": the nuisance p_c is the baseline-only rate p01 the calibration reports
    assert (worst.rate, worst.p_c) == (cal.size, cal.worst_p01)
    nothing = np.arange(16 + 1, dtype=np.int64)[::-1] + 1  # B(c) = n - c + 1: no table claims
    assert worst_case(Problem(16, 15.0, "shown"), nothing) == WorstCase(0.0, 0.0)


def test_a_rules_size_is_named() -> None:
    found = rule_size(20, 15.0, np.zeros(len(cells(20)[0])))
    assert isinstance(found, RuleSize)
    assert names(found) == ["size", "worst_p01"]
    assert found.size == 0.0  # a rule that never claims never claims falsely


def test_the_scoring_calibration_is_named_apart_from_the_judges() -> None:
    assert isinstance(calibrate(40, 15.0, alpha=0.025, side="shown"), CalibratedLevel)
    assert not hasattr(calibrated_levels, "Calibration")  # rating/calibration_format's name


def keyword_only(function: Callable[..., Any]) -> list[str]:
    kind = inspect.Parameter.KEYWORD_ONLY
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind is kind]


@pytest.mark.parametrize(
    ("function", "named"),
    [
        pytest.param(calibrate, ["alpha", "side", "cache_dir"], id="calibrate"),
        pytest.param(compute, ["alpha", "side"], id="compute"),
        pytest.param(smallest_claiming_n, ["alpha", "side", "cache_dir"], id="smallest-n"),
        pytest.param(seeded_claims, ["resamples", "alpha", "side"], id="seeded-claims"),
    ],
)
def test_levels_and_sides_are_passed_by_name(
    function: Callable[..., Any], named: list[str]
) -> None:
    assert keyword_only(function) == named


def test_a_level_passed_by_position_is_refused() -> None:
    with pytest.raises(TypeError, match="positional argument"):
        calibrate(40, 15.0, 0.025, "shown")  # type: ignore[misc]


def default(function: Callable[..., Any], name: str) -> Any:
    return inspect.signature(function).parameters[name].default


def test_the_task_functions_take_the_modes() -> None:
    assert default(knowledge.seal, "repos_not_at_hand") is ReposNotAtHand.REFUSE
    assert "unchecked" not in inspect.signature(knowledge.seal).parameters
    assert default(read_keys, "canaries") is Canaries.EITHER
    assert default(load_suite_files, "canaries") is inspect.Parameter.empty  # always said
    assert default(init.init_project, "existing") is ExistingFiles.REFUSE
    assert "force" not in inspect.signature(init.init_project).parameters


def test_a_flag_where_a_mode_belongs_is_a_bug_not_a_mode(tmp_path: Path) -> None:
    keys = tmp_path / "keys.jsonl"
    keys.write_text("")
    with pytest.raises(ValueError, match="is not a valid Canaries"):
        read_keys(keys, canaries=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a valid ExistingFiles"):
        init.init_project(tmp_path, existing=True)  # type: ignore[arg-type]


def test_canaries_required_forbidden_or_either(tmp_path: Path) -> None:
    key = (
        '{"id": "q1", "answer_key": "A", "required_facts": ["f"], "valid_sources": '
        '[{"uri": "doc:x", "sha256": "' + "b" * 64 + '"}]'
    )
    unsealed = tmp_path / "unsealed.jsonl"
    unsealed.write_text(key + "}\n")
    sealed = tmp_path / "sealed.jsonl"
    sealed.write_text(key + f', "canary": "{records.CANARY_PREFIX}{"1" * 32}"}}\n')
    assert read_keys(unsealed, canaries=Canaries.FORBIDDEN)[0].canary is None
    assert read_keys(sealed, canaries=Canaries.REQUIRED)[0].canary is not None
    assert len(read_keys(unsealed) + read_keys(sealed)) == 2  # EITHER
    with pytest.raises(InputError, match=r"unsealed\.jsonl:1: missing canary; this suite"):
        read_keys(unsealed, canaries=Canaries.REQUIRED)
    with pytest.raises(InputError, match=r"sealed\.jsonl:1: has a canary before sealing"):
        read_keys(sealed, canaries=Canaries.FORBIDDEN)


def test_a_missing_holdouts_manifest_is_refused_or_empty_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "holdouts"
    path = holdouts_manifest.manifest_path(folder)
    refusal = r"no holdouts manifest here; seal a suite with `flightdeck knowledge seal"
    with pytest.raises(InputError, match=refusal):
        holdouts_manifest.load_manifest(path)
    with pytest.raises(InputError, match=refusal), holdouts_manifest.locked_manifest(folder):
        pass
    assert not folder.exists()
    assert holdouts_manifest.load_manifest_or_empty(path) is EMPTY
    with holdouts_manifest.locked_manifest_or_new(folder):
        assert folder.is_dir()  # registering the first suite makes the folder
