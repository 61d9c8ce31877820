"""What the holdouts registry can truthfully say of one suite: its state, its last scan, unvoids.

The report and ``status`` say only what happened: "last canary scan: <date>, <n> files,
<bytes>, no hit" when a recorded scan read the suite's traces, and "no canary scan has been
run on this suite's traces" when none did; never a clean bill from a scan that did not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.errors import InputError
from flightdeck.holdouts.manifest import (
    load_manifest,
    manifest_path,
    require_folder,
    scan_events,
)
from flightdeck.holdouts.manifest_format import Evidence, ScanOfSuite
from flightdeck.holdouts.registry import SuiteState

if TYPE_CHECKING:
    from flightdeck.params import Params


@dataclass(frozen=True, slots=True)
class LastScan:
    """The newest recorded scan of each set of paths that read the suite's own traces, summed.

    ``at`` is the newest one's time, ``paths`` every set's paths, ``files``, ``bytes`` and
    ``hits`` what they read under the suite's folder, ``scans`` how many were summed.
    """

    at: str
    paths: list[str]
    files: int
    bytes: int
    hits: int
    scans: int


@dataclass(frozen=True, slots=True)
class Unvoided:
    """The newest deliberate unvoid of a suite: when, by whom and why."""

    at: str
    by: str | None
    why: str | None


@dataclass(frozen=True, slots=True)
class Custody:
    """What the holdouts registry can truthfully say about one suite's traces.

    ``last_scan`` sums, over each set of paths scanned, the newest recorded scan that read
    files under the suite's own folder, or None when none did; ``unvoided`` the newest
    unvoid of the suite, or None; ``evidence`` what voided it (the manifest's record of the
    first hit and the count) when it is void, else None.
    """

    state: SuiteState
    last_scan: LastScan | None
    unvoided: Unvoided | None
    evidence: Evidence | None = None


def custody(holdouts_dir: Path, suite: str) -> Custody:
    """The suite's registry state, void evidence, last recorded scan and last unvoid.

    One read of the manifest (it holds every canary of every suite: 100,000 of them parse in
    about 0.2 s), where asking the registry's :func:`~flightdeck.holdouts.registry.suite_state`
    and then for the evidence would read it twice.
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    if not path.exists():
        return Custody("no-manifest", None, None)
    manifest = load_manifest(path)
    entry = manifest.suites.get(suite)
    state: SuiteState = "unregistered" if entry is None else entry.status
    evidence = entry.evidence if entry is not None and state == "void" else None
    unvoided = None
    newest: dict[tuple[str, ...], tuple[str, ScanOfSuite]] = {}  # per set of paths: newest
    for event in scan_events(holdouts_dir, manifest):
        mine = (event.suites or {}).get(suite)
        if mine is not None and mine.files:
            newest[tuple(event.paths or ())] = (event.at, mine)
    last_scan = _combined(newest)
    for event in manifest.history:
        if event.event == "unvoid" and event.suite == suite:
            unvoided = Unvoided(at=event.at, by=event.by, why=event.why)
    return Custody(state, last_scan, unvoided, evidence)


def _combined(newest: dict[tuple[str, ...], tuple[str, ScanOfSuite]]) -> LastScan | None:
    """The newest scan of each set of paths, summed: the pipeline scans one arm at a time.

    Sets of paths that overlap (the same path, or one inside another: a manual scan of
    ``traces/`` and the pipeline's scan of ``traces/<suite>/<arm>``) are not summed: the
    newer one stands for both, so a file is never counted twice. ``scans`` says how many
    scans were summed.
    """
    kept: list[tuple[tuple[str, ...], tuple[str, ScanOfSuite]]] = []
    for paths, scan in sorted(newest.items(), key=lambda item: item[1][0], reverse=True):
        if not any(_overlap(paths, other) for other, _ in kept):
            kept.append((paths, scan))
    if not kept:
        return None
    scans = [scan for _, (_, scan) in kept]
    return LastScan(
        at=kept[0][1][0],
        paths=[path for paths, _ in kept for path in paths],
        files=sum(scan.files for scan in scans),
        bytes=sum(scan.bytes for scan in scans),
        hits=sum(scan.hits for scan in scans),
        scans=len(scans),
    )


def _overlap(one: tuple[str, ...], two: tuple[str, ...]) -> bool:
    def within(a: str, b: str) -> bool:
        a, b = a.rstrip("/"), b.rstrip("/")
        return a == b or a.startswith(b + "/")

    return any(within(a, b) or within(b, a) for a in one for b in two)


def describe_custody(told: Custody, manifest: Path) -> str:
    """One sentence for the report and ``status``: what was checked, and when."""
    if told.state in ("no-manifest", "unregistered"):
        return (
            f"the suite is not registered in {manifest}, so a leaked key would go unnoticed "
            "(seal with --holdouts)"
        )
    scan = told.last_scan
    if scan is None:
        words = "no canary scan has been run on this suite's traces"
    else:
        hits = scan.hits
        found = "no hit" if not hits else f"{hits} {'hit' if hits == 1 else 'hits'}"
        several = scan.scans > 1
        words = (
            f"last canary scan: {_day(scan.at)}, {_count(scan.files, 'file')}, "
            f"{size_words(scan.bytes)}, {found}"
            + (f" (the newest scan of each of {scan.scans} sets of paths)" if several else "")
        )
    if told.unvoided is not None:
        u = told.unvoided
        words += f"; unvoided by {u.by} on {_day(u.at)}: {u.why}"
    return words


def _day(at: str) -> str:
    """``2026-12-01T14:25:28Z`` -> ``2026-12-01 14:25 UTC``."""
    return f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 else at


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def size_words(n: int) -> str:
    """Bytes in words, as the scan's summary prints them."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return _count(n, "byte")


def holdouts_custody(params: Params, suite: str, *, sealed: bool = True) -> Custody:
    """What the holdouts registry says of ``suite``: the one place commands ask it.

    A holdouts folder that params.yaml or --holdouts names must exist once the suite is
    sealed (a typo must never switch the leak check off); the default ``holdouts/``, never
    named, may be missing, and the suite then reads as not registered.
    """
    if not params.holdouts.is_dir():
        if params.holdouts_named and sealed:
            require_folder(params.holdouts)
        return Custody("no-manifest", None, None)
    return custody(params.holdouts, suite)


def void_in_params_holdouts(params: Params, suite: str) -> Evidence | None:
    """The evidence of a void that params.yaml's holdouts folder records, when --holdouts
    names another folder (#25); None when it does not, or records no void for ``suite``."""
    theirs = params.holdouts_in_params
    if not params.holdouts_elsewhere or theirs is None or not theirs.is_dir():
        return None
    return custody(theirs, suite).evidence


def refuse_void_elsewhere(params: Params, suite: str) -> None:
    """--holdouts naming another folder never bypasses a void params.yaml's folder records,
    unless --holdouts-reason says why (the report then prints both and the reason)."""
    evidence = void_in_params_holdouts(params, suite)
    if evidence is None or params.holdouts_reason is not None:
        return
    theirs = params.holdouts_in_params
    raise InputError(
        "--holdouts",
        None,
        f"{params.holdouts} is not params.yaml's holdouts folder ({theirs}), whose manifest "
        f"marks suite {suite!r} void ({describe_void(evidence)}); score with params' holdouts "
        "(a void suite's keys are spent: seal a new version), or give --holdouts-reason TEXT "
        "to score anyway with the reason recorded in the report",
    )


def describe_void(evidence: Evidence) -> str:
    """The holdouts manifest's evidence in words: which key leaked, where, how often."""
    more = f", {evidence.count} hits in all" if evidence.count > 1 else ""
    return f"the canary of question {evidence.question_id} in {evidence.file}:{evidence.line}{more}"
