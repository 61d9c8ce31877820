"""The holdouts registry: registering suites, voiding on a hit, deliberate unvoiding."""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from tests.tree import gen

from flightdeck.errors import InputError
from flightdeck.files.jsonl import canonical_json, sha256_bytes, sha256_file
from flightdeck.holdouts.custody import custody, describe_custody
from flightdeck.holdouts.leaks import Hit, canary_scan, mark_void, scan_and_void
from flightdeck.holdouts.manifest_format import Evidence
from flightdeck.holdouts.plan import ScanPlan, plan_scan
from flightdeck.holdouts.registry import register_suite, suite_state, unvoid
from flightdeck.suite.records import CANARY_PREFIX

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")


def canary(n: int) -> str:
    return f"{CANARY_PREFIX}{n:032x}"


def register(folder: Path, suite: str, sha: str, canaries: dict[str, str]) -> None:
    register_suite(folder, suite=suite, manifest_sha256=sha, canaries=canaries)


def manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text())
    return data


@pytest.fixture
def holdouts(tmp_path: Path) -> Path:
    folder = tmp_path / "holdouts"
    register(folder, "s1", "a" * 64, {"q1": canary(1), "q2": canary(2)})
    register(folder, "s2", "b" * 64, {"q1": canary(3)})
    return folder


def test_register_creates_the_manifest_and_merges_a_second_suite(holdouts: Path) -> None:
    data = manifest(holdouts)
    assert data["format"] == 1
    assert data["canaries"] == {
        canary(1): {"suite": "s1", "question_id": "q1"},
        canary(2): {"suite": "s1", "question_id": "q2"},
        canary(3): {"suite": "s2", "question_id": "q1"},
    }
    assert {name: (s["manifest_sha256"], s["status"]) for name, s in data["suites"].items()} == {
        "s1": ("a" * 64, "sealed"),
        "s2": ("b" * 64, "sealed"),
    }
    assert [(h["event"], h["suite"], h["canaries"]) for h in data["history"]] == [
        ("registered", "s1", 2),
        ("registered", "s2", 1),
    ]
    assert all(TIME.match(h["at"]) for h in data["history"])


def test_registering_the_same_suite_again_changes_nothing(holdouts: Path) -> None:
    before = (holdouts / "manifest.json").read_bytes()
    register(holdouts, "s1", "A" * 64, {"q1": canary(1), "q2": canary(2)})
    assert (holdouts / "manifest.json").read_bytes() == before


@pytest.mark.parametrize(
    ("suite", "sha", "canaries", "message"),
    [
        pytest.param(
            "s1",
            "c" * 64,
            {"q1": canary(1)},
            "suite s1 is already registered with another manifest; a changed suite is a new "
            "suite version (…-v2)",
            id="changed-manifest",
        ),
        pytest.param(
            "s3",
            "c" * 64,
            {"q9": canary(3)},
            f"canary {canary(3)} of s3/q9 is already registered for s2/q1; "
            "re-seal with fresh canaries",
            id="canary-owned-elsewhere",
        ),
    ],
)
def test_conflicting_registrations_are_refused(
    holdouts: Path, suite: str, sha: str, canaries: dict[str, str], message: str
) -> None:
    before = (holdouts / "manifest.json").read_bytes()
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        register(holdouts, suite, sha, canaries)
    assert caught.value.path == str(holdouts / "manifest.json")
    assert (holdouts / "manifest.json").read_bytes() == before


@pytest.mark.parametrize(
    ("suite", "sha", "canaries", "message"),
    [
        pytest.param("", "a" * 64, {}, "suite must be a non-empty name", id="no-name"),
        pytest.param("s", "xyz", {}, "manifest_sha256 must be 64 hex digits", id="bad-sha"),
        pytest.param("s", "a" * 64, {"q1": "CANARY"}, "bad canary for question 'q1'", id="canary"),
        pytest.param(
            "s", "a" * 64, {"q1": canary(5), "q2": canary(5)}, "share a canary", id="shared"
        ),
    ],
)
def test_bad_arguments_are_a_programming_error(
    tmp_path: Path, suite: str, sha: str, canaries: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        register(tmp_path, suite, sha, canaries)


def _register_many(folder: str, first: int) -> None:
    for n in range(first, first + 10):
        register(Path(folder), f"suite-{n}", "a" * 64, {"q": canary(n)})


def test_concurrent_registrations_all_land(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_register_many, args=(str(tmp_path), n)) for n in (0, 100)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(manifest(tmp_path)["suites"]) == 20


def scan_and_mark(holdouts: Path, trace: Path) -> list[str]:
    """The suites :func:`scan_and_void` (what ``canary-scan`` calls) voided now."""
    scan = scan_and_void(holdouts, [trace])
    assert set(scan.newly_void) <= set(scan.found.suite_counts)  # a suite void by its own hits
    return list(scan.newly_void)


def test_a_hit_voids_the_suite_with_its_first_hit_and_count(holdouts: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(f"ok\n{canary(2)}\n{canary(1)} {canary(2)}\n")
    assert scan_and_mark(holdouts, trace) == ["s1"]
    evidence = custody(holdouts, "s1").evidence
    assert evidence is not None
    assert TIME.match(evidence.at or "")
    assert msgspec.structs.replace(evidence, at=None) == Evidence(
        canary=canary(2), question_id="q2", file=str(trace), line=2, count=3
    )
    assert custody(holdouts, "s2").evidence is None
    data = manifest(holdouts)
    assert data["suites"]["s1"]["status"] == "void"
    assert data["history"][-1]["event"] == "void"


def test_scanning_the_same_traces_again_keeps_the_first_evidence(
    holdouts: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(canary(3))
    assert scan_and_mark(holdouts, trace) == ["s2"]
    before = manifest(holdouts)
    assert scan_and_mark(holdouts, trace) == []
    after = manifest(holdouts)
    assert after == before  # already void: the manifest is not rewritten
    scans = [json.loads(line) for line in (holdouts / "scans.jsonl").read_text().splitlines()]
    assert [(s["event"], s["hits"]) for s in scans] == [("scan", 1), ("scan", 1)]


def test_every_scan_is_recorded_with_what_it_read_of_each_suite(
    holdouts: Path, tmp_path: Path
) -> None:
    traces = tmp_path / "traces" / "s1" / "arm"
    traces.mkdir(parents=True)
    (traces / "q1.log").write_text("clean\n")  # 6 bytes
    (traces / "q2.log").write_text("also clean\n")  # 11 bytes
    (tmp_path / "other.log").write_text("x\n")
    assert scan_and_mark(holdouts, tmp_path / "traces") == []
    assert mark_void(holdouts, canary_scan(holdouts, [tmp_path / "other.log"])) == []
    before = (holdouts / "manifest.json").read_bytes()
    assert scan_and_mark(holdouts, tmp_path / "other.log") == []
    assert (holdouts / "manifest.json").read_bytes() == before  # a clean scan: untouched
    assert not any(e["event"] == "scan" for e in manifest(holdouts)["history"])
    lines = (holdouts / "scans.jsonl").read_text().splitlines()
    scans = [json.loads(line) for line in lines][:2]
    assert [(s["files"], s["bytes"], s["hits"], s["suites"]) for s in scans] == [
        (2, 17, 0, {"s1": {"files": 2, "bytes": 17, "hits": 0}}),
        (1, 2, 0, {}),
    ]
    assert scans[0]["paths"] == [str(tmp_path / "traces")]
    told = custody(holdouts, "s1")
    assert told.state == "sealed"
    assert told.last_scan is not None
    assert (told.last_scan.files, told.last_scan.bytes, told.last_scan.hits) == (2, 17, 0)
    assert TIME.match(told.last_scan.at)
    assert custody(holdouts, "s2").last_scan is None  # scans ran, none of its traces


def test_custody_says_who_unvoided_when_and_why(holdouts: Path, tmp_path: Path) -> None:
    trace = tmp_path / "s2" / "trace.jsonl"
    trace.parent.mkdir()
    trace.write_text(canary(3))
    scan_and_mark(holdouts, trace)
    assert custody(holdouts, "s2").state == "void"
    unvoid(holdouts, "s2", by="ana", why="a fixture, not a leak")
    told = custody(holdouts, "s2")
    assert told.state == "sealed"
    assert told.unvoided is not None
    assert (told.unvoided.by, told.unvoided.why) == ("ana", "a fixture, not a leak")
    assert told.last_scan is not None
    assert told.last_scan.hits == 1


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda d: suite_state(d, "s1"), id="state"),
        pytest.param(lambda d: canary_scan(d, []), id="scan"),
        pytest.param(lambda d: unvoid(d, "s1", by="a", why="b"), id="unvoid"),
        pytest.param(lambda d: custody(d, "s1"), id="custody"),
    ],
)
def test_a_missing_holdouts_folder_is_an_error_never_a_pass(tmp_path: Path, call: Any) -> None:
    with pytest.raises(InputError, match="the holdouts folder does not exist; fix `holdouts`"):
        call(tmp_path / "holdout")


def test_unvoid_records_who_why_and_the_evidence(holdouts: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(canary(3))
    scan_and_mark(holdouts, trace)
    evidence = custody(holdouts, "s2").evidence
    assert unvoid(holdouts, "s2", by=" ana ", why="scanned the keys file by mistake") == evidence
    assert custody(holdouts, "s2").evidence is None
    data = manifest(holdouts)
    assert data["suites"]["s2"]["status"] == "sealed"
    assert "evidence" not in data["suites"]["s2"]
    last = data["history"][-1]
    assert (last["event"], last["by"], last["why"], last["evidence"]) == (
        "unvoid",
        "ana",
        "scanned the keys file by mistake",
        msgspec.to_builtins(evidence),
    )
    assert scan_and_mark(holdouts, trace) == ["s2"]  # the same hit voids it again


@pytest.mark.parametrize(
    ("suite", "by", "why", "message"),
    [
        pytest.param(
            "s1", "ana", "because", "suite s1 is not void; nothing to unvoid", id="sealed"
        ),
        pytest.param(
            "s9", "ana", "because", "suite s9 is not registered (registered: s1, s2)", id="unknown"
        ),
        pytest.param("s1", " ", "because", "needs --by WHO and --why TEXT", id="no-by"),
        pytest.param("s1", "ana", "", "needs --by WHO and --why TEXT", id="no-why"),
    ],
)
def test_unvoid_refuses(holdouts: Path, suite: str, by: str, why: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        unvoid(holdouts, suite, by=by, why=why)


def test_no_evidence_without_a_manifest(tmp_path: Path) -> None:
    assert custody(tmp_path, "s1").evidence is None


def test_suite_state_tells_registered_from_not(holdouts: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert suite_state(tmp_path / "empty", "s1") == "no-manifest"
    assert not (tmp_path / "empty" / "manifest.json").exists()
    assert suite_state(holdouts, "s9") == "unregistered"
    assert suite_state(holdouts, "s1") == "sealed"
    trace = tmp_path / "trace.jsonl"
    trace.write_text(canary(3))
    scan_and_mark(holdouts, trace)
    assert (suite_state(holdouts, "s1"), suite_state(holdouts, "s2")) == ("sealed", "void")
    unvoid(holdouts, "s2", by="ana", why="fixture")
    assert suite_state(holdouts, "s2") == "sealed"


# ---- a registered suite's sealed keys file is never scanned --------------------------------


def seal_suite(
    folder: Path, canaries: dict[str, str], holdouts: Path | None = None, *, name: str = ""
) -> Path:
    """A suite folder as `knowledge seal` leaves it; registered in ``holdouts`` when given."""
    name = name or folder.name
    folder.mkdir(parents=True)
    gen(
        folder,
        {
            "questions.jsonl": [{"id": q} for q in canaries],
            "keys.jsonl": [{"id": q, "canary": c} for q, c in canaries.items()],
        },
    )
    seal = {
        "suite": name,
        "sealed_at": "2026-11-01T00:00:00Z",
        "sha256": {n: sha256_file(folder / n) for n in ("questions.jsonl", "keys.jsonl")},
        "flightdeck_version": "0.1.0",
    }
    (folder / "manifest.json").write_text(json.dumps(seal, indent=2) + "\n")
    if holdouts is not None:
        sha = sha256_bytes(canonical_json(seal))
        register_suite(holdouts, suite=name, manifest_sha256=sha, canaries=canaries)
    return folder / "keys.jsonl"


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project root with two registered, sealed suites: (root, holdouts, k1's keys file)."""
    holdouts = tmp_path / "holdouts"
    k1 = seal_suite(tmp_path / "suites" / "k1", {"q1": canary(21), "q2": canary(22)}, holdouts)
    seal_suite(tmp_path / "suites" / "k2", {"q1": canary(23)}, holdouts)
    (tmp_path / "traces" / "k1" / "search").mkdir(parents=True)
    (tmp_path / "traces" / "k1" / "search" / "q1.log").write_text("looked around\n")
    return tmp_path, holdouts, k1


@pytest.mark.parametrize("where", [".", "suites", "suites/k1", "suites/k1/keys.jsonl"])
def test_scanning_the_suites_by_mistake_skips_their_sealed_keys_and_voids_nothing(
    project: tuple[Path, Path, Path], where: str
) -> None:
    root, holdouts, _ = project
    result = canary_scan(holdouts, [root / where])
    expected = {
        ".": ("k1", "k2"),
        "suites": ("k1", "k2"),
        "suites/k1": ("k1",),
        "suites/k1/keys.jsonl": ("k1",),  # named directly: still the sealed file
    }[where]
    assert result.sealed_keys == tuple(root / "suites" / s / "keys.jsonl" for s in expected)
    assert result.clean
    assert result.unregistered == 0
    scanned = {".": 5, "suites": 4, "suites/k1": 2, "suites/k1/keys.jsonl": 0}[where]
    assert result.files == scanned  # questions.jsonl, manifest.json and the trace
    before = manifest(holdouts)
    assert mark_void(holdouts, result) == []
    assert manifest(holdouts)["suites"] == before["suites"]  # only the scan is recorded


def test_plan_scan_lists_the_files_the_skipped_keys_and_the_size(
    project: tuple[Path, Path, Path],
) -> None:
    root, holdouts, k1 = project
    plan = plan_scan(holdouts, [root / "suites" / "k1"])
    others = (root / "suites" / "k1" / "manifest.json", root / "suites" / "k1" / "questions.jsonl")
    size = sum(p.stat().st_size for p in others)
    assert plan == ScanPlan(others, (k1,), size, (root / "suites" / "k1",))
    result = canary_scan(holdouts, plan)
    assert (result.files, result.sealed_keys) == (2, (k1,))


def _edit_keys(root: Path, k1: Path) -> Path:
    k1.write_text(k1.read_text() + "\n")  # no longer the sealed bytes
    return k1


def _copy_keys_to_traces(root: Path, k1: Path) -> Path:
    return Path(shutil.copy(k1, root / "traces" / "k1" / "search" / "keys.jsonl"))


def _copy_keys_under_another_name(root: Path, k1: Path) -> Path:
    return Path(shutil.copy(k1, k1.with_name("keys-backup.jsonl")))


def _reseal_under_the_same_name(root: Path, k1: Path) -> Path:
    seal = json.loads((k1.parent / "manifest.json").read_text())
    seal["sealed_at"] = "2027-01-01T00:00:00Z"  # not the manifest that was registered
    (k1.parent / "manifest.json").write_text(json.dumps(seal))
    return k1


def _break_the_suite_manifest(root: Path, k1: Path) -> Path:
    (k1.parent / "manifest.json").write_text("{not json")
    return k1


def _repeat_a_key_of_the_suite_manifest(root: Path, k1: Path) -> Path:
    # No seal the suite's own reader would take (a key given twice): json.loads alone kept the
    # last "suite" and called the keys beside it sealed.
    text = (k1.parent / "manifest.json").read_text()
    (k1.parent / "manifest.json").write_text('{"suite": "k2", ' + text.lstrip()[1:])
    return k1


@pytest.mark.parametrize(
    "change",
    [
        _edit_keys,
        _copy_keys_to_traces,
        _copy_keys_under_another_name,
        _reseal_under_the_same_name,
        _break_the_suite_manifest,
        _repeat_a_key_of_the_suite_manifest,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_a_keys_file_that_is_not_the_sealed_one_is_scanned(
    project: tuple[Path, Path, Path], change: Callable[[Path, Path], Path]
) -> None:
    root, holdouts, k1 = project
    leak = change(root, k1)
    result = canary_scan(holdouts, [root])
    assert leak not in result.sealed_keys
    assert result.first_hit("k1") == Hit(canary(21), "k1", "q1", leak, 1)
    assert mark_void(holdouts, result) == ["k1"]  # k2's keys are still the sealed file


def test_an_unregistered_suites_keys_are_scanned(holdouts: Path, tmp_path: Path) -> None:
    keys = seal_suite(tmp_path / "suites" / "x1", {"q1": canary(31)})  # sealed, not registered
    result = canary_scan(holdouts, [tmp_path / "suites"])
    assert (result.sealed_keys, result.files, result.unregistered) == ((), 3, 1)
    assert keys.exists()


def test_scanning_without_a_manifest_says_how_to_make_one(tmp_path: Path) -> None:
    (tmp_path / "holdouts").mkdir()
    with pytest.raises(InputError, match="no holdouts manifest here; seal a suite with") as caught:
        canary_scan(tmp_path / "holdouts", [tmp_path])
    assert caught.value.path == str(tmp_path / "holdouts" / "manifest.json")
    assert not (tmp_path / "holdouts" / "manifest.json").exists()


def good() -> dict[str, Any]:
    return {
        "format": 1,
        "canaries": {canary(1): {"suite": "s1", "question_id": "q1"}},
        "suites": {"s1": {"manifest_sha256": "a" * 64, "status": "sealed"}},
        "history": [],
    }


def changed(**fields: Any) -> str:
    return json.dumps(good() | fields)


MALFORMED = [
    pytest.param("{", r"1: not JSON \(", id="not-json"),
    pytest.param("[]", "expected a JSON object, got an array", id="array"),
    pytest.param(changed(format=2), "format must be 1, got 2", id="format"),
    pytest.param(changed(extra=1), "unknown field 'extra'", id="unknown-field"),
    pytest.param(changed(history={}), "history must be a list", id="history"),
    pytest.param(changed(suites=[]), "suites and canaries must be objects", id="suites"),
    pytest.param(
        changed(suites={"s1": {"manifest_sha256": "x", "status": "sealed"}}),
        "suites.s1.manifest_sha256 must be 64 hex digits",
        id="sha",
    ),
    pytest.param(
        changed(suites={"s1": {"manifest_sha256": "a" * 64, "status": "lost"}}),
        "suites.s1.status must be sealed or void, got 'lost'",
        id="status",
    ),
    pytest.param(
        changed(suites={"s1": {"manifest_sha256": "a" * 64, "status": "void"}}),
        "suites.s1 is void but its evidence is incomplete",
        id="void-without-evidence",
    ),
    pytest.param(
        changed(canaries={"KEY": {"suite": "s1", "question_id": "q1"}}),
        "canaries: 'KEY' is not a canary",
        id="canary",
    ),
    pytest.param(
        changed(canaries={canary(1): {"suite": "s9", "question_id": "q1"}}),
        f"canaries.{canary(1)} names suite 's9', which is not in suites",
        id="unknown-suite",
    ),
    pytest.param(
        changed(canaries={canary(1): {"suite": "s1"}}),
        f"canaries.{canary(1)} must be an object with a question_id",
        id="no-question",
    ),
    pytest.param(  # a name that would break the one line is quoted (str.splitlines: \x1e)
        changed(suites={"s1\x1ex": 1}, canaries={}),
        re.escape("suites.'s1\\x1ex' must be an object; restore"),
        id="unprintable-suite-name",
    ),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_a_malformed_manifest_is_an_input_error_naming_it(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "manifest.json").write_text(text)
    for call in (
        lambda: custody(tmp_path, "s1"),
        lambda: suite_state(tmp_path, "s1"),
        lambda: plan_scan(tmp_path, [tmp_path]),
        lambda: canary_scan(tmp_path, [tmp_path]),
        lambda: register(tmp_path, "s2", "b" * 64, {"q1": canary(2)}),
        lambda: unvoid(tmp_path, "s1", by="ana", why="x"),
    ):
        with pytest.raises(InputError, match=message) as caught:
            call()
        assert caught.value.path == str(tmp_path / "manifest.json")


def test_last_scan_sums_the_newest_scan_of_each_set_of_paths(
    holdouts: Path, tmp_path: Path
) -> None:
    """The pipeline scans one arm at a time: the report's line covers every arm."""
    arms = [tmp_path / "traces" / "s1" / arm for arm in ("a", "b")]
    for n, folder in enumerate(arms):
        folder.mkdir(parents=True)
        (folder / "q1.log").write_text("x" * (10 + n))
    assert scan_and_mark(holdouts, arms[0]) == []
    (arms[0] / "q2.log").write_text("y" * 5)
    assert scan_and_mark(holdouts, arms[0]) == []  # the newer scan of the same paths counts
    assert scan_and_mark(holdouts, arms[1]) == []
    told = custody(holdouts, "s1")
    assert told.last_scan is not None
    assert (told.last_scan.files, told.last_scan.bytes, told.last_scan.scans) == (3, 26, 2)
    assert describe_custody(told, holdouts / "manifest.json").endswith(
        "3 files, 26 bytes, no hit (the newest scan of each of 2 sets of paths)"
    )


def test_a_newer_scan_of_overlapping_paths_stands_for_the_older(
    holdouts: Path, tmp_path: Path
) -> None:
    arm = tmp_path / "traces" / "s1" / "a"
    arm.mkdir(parents=True)
    (arm / "q1.log").write_text("x" * 10)
    assert scan_and_mark(holdouts, arm) == []
    assert scan_and_mark(holdouts, tmp_path / "traces") == []  # holds the arm's folder
    told = custody(holdouts, "s1")
    assert told.last_scan is not None
    assert (told.last_scan.files, told.last_scan.scans) == (1, 1)  # not counted twice
