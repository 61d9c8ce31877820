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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from flightdeck.errors import InputError, InternalError
from flightdeck.files.jsonl import append_jsonl, atomic_write, locked_folder, read_json, read_jsonl
from flightdeck.project.paths import holdouts_manifest, holdouts_scans
from flightdeck.suite.problems import Problem, problems, refusal
from flightdeck.suite.schema import Canary, Sha256

FORMAT = 1
manifest_path = holdouts_manifest  # the paths are spelled in flightdeck.project only
scans_path = holdouts_scans


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
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps makes one a call


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
        raise _missing(path)
    return read_manifest(path).manifest


@dataclass(frozen=True, slots=True)
class ManifestRead:
    """A checked manifest and the bytes it was read from.

    A writer holding :func:`locked_manifest` may reuse ``manifest`` instead of reading and
    checking the file again when :meth:`unchanged` (the file still holds exactly ``data``;
    every write replaces the whole file). Callers copy what they change.
    """

    path: Path
    data: bytes
    manifest: dict[str, Any]

    def unchanged(self) -> bool:
        try:
            return self.path.read_bytes() == self.data
        except OSError:
            return False


def read_manifest(path: Path) -> ManifestRead:
    """Read and check an existing manifest, keeping its bytes (see :class:`ManifestRead`)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _missing(path) from None
    except OSError:
        data = None  # read_json names the problem
    manifest = read_json(path, data)
    problem = _problem(manifest)
    if problem:
        raise InputError(path, None, f"{problem}; restore the file from git")
    return ManifestRead(path, data or b"", manifest)


def _missing(path: Path) -> InputError:
    return InputError(
        path,
        None,
        "no holdouts manifest here; seal a suite with "
        f"`flightdeck knowledge seal SUITE --holdouts {path.parent}` first",
    )


# --- the file's shape: msgspec Structs are the rule, the messages name the entry -----------
# Entries may carry fields beyond these (history events grow with the scanner); the fields
# named here must have these types.


class _Evidence(msgspec.Struct, frozen=True):
    canary: str
    question_id: str
    file: str
    line: int
    count: int


class _Suite(msgspec.Struct, frozen=True):
    manifest_sha256: Sha256
    status: Literal["sealed", "void"]
    evidence: _Evidence | None = None


class _Canary(msgspec.Struct, frozen=True):
    suite: str
    question_id: str


class _ScanOfSuite(msgspec.Struct, frozen=True):
    files: int
    bytes: int
    hits: int


class _Event(msgspec.Struct, frozen=True):
    event: str
    at: str
    suite: str | None = None
    suites: dict[str, _ScanOfSuite] = {}
    paths: list[str] = []
    by: str | None = None
    why: str | None = None


class _File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    format: Literal[1]
    canaries: dict[Canary, _Canary]
    suites: dict[str, _Suite]
    history: list[_Event]


def _problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a loaded manifest, or None: its Struct first, then the rules
    between entries (a void suite's evidence, each canary's suite)."""
    try:
        checked = msgspec.convert(manifest, _File)
    except msgspec.ValidationError:
        return _where(manifest)
    for name, entry in checked.suites.items():
        if entry.status == "void" and entry.evidence is None:
            return f"suites.{name} is void but its evidence is incomplete"
    for canary, owner in checked.canaries.items():
        if owner.suite not in checked.suites:
            return f"canaries.{canary} names suite {owner.suite!r}, which is not in suites"
    return None


def _where(manifest: dict[str, Any]) -> str:
    """Which entry msgspec refused, named in the order a person reads the file.

    msgspec says where each part is refused (:func:`flightdeck.suite.problems.problems`,
    against the field's type in the Structs above); the words here only name the entry:
    the format, an unknown field, the three sections' types, then each suite, canary and
    history event in turn. A history event is said in msgspec's own words.
    """
    types = {f.name: f.type for f in msgspec.structs.fields(_File)}
    found = {  # strict JSON holds no lone surrogate, so every problem is a refusal
        name: [p for p in problems(manifest.get(name), types[name]) if p.kind] for name in types
    }
    if found["format"]:
        return f"format must be {FORMAT}, got {manifest.get('format')!r}"
    extra = sorted(set(manifest) - set(types))
    if extra:
        return f"unknown field {extra[0]!r}"
    if any(not p.path for name in ("suites", "canaries") for p in found[name]):
        return "suites and canaries must be objects"
    if any(not p.path for p in found["history"]):
        return "history must be a list"
    for name in manifest["suites"]:
        refused = [p for p in found["suites"] if p.path[0] == name and not p.at_key]
        if refused:
            return f"suites.{name}" + _suite_words(min(refused, key=_suite_field_order))
    for p in found["canaries"]:
        if p.at_key:
            return f"canaries: {p.path[0]!r} is not a canary"
        return f"canaries.{p.path[0]} must be an object with a question_id and a suite"
    for p in found["history"]:
        number = p.path[0]
        return f"history[{number}]: {refusal(manifest['history'][number], _Event)}"
    raise InternalError("a rule of the holdouts manifest has no words")


_SUITE_FIELDS = [f.name for f in msgspec.structs.fields(_Suite)]


def _suite_field(p: Problem) -> str:
    """The field of a suite entry a problem is in (a missing one is named by msgspec)."""
    if len(p.path) > 1:
        return str(p.path[1])
    return p.detail.removeprefix("missing field ").strip("'") if p.kind == "shape" else ""


def _suite_field_order(p: Problem) -> int:
    field = _suite_field(p)
    return _SUITE_FIELDS.index(field) if field in _SUITE_FIELDS else -1


def _suite_words(p: Problem) -> str:
    field = _suite_field(p)
    if field == "manifest_sha256":
        return ".manifest_sha256 must be 64 hex digits"
    if field == "status":
        status = p.value if len(p.path) > 1 else None
        return f".status must be sealed or void, got {status!r}"
    if field == "evidence":
        return " is void but its evidence is incomplete"
    return " must be an object"
