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


# --- round two: wide positional signatures and tuple results (#23 item 7) ---

SRC = Path(__file__).resolve().parents[2] / "src" / "flightdeck"
MAX_POSITIONAL = 6
# Math kernels whose parameters are one table or one state of a loop, each a scalar the
# kernel's formula names; passing them by name in the inner loop would say nothing more.
KERNELS = {
    "scoring/exact.py::rows_with_mass": "one tail_below_run row set: a, weight, n, first, steps "
    "and the log-probabilities q, lq, l1q of one binomial",
}


def wide_positional(source: str) -> list[tuple[str, int]]:
    """Public module-level functions and methods with more than MAX_POSITIONAL positional
    parameters (``self``/``cls`` not counted). Nested functions are left out: they are
    callbacks whose caller (hyperscan, click) fixes the signature."""
    import ast

    found: list[tuple[str, int]] = []
    tree = ast.parse(source)
    defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.append(node)
        elif isinstance(node, ast.ClassDef):
            defs += [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in defs:
        if function.name.startswith("_"):
            continue
        positional = function.args.posonlyargs + function.args.args
        count = len([a for a in positional if a.arg not in ("self", "cls")])
        if count > MAX_POSITIONAL:
            found.append((function.name, count))
    return found


def test_no_public_function_takes_more_than_six_arguments_by_position() -> None:
    wide = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        for name, count in wide_positional(path.read_text(encoding="utf-8")):
            if f"{where}::{name}" not in KERNELS:
                wide.append(f"{where}::{name} ({count})")
    assert wide == [], "put `*,` before the options, so callers name them"


def test_the_scan_sees_functions_and_methods_but_not_callbacks() -> None:
    source = (
        "def wide(a, b, c, d, e, f, g): pass\n"
        "def named(a, *, b, c, d, e, f, g): pass\n"
        "def _private(a, b, c, d, e, f, g): pass\n"
        "class C:\n"
        "    def method(self, a, b, c, d, e, f): pass\n"
        "    def wider(self, a, b, c, d, e, f, g): pass\n"
        "def outer():\n"
        "    def callback(a, b, c, d, e, f, g): pass\n"
    )
    assert wide_positional(source) == [("wide", 7), ("wider", 7)]


def test_the_kernels_allowed_are_still_there() -> None:
    for entry in KERNELS:
        where, name = entry.split("::")
        assert f"def {name}(" in (SRC / where).read_text(encoding="utf-8"), entry


@pytest.mark.parametrize(
    ("function", "named"),
    [
        pytest.param(
            "flightdeck.tasks.scoring:load_arm",
            ["questions", "keys", "params", "judge", "tables"],
            id="load-arm",
        ),
        pytest.param(
            "flightdeck.arms.trial_output:trace_header",
            ["command", "policy", "workspace", "result", "exit_code", "reason", "seconds"],
            id="trace-header",
        ),
        pytest.param(
            "flightdeck.arms.batch_trial:run_batches",
            ["spec", "cache", "control", "jobs", "record", "on_trial", "verify"],
            id="run-batches",
        ),
        pytest.param(
            "flightdeck.holdouts.search:search_view",
            ["owned", "base", "state", "found", "seen"],
            id="search-view",
        ),
        pytest.param(
            "flightdeck.arms.agents.passages:section_arrays", ["kind", "asked"], id="sections"
        ),
        # five or six positional parameters, two of them of one type a caller could swap
        pytest.param(
            "flightdeck.arms.sandbox:harness_env",
            ["path", "protocol", "home", "tmp"],
            id="harness-env",
        ),
        pytest.param(
            "flightdeck.arms.trial_output:write_trace",
            ["header", "out", "outputs", "cap"],
            id="write-trace",
        ),
        pytest.param(
            "flightdeck.rating.lines:cited_page", ["number", "uri", "page"], id="cited-page"
        ),
        pytest.param(
            "flightdeck.holdouts.decode:text_views",
            ["start", "end", "chunk_size"],
            id="text-views",
        ),
        pytest.param(
            "flightdeck.arms.agents.compose:compose", ["kind", "terms", "asked"], id="compose"
        ),
        pytest.param(
            "flightdeck.suite.checks:check_suite",
            [
                "questions_path",
                "keys_path",
                "questions",
                "keys",
                "repos",
                "repos_not_at_hand",
                "broken_ids",
            ],
            id="check-suite",
        ),
        pytest.param(
            "flightdeck.arms.trees:relink",
            ["base", "old", "files", "store", "checked"],
            id="relink",
        ),
        pytest.param(
            "flightdeck.arms.agents.llm_batch:write_sample",
            ["provenance", "time_limit", "process"],
            id="write-sample",
        ),
    ],
)
def test_wide_signatures_take_their_options_by_name(function: str, named: list[str]) -> None:
    import importlib

    module, name = function.split(":")
    assert keyword_only(getattr(importlib.import_module(module), name)) == named


def test_the_scored_frame_takes_the_arms_frames_whole() -> None:
    # four polars frames by position could be passed in any order and still run
    from flightdeck.scoring.tables import scored_frame

    assert list(inspect.signature(scored_frame).parameters) == ["tables", "frames"]


def test_the_claims_of_tables_are_named() -> None:
    from flightdeck.scoring.calibrated_levels import TableClaims, claims

    cal = calibrate(40, 15.0, alpha=0.025, side="shown")
    table = claims(cal, [30, 10], [2, 10])
    assert isinstance(table, TableClaims)
    assert names(table) == ["held", "statistic"]
    assert table.held.tolist() == [True, False]
    assert table.statistic.shape == (2,)


def test_the_kappa_interval_is_named() -> None:
    from flightdeck.rating.judge_calibration import KappaInterval, bootstrap_kappa

    interval = bootstrap_kappa([True], [True], resamples=5, confidence=0.95, seed=0)
    assert isinstance(interval, KappaInterval)
    assert names(interval) == ["lo", "hi", "undefined_draws"]


def test_the_section_arrays_are_named() -> None:
    from flightdeck.arms.agents.passages import SectionArrays, section_arrays

    text = b"# Title\n\nSome words.\n\n## Part\n\nMore words.\n"
    sections = section_arrays(["a.md"], [text], np.array([0]), kind="decision-why")
    assert isinstance(sections, SectionArrays)
    assert names(sections) == [
        "file_of",
        "first",
        "end",
        "blocks",
        "heading_passage",
        "heading_line",
        "weight",
    ]
    count = len(sections.blocks)
    assert count >= 1
    assert sections.file_of.tolist() == [0] * count
    assert len(sections.first) == len(sections.end) == len(sections.weight) == count
    assert len(sections.heading_passage) == len(sections.heading_line)


def test_a_file_read_line_by_line_is_named(tmp_path: Path) -> None:
    from flightdeck.suite.every_line import FileLines, every_line

    keys = tmp_path / "keys.jsonl"
    keys.write_text('{"id": "q1"}\n')
    read = every_line(keys, lambda path, data: read_keys(path, data=data))
    assert isinstance(read, FileLines)
    assert names(read) == ["records", "problems", "bad_lines", "read_whole"]
    assert read.records == []
    assert [p.line for p in read.problems] == [1]
    assert read.bad_lines == [b'{"id": "q1"}']
