"""`flightdeck holdout canary-scan|unvoid` through click's runner: output and exit codes."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject
from tests.cli_calls import invoke

from flightdeck.cli import cli
from flightdeck.cli.holdout import scan_lines
from flightdeck.holdouts.leaks import ScanResult
from flightdeck.holdouts.registry import register_suite
from flightdeck.suite.records import CANARY_PREFIX


def canary(n: int) -> str:
    return f"{CANARY_PREFIX}{n:032x}"


def assert_error(result: Result, line: str) -> None:
    """Bad input: exit 2, exactly one stderr line, no traceback, nothing on stdout."""
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {line}\n"
    assert "Traceback" not in result.output
    assert result.stdout == ""


@pytest.fixture
def holdouts(tmp_path: Path) -> Path:
    folder = tmp_path / "holdouts"
    register_suite(folder, suite="demo-v1", manifest_sha256="a" * 64, canaries={"q1": canary(1)})
    register_suite(
        folder,
        suite="gold-v1",
        manifest_sha256="b" * 64,
        canaries={"q1": canary(2), "q2": canary(3)},
    )
    return folder


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"step": 1}\n{"step": 2}\n')
    (folder / "b.jsonl.gz").write_bytes(gzip.compress(b'{"step": 3}\n', mtime=0))
    return folder


def test_a_clean_scan_exits_0(runner: CliRunner, holdouts: Path, traces: Path) -> None:
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, traces)
    assert result.exit_code == 0, result.output
    assert result.stdout == "clean: none of 3 registered canaries in 2 files, 36 bytes scanned\n"
    assert result.stderr == ""


def test_a_hit_prints_each_hit_voids_the_suite_and_exits_1(
    runner: CliRunner, holdouts: Path, traces: Path
) -> None:
    a, c = traces / "a.jsonl", traces / "c.log"
    a.write_text(f'{{"step": 1}}\n{{"text": "{canary(2)}"}}\n')
    c.write_text(f"{canary(3)} {canary(9)}\n")
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, traces)
    assert result.exit_code == 1, result.output
    assert result.stdout == (
        f"{a}:2: {canary(2)} suite gold-v1 question q1\n"
        f"{c}:1: {canary(3)} suite gold-v1 question q2\n"
        f"2 canary hits in 2 files (of 3 files, 288 bytes scanned); "
        f"void in {holdouts}/manifest.json:\n"
        "  gold-v1: 2 hits (newly void)\n"
        "note: 1 canary-shaped string not registered here (another holdouts folder's?)\n"
    )
    suites = json.loads((holdouts / "manifest.json").read_text())["suites"]
    assert (suites["gold-v1"]["status"], suites["demo-v1"]["status"]) == ("void", "sealed")
    assert suites["gold-v1"]["evidence"]["file"] == str(a)

    again = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, a)
    assert again.exit_code == 1
    assert again.stdout.splitlines()[-1] == "  gold-v1: 1 hit (already void)"


def test_json_output(runner: CliRunner, holdouts: Path, traces: Path) -> None:
    gz = traces / "b.jsonl.gz"
    gz.write_bytes(gzip.compress(f"x\ny\n{canary(1)}\n".encode(), mtime=0))
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, traces, "--json")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout) == {
        "clean": False,
        "hit_count": 1,
        "hits": [
            {
                "canary": canary(1),
                "suite": "demo-v1",
                "question_id": "q1",
                "file": str(gz),
                "line": 3,
            }
        ],
        "suites": {"demo-v1": {"hits": 1, "newly_void": True}},
        "files": 2,
        "bytes_read": (traces / "a.jsonl").stat().st_size + gz.stat().st_size,
        "bytes_scanned": 24 + 88,
        "canaries": 3,
        "unregistered": 0,
        "skipped_sealed_keys": [],
        "manifest": str(holdouts / "manifest.json"),
        "scans": str(holdouts / "scans.jsonl"),
    }
    # In a pipeline the JSON goes to a file; the hit must still reach the person.
    assert result.stderr.splitlines()[0] == (f"{gz}:3: {canary(1)} suite demo-v1 question q1")


def test_jobs_option(runner: CliRunner, holdouts: Path, traces: Path) -> None:
    args = ("holdout", "canary-scan", "--holdouts", holdouts, traces, "--jobs", "1")
    assert invoke(runner, *args).exit_code == 0
    result = runner.invoke(cli, [str(a) for a in args[:-1]] + ["0"])
    assert result.exit_code == 2
    assert "Invalid value for '--jobs'" in result.stderr


def test_a_missing_path_exits_2(runner: CliRunner, holdouts: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, missing)
    assert_error(result, f"{missing}: no such file or folder; check the path")


def test_a_corrupt_gzip_exits_2_naming_the_file(
    runner: CliRunner, holdouts: Path, traces: Path
) -> None:
    bad = traces / "b.jsonl.gz"
    bad.write_bytes(gzip.compress(b"x" * 1000)[:-5])
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, traces)
    assert_error(
        result,
        f"{bad}: gzip data ends early (truncated?); re-copy the file or leave it out of the scan",
    )


def test_a_missing_holdouts_folder_exits_2_naming_it(runner: CliRunner, tmp_path: Path) -> None:
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", tmp_path / "h", tmp_path)
    assert_error(
        result,
        f"{tmp_path}/h: the holdouts folder does not exist; fix `holdouts` in params.yaml or "
        "--holdouts (only `flightdeck knowledge seal` creates it, when it registers a suite)",
    )
    assert not (tmp_path / "h").exists()


def test_canary_scan_reads_the_holdouts_folder_from_params(
    runner: CliRunner, holdouts: Path, traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "params.yaml").write_text("holdouts: holdout\n")  # a typo: no such folder
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "holdout", "canary-scan", traces)
    assert_error(
        result,
        "holdout: the holdouts folder does not exist; fix `holdouts` in params.yaml or "
        "--holdouts (only `flightdeck knowledge seal` creates it, when it registers a suite)",
    )
    (tmp_path / "params.yaml").write_text(f"holdouts: {holdouts.relative_to(tmp_path)}\n")
    result = invoke(runner, "holdout", "canary-scan", traces)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("clean: none of")


def test_without_a_holdouts_manifest_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", tmp_path / "h", tmp_path)
    assert_error(
        result,
        f"{tmp_path}/h/manifest.json: no holdouts manifest here; seal a suite with "
        f"`flightdeck knowledge seal SUITE --holdouts {tmp_path}/h` first",
    )


def test_a_malformed_manifest_exits_2(runner: CliRunner, holdouts: Path, traces: Path) -> None:
    (holdouts / "manifest.json").write_text('{"format": 1, "canaries": {}, "suites": []}')
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, traces)
    assert_error(
        result,
        f"{holdouts}/manifest.json: suites and canaries must be objects; restore the file from git",
    )


def test_unvoid_records_and_reports(runner: CliRunner, holdouts: Path, traces: Path) -> None:
    (traces / "a.jsonl").write_text(f"{canary(1)}\n")
    assert invoke(runner, "holdout", "canary-scan", "--holdouts", holdouts, traces).exit_code == 1
    result = invoke(
        runner,
        "holdout",
        "unvoid",
        "--holdouts",
        holdouts,
        "demo-v1",
        "--by",
        "ana",
        "--why",
        "scanned the keys by mistake",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"unvoided demo-v1: was void on {traces}/a.jsonl:1 (1 hit); "
        f"recorded in {holdouts}/manifest.json\n"
    )
    history = json.loads((holdouts / "manifest.json").read_text())["history"]
    assert (history[-1]["event"], history[-1]["by"]) == ("unvoid", "ana")


def test_unvoid_of_a_sealed_suite_exits_2(runner: CliRunner, holdouts: Path) -> None:
    args = ("holdout", "unvoid", "--holdouts", holdouts, "demo-v1", "--by", "ana", "--why", "x")
    assert_error(
        invoke(runner, *args),
        f"{holdouts}/manifest.json: suite demo-v1 is not void; nothing to unvoid",
    )


@pytest.mark.parametrize("command", [(), ("canary-scan",)], ids=["group", "canary-scan"])
def test_help_examples_scan_the_traces_folder(runner: CliRunner, command: tuple[str, ...]) -> None:
    result = invoke(runner, "holdout", *command, "--help")
    assert "flightdeck holdout canary-scan --holdouts holdouts traces/" in result.stdout
    assert "traces/<suite>/<arm>/" in result.stdout
    assert "runs/" not in result.stdout


def test_scanning_the_whole_project_skips_the_sealed_keys(
    runner: CliRunner, project: BuiltProject
) -> None:
    seal = invoke(runner, "knowledge", "seal", project.suite, "--holdouts", "holdouts")
    assert seal.exit_code == 0, seal.output
    keys = Path("suites/demo-v1/keys.jsonl")
    for where in (".", "suites", keys):
        result = invoke(runner, "holdout", "canary-scan", "--holdouts", "holdouts", where)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("clean: none of 4 registered canaries in ")
        assert result.stdout.endswith(f"\nskipped 1 sealed keys file: {keys}\n")
    as_json = invoke(runner, "holdout", "canary-scan", "--holdouts", "holdouts", ".", "--json")
    assert json.loads(as_json.stdout)["skipped_sealed_keys"] == [str(keys)]
    assert invoke(runner, "knowledge", "status", project.suite).stdout.count("VOID") == 0

    leak = Path("traces/demo-v1/search/q1.log")
    leak.parent.mkdir(parents=True)
    shutil.copy(keys, leak)
    result = invoke(runner, "holdout", "canary-scan", "--holdouts", "holdouts", ".")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(f"{leak}:1: {CANARY_PREFIX}")
    assert result.stdout.splitlines()[-2:] == [
        "  demo-v1: 4 hits (newly void)",
        f"skipped 1 sealed keys file: {keys}",
    ]


def test_a_long_list_of_skipped_keys_is_cut_short_in_text() -> None:
    skipped = tuple(Path(f"suites/s{n}/keys.jsonl") for n in range(7))
    result = ScanResult((), 0, {}, 3, 30, 30, 0, 9, sealed_keys=skipped)
    assert scan_lines(Path("holdouts"), result, [])[-1] == (
        "skipped 7 sealed keys files: " + ", ".join(str(p) for p in skipped[:5]) + ", and 2 more"
    )
