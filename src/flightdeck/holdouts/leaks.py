"""Finding leaked canaries: a scan of files against the registry, and the suites it voids.

The scan is two calls: :func:`canary_scan` only reads and returns a :class:`ScanResult`;
:func:`mark_void` records the void suites. ``flightdeck holdout canary-scan`` calls both
(:func:`scan_and_void`), after :func:`~flightdeck.holdouts.plan.plan_scan` (which files, how
many bytes) for its progress bar. A ``scan`` event (one per ``canary-scan``, clean or not)
records the paths, files, bytes and hits, and per registered suite the files and bytes it
read under that suite's own folder, in ``DIR/scans.jsonl``, beside the manifest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from flightdeck.files.clock import utc_now
from flightdeck.holdouts import scan as engine
from flightdeck.holdouts.manifest import (
    ManifestRead,
    append_scan,
    load_manifest,
    locked_manifest,
    manifest_path,
    read_manifest,
    require_folder,
    write_manifest,
)
from flightdeck.holdouts.manifest_format import (
    Event,
    Evidence,
    Manifest,
    ScanOfSuite,
    SuiteEntry,
)
from flightdeck.holdouts.plan import ScanPlan, plan_files


@dataclass(frozen=True, slots=True)
class Hit:
    """A registered canary found in a file, at a 1-based line."""

    canary: str
    suite: str
    question_id: str
    file: Path
    line: int


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What :func:`canary_scan` found.

    ``hits`` are in file order and include the first hit of every canary; a file holding a
    canary thousands of times lists only the first of them, but ``hit_count`` and
    ``suite_counts`` count them all. ``unregistered`` counts canary-shaped strings that this
    registry does not know (another registry's, perhaps). ``bytes_scanned`` is decompressed text.
    ``files`` counts the files scanned; ``sealed_keys`` lists the registered suites' sealed keys
    files that the scan left out (see :func:`~flightdeck.holdouts.plan.plan_scan`).
    """

    hits: tuple[Hit, ...]
    hit_count: int
    suite_counts: dict[str, int]
    files: int
    bytes_read: int
    bytes_scanned: int
    unregistered: int
    canaries: int
    sealed_keys: tuple[Path, ...] = ()
    # registered suite -> (files, bytes on disk) of the scanned files under a folder named
    # after it (traces/<suite>/...): what the scan covered of that suite's traces
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)
    paths: tuple[str, ...] = ()  # what the scan was asked to read, as given
    # the registry the scan matched against, as read: mark_void reuses it if unchanged
    read: ManifestRead | None = field(default=None, compare=False)

    @property
    def clean(self) -> bool:
        return self.hit_count == 0

    def first_hit(self, suite: str) -> Hit:
        return next(hit for hit in self.hits if hit.suite == suite)


def canary_scan(
    holdouts_dir: Path,
    paths: Sequence[Path] | ScanPlan,
    *,
    jobs: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    chunk_size: int = engine.CHUNK_SIZE,
    cache: Path | None = None,
) -> ScanResult:
    """Scan files and folders (recursively; plain, gzip, zstd, bz2, xz) for registered canaries.

    ``paths`` are files and folders, or the :class:`ScanPlan` that
    :func:`~flightdeck.holdouts.plan.plan_scan` made of them (so that they are walked once).
    Reads only: :func:`mark_void` records what a scan found. The holdouts manifest and the
    registered suites' sealed keys files are left out (see
    :func:`~flightdeck.holdouts.plan.plan_scan`). ``jobs`` processes (default: every core)
    share the work; ``on_progress`` receives increments of on-disk bytes scanned
    (``ScanPlan.size`` in all). ``cache`` keeps the compiled search database between scans
    (the project's ``.flightdeck/cache/scan-database/``; checked whenever it is loaded).
    """
    path = manifest_path(holdouts_dir)
    if isinstance(paths, ScanPlan) and paths.read is not None and paths.read.path == path:
        plan, read = paths, paths.read  # planned with this manifest: not read again
    else:
        require_folder(holdouts_dir)
        read = read_manifest(path)
        plan = paths if isinstance(paths, ScanPlan) else plan_files(read, paths)
    manifest = read.manifest
    owners = {
        canary[len(engine.PREFIX) :]: (canary, owner.suite, owner.question_id)
        for canary, owner in manifest.canaries.items()
    }
    files = plan.files
    tails = frozenset(tail.encode("ascii") for tail in owners)
    found = engine.scan_tails(
        files, tails, jobs=jobs, chunk_size=chunk_size, on_progress=on_progress, cache=cache
    )
    hits = tuple(Hit(*owners[m.tail], m.path, m.line) for m in found.matches)
    suite_counts: dict[str, int] = {}
    for tail, count in found.counts.items():
        suite = owners[tail][1]
        suite_counts[suite] = suite_counts.get(suite, 0) + count
    return ScanResult(
        hits=hits,
        hit_count=sum(found.counts.values()),
        suite_counts=dict(sorted(suite_counts.items())),
        files=found.files,
        bytes_read=found.bytes_read,
        bytes_scanned=found.bytes_scanned,
        unregistered=found.unregistered,
        canaries=len(owners),
        sealed_keys=plan.sealed_keys,
        coverage=_coverage(files, manifest.suites),
        paths=tuple(str(p) for p in (plan.paths if isinstance(paths, ScanPlan) else paths)),
        read=read,
    )


def _coverage(
    files: Sequence[Path], suites: Mapping[str, SuiteEntry]
) -> dict[str, tuple[int, int]]:
    """Per registered suite, the scanned files that lie under a folder named after it."""
    covered: dict[str, list[int]] = {}
    for file in files:
        for part in file.parent.parts:
            if part in suites:
                entry = covered.setdefault(part, [0, 0])
                entry[0] += 1
                with contextlib.suppress(OSError):
                    entry[1] += file.stat().st_size
                break
    return {suite: (n, size) for suite, (n, size) in sorted(covered.items())}


def scan_and_void(
    holdouts_dir: Path,
    paths: Sequence[Path] | ScanPlan,
    *,
    jobs: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    cache: Path | None = None,
) -> CanaryScan:
    """What ``holdout canary-scan`` does: :func:`canary_scan`, then :func:`mark_void`.

    A Python caller gets the same custody as the command (a hit always voids its suite).
    """
    found = canary_scan(holdouts_dir, paths, jobs=jobs, on_progress=on_progress, cache=cache)
    return CanaryScan(found=found, newly_void=tuple(mark_void(holdouts_dir, found)))


@dataclass(frozen=True, kw_only=True)
class CanaryScan:
    """What :func:`scan_and_void` did: what the scan found, and the suites it voided now."""

    found: ScanResult
    newly_void: tuple[str, ...]  # suites void because of this scan, not void before it


def mark_void(holdouts_dir: Path, result: ScanResult) -> list[str]:
    """Record the scan, mark every suite with a hit void; return the suites newly voided.

    Every scan is recorded in ``DIR/scans.jsonl`` (when, which paths, files and bytes read,
    hits, and per suite what of its traces it covered), so a report can say when a suite's
    traces were last scanned, and never claims a scan that did not run. Only a newly void
    suite changes the manifest (its status, evidence and a ``void`` event): the manifest is a
    pipeline dependency, and a manual scan that found nothing must not stale the pipeline. A
    suite that is already void keeps its first evidence.
    """
    path = manifest_path(holdouts_dir)
    newly: list[str] = []
    with locked_manifest(holdouts_dir):
        now = utc_now()
        append_scan(holdouts_dir, _scan_event(result, now))  # apart: see holdouts.manifest
        if not result.suite_counts:
            return newly
        manifest = _current(path, result.read)
        suites, events = dict(manifest.suites), list(manifest.history)
        for suite, count in result.suite_counts.items():
            entry = suites.get(suite)
            if entry is None or entry.status == "void":
                continue  # unregistered since the scan began, or void already
            first = result.first_hit(suite)
            evidence = Evidence(
                canary=first.canary,
                question_id=first.question_id,
                file=str(first.file),
                line=first.line,
                count=count,
                at=now,
            )
            suites[suite] = msgspec.structs.replace(entry, status="void", evidence=evidence)
            events.append(Event(event="void", suite=suite, at=now, evidence=evidence))
            newly.append(suite)
        if newly:  # a clean scan leaves the manifest, a pipeline dependency, as it was
            changed = msgspec.structs.replace(manifest, suites=suites, history=tuple(events))
            write_manifest(path, changed)
    return newly


def _current(path: Path, read: ManifestRead | None) -> Manifest:
    """The manifest as it is now (call under the lock): the scan's own read when the file
    has not changed since, else read again."""
    if read is None or read.path != path or not read.unchanged():
        return load_manifest(path)
    return read.manifest


def _scan_event(result: ScanResult, at: str) -> Event:
    suites = {
        suite: ScanOfSuite(files=n, bytes=size, hits=result.suite_counts.get(suite, 0))
        for suite, (n, size) in result.coverage.items()
    }
    for suite, count in result.suite_counts.items():  # a hit outside the suite's own folder
        suites.setdefault(suite, ScanOfSuite(files=0, bytes=0, hits=count))
    return Event(
        event="scan",
        at=at,
        paths=list(result.paths),
        files=result.files,
        bytes=result.bytes_read,
        hits=result.hit_count,
        suites=dict(sorted(suites.items())),
    )
