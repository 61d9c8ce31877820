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

The file decodes straight into :class:`~flightdeck.holdouts.manifest_format.Manifest`, a
frozen msgspec Struct (:mod:`flightdeck.holdouts.manifest_format` holds the Structs, their
rule and the words for a bad file). The registry (:mod:`flightdeck.holdouts.registry`), the
leak scan (:mod:`flightdeck.holdouts.leaks`) and custody read and change it only through
here, so the file has one reader that checks it and one writer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from flightdeck.errors import InputError
from flightdeck.files.jsonl import append_jsonl, atomic_write, locked_folder, read_json, read_jsonl
from flightdeck.files.strict_json import line_of_place
from flightdeck.holdouts.manifest_format import (
    EMPTY,
    Event,
    Manifest,
    decode,
    encode_line,
    event_line,
    from_value,
    problem,
    suite_line,
)
from flightdeck.project.paths import holdouts_manifest, holdouts_scans

manifest_path = holdouts_manifest  # the paths are spelled in flightdeck.project only
scans_path = holdouts_scans


def append_scan(holdouts_dir: Path, event: Event) -> None:
    """Record one scan in ``DIR/scans.jsonl`` (call under :func:`locked_manifest`)."""
    append_jsonl(scans_path(holdouts_dir), msgspec.to_builtins(event))


def scan_events(holdouts_dir: Path, manifest: Manifest) -> list[Event]:
    """Every recorded scan, oldest first: the manifest's own (before scans.jsonl), then the file's.

    A line of scans.jsonl that is not a scan record is an :class:`InputError` naming it.
    """
    events = [e for e in manifest.history if e.event == "scan"]
    path = scans_path(holdouts_dir)
    if not path.exists():
        return events
    for number, line in read_jsonl(path):
        try:
            event = msgspec.convert(line, Event)
        except msgspec.ValidationError:
            event = None
        if event is None or event.event != "scan" or event.suites is None:
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


def write_manifest(path: Path, manifest: Manifest) -> None:
    """Key-sorted JSON with one line per canary, suite and event: small diffs, fast to write.

    Events and suite entries keep the fields this version does not know (see
    :class:`~flightdeck.holdouts.manifest_format.Manifest`). (``json.dumps`` with ``indent``
    falls back to the pure-Python encoder: 10,000 canaries take a tenth of a second that way.)
    """
    canaries = [
        f"    {encode_line(k)}: "
        + encode_line({"question_id": owner.question_id, "suite": owner.suite})
        for k, owner in sorted(manifest.canaries.items())
    ]
    suites = [
        f"    {encode_line(name)}: {suite_line(name, manifest)}" for name in sorted(manifest.suites)
    ]
    events = [f"    {event_line(n, manifest)}" for n in range(len(manifest.history))]
    atomic_write(
        path,
        "{\n"
        f'  "canaries": {_block(canaries, "{", "}")},\n'
        f'  "format": {manifest.format},\n'
        f'  "history": {_block(events, "[", "]")},\n'
        f'  "suites": {_block(suites, "{", "}")}\n'
        "}\n",
    )


def _block(lines: list[str], opening: str, closing: str) -> str:
    return opening + "\n" + ",\n".join(lines) + "\n  " + closing if lines else opening + closing


@contextlib.contextmanager
def locked_manifest(holdouts_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder while reading, changing and writing the manifest.

    A missing holdouts folder is refused, saying how to make one; registering a suite, which
    makes it, holds :func:`locked_manifest_or_new` instead.
    """
    if not holdouts_dir.is_dir():
        raise _missing(manifest_path(holdouts_dir))
    with locked_folder(holdouts_dir):
        yield


@contextlib.contextmanager
def locked_manifest_or_new(holdouts_dir: Path) -> Iterator[None]:
    """:func:`locked_manifest` for a writer that creates the folder and manifest if missing."""
    with locked_folder(holdouts_dir):
        yield


def load_manifest(path: Path) -> Manifest:
    """Read and check the manifest; a missing one is refused, saying how to make one."""
    if not path.exists():
        raise _missing(path)
    return read_manifest(path).manifest


def load_manifest_or_empty(path: Path) -> Manifest:
    """:func:`load_manifest`, where a missing manifest is an empty one (registering the first
    suite creates it)."""
    if not path.exists():
        return EMPTY
    return read_manifest(path).manifest


@dataclass(frozen=True, slots=True)
class ManifestRead:
    """A checked manifest and the bytes it was read from.

    A writer holding :func:`locked_manifest` may reuse ``manifest`` instead of reading and
    checking the file again when :meth:`unchanged` (the file still holds exactly ``data``;
    every write replaces the whole file).
    """

    path: Path
    data: bytes
    manifest: Manifest

    def unchanged(self) -> bool:
        try:
            return self.path.read_bytes() == self.data
        except OSError:
            return False


def read_manifest(path: Path) -> ManifestRead:
    """Read and check an existing manifest, keeping its bytes (see :class:`ManifestRead`).

    The bytes decode straight into the Struct; only a file it refuses (or that may hide a
    repeated key) is read again by the strict reader, to say what is wrong and where.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _missing(path) from None
    except OSError:
        data = None  # read_json names the problem
    manifest = decode(data) if data is not None else None
    if manifest is None:
        value = read_json(path, data)
        wrong = problem(value)
        if wrong:
            line = line_of_place(data, wrong.place) if data is not None else None
            raise InputError(path, line, f"{wrong.message}; restore the file from git")
        manifest = from_value(value)
    return ManifestRead(path, data or b"", manifest)


def _missing(path: Path) -> InputError:
    return InputError(
        path,
        None,
        "no holdouts manifest here; seal a suite with "
        f"`flightdeck knowledge seal SUITE --holdouts {path.parent}` first",
    )
