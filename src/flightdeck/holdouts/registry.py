"""The holdouts registry: which canary belongs to which sealed suite, and which suites are void.

A sealed suite's canaries are registered in the holdouts manifest
(:mod:`flightdeck.holdouts.manifest`); a scan that finds one voids its suite
(:mod:`flightdeck.holdouts.leaks`). Evidence of a leak (``evidence``, as
:mod:`flightdeck.holdouts.custody` reports it) is the first hit and the count:
``{"canary", "question_id", "file", "line", "count", "at"}``. A void suite stays void until
:func:`unvoid` records who lifted it and why; the evidence moves to the history.

:func:`suite_state` says whether a suite is registered at all: a suite sealed without
``--holdouts`` has no canaries here, and a leak of its keys would go unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from flightdeck.errors import InputError
from flightdeck.files.clock import utc_now
from flightdeck.holdouts.manifest import (
    load_manifest,
    load_manifest_or_empty,
    locked_manifest,
    locked_manifest_or_new,
    manifest_path,
    require_folder,
    write_manifest,
)
from flightdeck.holdouts.manifest_format import CanaryOwner, Event, Evidence, SuiteEntry
from flightdeck.suite.records import CANARY_RE, SHA256_RE

SuiteState = Literal["no-manifest", "unregistered", "sealed", "void"]


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
    with locked_manifest_or_new(holdouts_dir):
        manifest = load_manifest_or_empty(path)
        known = manifest.suites.get(suite)
        if known is not None and known.manifest_sha256 != manifest_sha256.lower():
            raise InputError(
                path,
                None,
                f"suite {suite} is already registered with another manifest; a changed suite "
                "is a new suite version (…-v2)",
            )
        added: dict[str, CanaryOwner] = {}
        for question_id, canary in canaries.items():
            owner = manifest.canaries.get(canary)
            wanted = CanaryOwner(suite=suite, question_id=question_id)
            if owner is not None and owner != wanted:
                raise InputError(
                    path,
                    None,
                    f"canary {canary} of {suite}/{question_id} is already registered for "
                    f"{owner.suite}/{owner.question_id}; re-seal with fresh canaries",
                )
            if owner is None:
                added[canary] = wanted
        if known is not None and not added:
            return
        now = utc_now()
        suites = manifest.suites
        if known is None:
            entry = SuiteEntry(
                manifest_sha256=manifest_sha256.lower(), status="sealed", registered_at=now
            )
            suites = {**suites, suite: entry}
        event = Event(event="registered", suite=suite, at=now, canaries=len(canaries))
        changed = msgspec.structs.replace(
            manifest,
            canaries={**manifest.canaries, **added},
            suites=suites,
            history=(*manifest.history, event),
        )
        write_manifest(path, changed)


def suite_state(holdouts_dir: Path, suite: str) -> SuiteState:
    """Where ``suite`` stands in the holdouts registry at ``holdouts_dir``.

    ``"no-manifest"``: there is no ``DIR/manifest.json``, so nothing is registered there;
    ``"unregistered"``: the manifest does not know the suite (sealed without ``--holdouts``,
    or into another folder), so a leak of its keys would go unnoticed; ``"sealed"``:
    registered and no canary of it found; ``"void"``: a scan found one of its canaries
    (:mod:`flightdeck.holdouts.custody` says where). A malformed manifest is an :class:`InputError`.
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    if not path.exists():
        return "no-manifest"
    entry = load_manifest(path).suites.get(suite)
    if entry is None:
        return "unregistered"
    return entry.status


def unvoid(holdouts_dir: Path, suite: str, *, by: str, why: str) -> Evidence:
    """Lift a suite's void status deliberately; the history keeps who, why and the evidence.

    Returns the evidence that had voided the suite. A suite that is not registered or not
    void, or an empty ``by`` or ``why``, is an :class:`InputError`.
    """
    require_folder(holdouts_dir)
    path = manifest_path(holdouts_dir)
    if not by.strip() or not why.strip():
        raise InputError(path, None, "unvoiding needs --by WHO and --why TEXT, both non-empty")
    with locked_manifest(holdouts_dir):
        manifest = load_manifest(path)
        entry = manifest.suites.get(suite)
        if entry is None:
            known = ", ".join(sorted(manifest.suites)) or "none"
            raise InputError(path, None, f"suite {suite} is not registered (registered: {known})")
        if entry.status != "void" or entry.evidence is None:
            raise InputError(path, None, f"suite {suite} is not void; nothing to unvoid")
        evidence = entry.evidence
        lifted = msgspec.structs.replace(entry, status="sealed", evidence=None)
        event = Event(
            event="unvoid",
            suite=suite,
            at=utc_now(),
            by=by.strip(),
            why=why.strip(),
            evidence=evidence,
        )
        changed = msgspec.structs.replace(
            manifest,
            suites={**manifest.suites, suite: lifted},
            history=(*manifest.history, event),
        )
        write_manifest(path, changed)
    return evidence
