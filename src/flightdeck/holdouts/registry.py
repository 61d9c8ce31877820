"""The holdouts registry: which canary belongs to which sealed suite, and which suites are void.

``DIR/manifest.json`` (written atomically, key-sorted, under an exclusive lock) holds::

    {"format": 1,
     "canaries": {"<canary>": {"suite": "<suite>", "question_id": "<id>"}},
     "suites": {"<suite>": {"manifest_sha256": "<hex>", "status": "sealed" | "void",
                            "registered_at": "<UTC>", "evidence": {...}  # when void
                            }},
     "history": [{"event": "registered" | "void" | "unvoid" | "scan", "at": ..., ...}, ...]}

A ``scan`` event (one per ``canary-scan``, clean or not) records the paths, files, bytes and
hits, and per registered suite the files and bytes it read under that suite's own folder.

Evidence of a leak (``evidence``, and :func:`void_evidence`'s answer) is the first hit and the
count: ``{"canary", "question_id", "file", "line", "count", "at"}``. A void suite stays void
until :func:`unvoid` records who lifted it and why; the evidence moves to the history.

The scan is two calls: :func:`canary_scan` only reads and returns a :class:`ScanResult`;
:func:`mark_void` records the void suites. ``flightdeck holdout canary-scan`` calls both, after
:func:`plan_scan` (which files, how many bytes) for its progress bar. A scan never reads a
registered suite's sealed ``keys.jsonl`` (it holds the canaries by design; see
:func:`plan_scan`), so scanning ``suites/`` or the whole project by mistake voids nothing.

:func:`suite_state` says whether a suite is registered at all: a suite sealed without
``--holdouts`` has no canaries here, and a leak of its keys would go unnoticed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from flightdeck.clock import utc_now
from flightdeck.errors import InputError
from flightdeck.holdouts import scan as engine
from flightdeck.jsonl import (
    atomic_write,
    canonical_json,
    locked_folder,
    read_json,
    sha256_bytes,
    sha256_file,
)
from flightdeck.project import Suite
from flightdeck.suite.records import CANARY_RE, SHA256_RE

MANIFEST = "manifest.json"
SuiteState = Literal["no-manifest", "unregistered", "sealed", "void"]
FORMAT = 1
_EVIDENCE_KEYS = {"canary": str, "question_id": str, "file": str, "line": int, "count": int}


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
    files that the scan left out (see :func:`plan_scan`).
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

    @property
    def clean(self) -> bool:
        return self.hit_count == 0

    def first_hit(self, suite: str) -> Hit:
        return next(hit for hit in self.hits if hit.suite == suite)


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """What :func:`plan_scan` found: the files to scan, the sealed keys files left out, and the
    scanned files' total size on disk (for a progress bar)."""

    files: tuple[Path, ...]
    sealed_keys: tuple[Path, ...]
    size: int
    paths: tuple[Path, ...] = ()  # what the plan was made of, as given


def manifest_path(holdouts_dir: Path) -> Path:
    return holdouts_dir / MANIFEST


def require_folder(holdouts_dir: Path) -> None:
    """Refuse a holdouts folder that does not exist: a typo must never switch the leak check off.

    Only ``knowledge seal`` creates the folder (at the first registration); every other
    command that reads the registry calls this first.
    """
    if not holdouts_dir.is_dir():
        raise InputError(
            holdouts_dir,
            None,
            "the holdouts folder does not exist; fix `holdouts` in params.yaml or --holdouts "
            "(only `flightdeck knowledge seal` creates it, when it registers a suite)",
        )


def register_suite(
    holdouts_dir: Path, *, suite: str, manifest_sha256: str, canaries: Mapping[str, str]
) -> None:
    """Add a sealed suite's canaries (question id -> canary) to ``DIR/manifest.json``.

    Creates the manifest when missing and merges into it otherwise. Registering the same suite
    with the same manifest and canaries again changes nothing, so a retried seal is safe; a
    different manifest under a registered name, or a canary that another question owns, is an
    :class:`InputError` naming the holdouts manifest.
    """
    if not suite:
        raise ValueError("suite must be a non-empty name")
    if not SHA256_RE.match(manifest_sha256):
        raise ValueError(f"manifest_sha256 must be 64 hex digits, got {manifest_sha256!r}")
    for question_id, canary in canaries.items():
        if not question_id or not CANARY_RE.match(canary):
            raise ValueError(f"bad canary for question {question_id!r}: {canary!r}")
    if len(set(canaries.values())) != len(canaries):
        raise ValueError(f"suite {suite}: two questions share a canary")
    path = manifest_path(holdouts_dir)
    with _locked(holdouts_dir, create=True):
        manifest = _load(path, missing_ok=True)
        known = manifest["suites"].get(suite)
        if known is not None and known["manifest_sha256"] != manifest_sha256.lower():
            raise InputError(
                path,
                None,
                f"suite {suite} is already registered with another manifest; a changed suite "
                "is a new suite version (…-v2)",
            )
        changed = known is None
        for question_id, canary in canaries.items():
            owner = manifest["canaries"].get(canary)
            wanted = {"suite": suite, "question_id": question_id}
            if owner is not None and owner != wanted:
                raise InputError(
                    path,
                    None,
                    f"canary {canary} of {suite}/{question_id} is already registered for "
                    f"{owner['suite']}/{owner['question_id']}; re-seal with fresh canaries",
                )
            if owner is None:
                manifest["canaries"][canary] = wanted
                changed = True
        if not changed:
            return
        now = utc_now()
        if known is None:
            manifest["suites"][suite] = {
                "manifest_sha256": manifest_sha256.lower(),
                "status": "sealed",
                "registered_at": now,
            }
        manifest["history"].append(
            {"event": "registered", "suite": suite, "at": now, "canaries": len(canaries)}
        )
        _write(path, manifest)


def suite_state(holdouts_dir: Path, suite: str) -> SuiteState:
    """Where ``suite`` stands in the holdouts registry at ``holdouts_dir``.

    ``"no-manifest"``: there is no ``DIR/manifest.json``, so nothing is registered there;
    ``"unregistered"``: the manifest does not know the suite (sealed without ``--holdouts``,
    or into another folder), so a leak of its keys would go unnoticed; ``"sealed"``:
    registered and no canary of it found; ``"void"``: a scan found one of its canaries
    (:func:`void_evidence` says where). A malformed manifest is an :class:`InputError`.
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    if not path.exists():
        return "no-manifest"
    entry = _load(path, missing_ok=False)["suites"].get(suite)
    if entry is None:
        return "unregistered"
    return "void" if entry["status"] == "void" else "sealed"


def void_evidence(holdouts_dir: Path, suite: str) -> dict[str, Any] | None:
    """The evidence that voided ``suite``, or None when it is not void (or not registered)."""
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    if not path.exists():
        return None
    entry = _load(path, missing_ok=False)["suites"].get(suite)
    if entry is None or entry["status"] != "void":
        return None
    return dict(entry["evidence"])


def canary_scan(
    holdouts_dir: Path,
    paths: Sequence[Path] | ScanPlan,
    *,
    jobs: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    chunk_size: int = engine.CHUNK_SIZE,
) -> ScanResult:
    """Scan files and folders (recursively; plain, gzip, zstd, bz2, xz) for registered canaries.

    ``paths`` are files and folders, or the :class:`ScanPlan` that :func:`plan_scan` made of
    them (so that they are walked once). Reads only: :func:`mark_void` records what a scan
    found. The holdouts manifest and the registered suites' sealed keys files are left out
    (see :func:`plan_scan`). ``jobs`` processes (default: every core) share the work;
    ``on_progress`` receives increments of on-disk bytes scanned (``ScanPlan.size`` in all).
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    manifest = _load(path, missing_ok=False)
    owners = {
        canary[len(engine.PREFIX) :]: (canary, entry["suite"], entry["question_id"])
        for canary, entry in manifest["canaries"].items()
    }
    plan = paths if isinstance(paths, ScanPlan) else _plan(path, manifest, paths)
    files = plan.files
    tails = frozenset(tail.encode("ascii") for tail in owners)
    found = engine.scan_tails(
        files, tails, jobs=jobs, chunk_size=chunk_size, on_progress=on_progress
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
        coverage=_coverage(files, manifest["suites"]),
        paths=tuple(str(p) for p in (plan.paths if isinstance(paths, ScanPlan) else paths)),
    )


def _coverage(files: Sequence[Path], suites: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
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


def plan_scan(holdouts_dir: Path, paths: Sequence[Path]) -> ScanPlan:
    """The files a scan of ``paths`` reads, the sealed keys files it leaves out, and the size.

    Folders are walked recursively, in sorted order; folder walks leave out the holdouts
    manifest. Wherever it is found, named or walked, a registered suite's sealed keys file is
    left out: a file named ``keys.jsonl`` whose folder's ``manifest.json`` is the one that
    suite was registered with (same SHA-256 of its canonical JSON) and records the file's own
    SHA-256. It holds every canary of its suite by design, so scanning it would void the suite
    for nothing. A ``keys.jsonl`` that does not match its folder's manifest (changed, or a
    copy without that manifest) is scanned like any file: it may be a leak. A copy of the
    whole sealed suite folder matches too; ``sealed_keys`` lists every file left out, so the
    scan's summary shows where each one was.
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    return _plan(path, _load(path, missing_ok=False), paths)


def _plan(path: Path, manifest: dict[str, Any], paths: Sequence[Path]) -> ScanPlan:
    files: list[Path] = []
    sealed_keys: list[Path] = []
    size = 0
    for file in engine.collect_files(paths, exclude=[path]):
        if _is_sealed_keys(file, manifest["suites"]):
            sealed_keys.append(file)
            continue
        files.append(file)
        with contextlib.suppress(OSError):  # the scan itself reports an unreadable file
            size += file.stat().st_size
    return ScanPlan(tuple(files), tuple(sealed_keys), size, tuple(paths))


def _is_sealed_keys(file: Path, suites: Mapping[str, Any]) -> bool:
    """Whether ``file`` is, byte for byte, the sealed keys file of a registered suite."""
    suite = Suite(file.parent)
    if file.name != suite.keys.name:
        return False
    try:
        seal = json.loads(suite.manifest.read_bytes())
    except (OSError, ValueError):  # no manifest beside it, or not JSON: not a sealed suite
        return False
    if not isinstance(seal, dict) or not isinstance(seal.get("suite"), str):
        return False
    registered = suites.get(seal["suite"])
    hashes = seal.get("sha256")
    if registered is None or not isinstance(hashes, dict):
        return False
    if sha256_bytes(canonical_json(seal)) != registered["manifest_sha256"]:
        return False  # another seal under the same name: not what was registered
    try:
        return sha256_file(file) == hashes.get(suite.keys.name)
    except OSError:  # the scan reports an unreadable file
        return False


def scan_and_void(
    holdouts_dir: Path,
    paths: Sequence[Path] | ScanPlan,
    *,
    jobs: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[ScanResult, list[str]]:
    """What ``holdout canary-scan`` does: :func:`canary_scan`, then :func:`mark_void`.

    Returns the scan and the suites it newly voided; a Python caller gets the same custody
    as the command (a hit always voids its suite).
    """
    result = canary_scan(holdouts_dir, paths, jobs=jobs, on_progress=on_progress)
    return result, mark_void(holdouts_dir, result)


def mark_void(holdouts_dir: Path, result: ScanResult) -> list[str]:
    """Record the scan, mark every suite with a hit void; return the suites newly voided.

    Every scan is recorded in the history (when, which paths, files and bytes read, hits,
    and per suite what of its traces it covered), so a report can say when a suite's traces
    were last scanned, and never claims a scan that did not run. A suite that is already void
    keeps its first evidence.
    """
    path = manifest_path(holdouts_dir)
    newly: list[str] = []
    with _locked(holdouts_dir):
        manifest = _load(path, missing_ok=False)
        now = utc_now()
        manifest["history"].append(_scan_event(result, now))
        for suite, count in result.suite_counts.items():
            entry = manifest["suites"].get(suite)
            if entry is None or entry["status"] == "void":
                continue  # unregistered since the scan began, or void already
            first = result.first_hit(suite)
            evidence = {
                "canary": first.canary,
                "question_id": first.question_id,
                "file": str(first.file),
                "line": first.line,
                "count": count,
                "at": now,
            }
            entry.update(status="void", evidence=evidence)
            manifest["history"].append(
                {"event": "void", "suite": suite, "at": now, "evidence": evidence}
            )
            newly.append(suite)
        _write(path, manifest)
    return newly


def _scan_event(result: ScanResult, at: str) -> dict[str, Any]:
    suites = {
        suite: {"files": n, "bytes": size, "hits": result.suite_counts.get(suite, 0)}
        for suite, (n, size) in result.coverage.items()
    }
    for suite, count in result.suite_counts.items():  # a hit outside the suite's own folder
        suites.setdefault(suite, {"files": 0, "bytes": 0, "hits": count})
    return {
        "event": "scan",
        "at": at,
        "paths": list(result.paths),
        "files": result.files,
        "bytes": result.bytes_read,
        "hits": result.hit_count,
        "suites": dict(sorted(suites.items())),
    }


def unvoid(holdouts_dir: Path, suite: str, *, by: str, why: str) -> dict[str, Any]:
    """Lift a suite's void status deliberately; the history keeps who, why and the evidence.

    Returns the evidence that had voided the suite. A suite that is not registered or not
    void, or an empty ``by`` or ``why``, is an :class:`InputError`.
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    if not by.strip() or not why.strip():
        raise InputError(path, None, "unvoiding needs --by WHO and --why TEXT, both non-empty")
    with _locked(holdouts_dir):
        manifest = _load(path, missing_ok=False)
        entry = manifest["suites"].get(suite)
        if entry is None:
            known = ", ".join(sorted(manifest["suites"])) or "none"
            raise InputError(path, None, f"suite {suite} is not registered (registered: {known})")
        if entry["status"] != "void":
            raise InputError(path, None, f"suite {suite} is not void; nothing to unvoid")
        evidence = entry.pop("evidence")
        entry["status"] = "sealed"
        manifest["history"].append(
            {
                "event": "unvoid",
                "suite": suite,
                "at": utc_now(),
                "by": by.strip(),
                "why": why.strip(),
                "evidence": evidence,
            }
        )
        _write(path, manifest)
    return dict(evidence)


def _write(path: Path, manifest: dict[str, Any]) -> None:
    """Key-sorted JSON with one line per canary, suite and event: small diffs, fast to write.

    (``json.dumps`` with ``indent`` falls back to the pure-Python encoder: 10,000 canaries
    take a tenth of a second that way.)
    """

    def entries(obj: dict[str, Any]) -> str:
        lines = (f"    {json.dumps(k)}: {_line(v)}" for k, v in sorted(obj.items()))
        return "{\n" + ",\n".join(lines) + "\n  }" if obj else "{}"

    events = ",\n".join(f"    {_line(event)}" for event in manifest["history"])
    history = "[\n" + events + "\n  ]" if events else "[]"
    atomic_write(
        path,
        "{\n"
        f'  "canaries": {entries(manifest["canaries"])},\n'
        f'  "format": {manifest["format"]},\n'
        f'  "history": {history},\n'
        f'  "suites": {entries(manifest["suites"])}\n'
        "}\n",
    )


def _line(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@contextlib.contextmanager
def _locked(holdouts_dir: Path, *, create: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on the folder while reading, changing and writing the manifest."""
    if not create and not holdouts_dir.is_dir():
        _load(manifest_path(holdouts_dir), missing_ok=False)  # says how to make one
    with locked_folder(holdouts_dir):
        yield


def _load(path: Path, *, missing_ok: bool) -> dict[str, Any]:
    """Read and check the manifest; a missing one is empty when ``missing_ok``."""
    if not path.exists():
        if missing_ok:
            return {"format": FORMAT, "canaries": {}, "suites": {}, "history": []}
        raise InputError(
            path,
            None,
            "no holdouts manifest here; seal a suite with "
            f"`flightdeck knowledge seal SUITE --holdouts {path.parent}` first",
        )
    manifest = read_json(path)
    problem = _problem(manifest)
    if problem:
        raise InputError(path, None, f"{problem}; restore the file from git")
    return manifest


def _problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a loaded manifest, or None."""
    if manifest.get("format") != FORMAT:
        return f"format must be {FORMAT}, got {manifest.get('format')!r}"
    extra = set(manifest) - {"format", "canaries", "suites", "history"}
    if extra:
        return f"unknown field {sorted(extra)[0]!r}"
    suites, canaries, history = (manifest.get(k) for k in ("suites", "canaries", "history"))
    if not isinstance(suites, dict) or not isinstance(canaries, dict):
        return "suites and canaries must be objects"
    if not isinstance(history, list):
        return "history must be a list"
    for name, entry in suites.items():
        if not isinstance(entry, dict):
            return f"suites.{name} must be an object"
        if not isinstance(entry.get("manifest_sha256"), str) or not SHA256_RE.match(
            entry["manifest_sha256"]
        ):
            return f"suites.{name}.manifest_sha256 must be 64 hex digits"
        if entry.get("status") not in ("sealed", "void"):
            return f"suites.{name}.status must be sealed or void, got {entry.get('status')!r}"
        evidence = entry.get("evidence")
        if entry["status"] == "void" and not (
            isinstance(evidence, dict)
            and all(isinstance(evidence.get(k), t) for k, t in _EVIDENCE_KEYS.items())
        ):
            return f"suites.{name} is void but its evidence is incomplete"
    for canary, entry in canaries.items():
        if not CANARY_RE.match(canary):
            return f"canaries: {canary!r} is not a canary"
        if not isinstance(entry, dict) or not isinstance(entry.get("question_id"), str):
            return f"canaries.{canary} must be an object with a question_id"
        if entry.get("suite") not in suites:
            return f"canaries.{canary} names suite {entry.get('suite')!r}, which is not in suites"
    return None
