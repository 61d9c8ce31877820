"""The holdouts manifest file: its format, its checks, its atomic writes under a lock.

``DIR/manifest.json`` (written atomically, key-sorted, under an exclusive lock) holds::

    {"format": 1,
     "canaries": {"<canary>": {"suite": "<suite>", "question_id": "<id>"}},
     "suites": {"<suite>": {"manifest_sha256": "<hex>", "status": "sealed" | "void",
                            "registered_at": "<UTC>", "evidence": {...}  # when void
                            }},
     "history": [{"event": "registered" | "void" | "unvoid" | "scan", "at": ..., ...}, ...]}

Every canary scan, clean or not, is recorded apart, one JSON line per scan in
``DIR/scans.jsonl`` (:func:`append_scan`): the manifest is a dependency of the pipeline's
canary-scan and score stages, and a manual scan that only looked must not make the committed
pipeline stale. A scan with a hit changes the manifest (the suite is void), as it must.
Manifests written before the split keep their ``scan`` events in the history; readers take
both (:func:`scan_events`).

The registry (:mod:`flightdeck.holdouts.registry`), the leak scan
(:mod:`flightdeck.holdouts.leaks`) and custody read and change it only through here, so
the file has one reader that checks it and one writer.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.jsonl import append_jsonl, atomic_write, locked_folder, read_json, read_jsonl
from flightdeck.suite.records import CANARY_RE, SHA256_RE

MANIFEST = "manifest.json"
SCANS = "scans.jsonl"
FORMAT = 1
_EVIDENCE_KEYS = {"canary": str, "question_id": str, "file": str, "line": int, "count": int}


def manifest_path(holdouts_dir: Path) -> Path:
    return holdouts_dir / MANIFEST


def scans_path(holdouts_dir: Path) -> Path:
    return holdouts_dir / SCANS


def append_scan(holdouts_dir: Path, event: dict[str, Any]) -> None:
    """Record one scan in ``DIR/scans.jsonl`` (call under :func:`locked_manifest`)."""
    append_jsonl(scans_path(holdouts_dir), event)


def scan_events(holdouts_dir: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Every recorded scan, oldest first: the manifest's own (before scans.jsonl), then the file's.

    A line of scans.jsonl that is not a scan record is an :class:`InputError` naming it.
    """
    events = [e for e in manifest["history"] if e.get("event") == "scan"]
    path = scans_path(holdouts_dir)
    if not path.exists():
        return events
    for number, event in read_jsonl(path):
        if event.get("event") != "scan" or not isinstance(event.get("suites"), dict):
            raise InputError(path, number, "not a scan record; restore the file from git")
        events.append(event)
    return events


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


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
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
def locked_manifest(holdouts_dir: Path, *, create: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on the folder while reading, changing and writing the manifest."""
    if not create and not holdouts_dir.is_dir():
        load_manifest(manifest_path(holdouts_dir), missing_ok=False)  # says how to make one
    with locked_folder(holdouts_dir):
        yield


def load_manifest(path: Path, *, missing_ok: bool) -> dict[str, Any]:
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
