"""The runner's canary check: each trial's trace is scanned as it is collected.

A trial's trace holds everything the harness gave back: its stdout, its stderr, its result
file and its ``FLIGHTDECK_TRACE`` log (and the result it printed, if it printed it). The
runner scans that one file with the holdouts scanner
(:func:`flightdeck.holdouts.leaks.canary_scan`, so whatever encodings the scanner sees
through, this check does too) against every registry it may belong to: the configured
holdouts folder and the project's default one (a misspelt ``holdouts:`` must not switch the
check off). A hit fails the trial, and :func:`flightdeck.holdouts.leaks.mark_void` records
it in the registry's history and voids the suite, with the trace's file and line.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.holdouts.leaks import canary_scan, mark_void
from flightdeck.holdouts.manifest import load_manifest, manifest_path


class LeakCheck:
    """The registries a run's traces are scanned against, read once to fail early."""

    def __init__(self, registries: Iterable[Path]) -> None:
        self.registries: list[Path] = []
        seen: set[Path] = set()
        for folder in registries:
            real = folder.resolve()
            if real in seen or not manifest_path(folder).is_file():
                continue
            seen.add(real)
            load_manifest(manifest_path(folder))  # a broken one: exit 2 now
            self.registries.append(folder)
        self._lock = threading.Lock()  # one trial's scan and void at a time

    def describe(self) -> str:
        """What the check reads against, for the arm's meta."""
        if not self.registries:
            return "no holdouts registry: traces not checked for canaries"
        shown = ", ".join(str(manifest_path(r)) for r in self.registries)
        return f"every trial's trace, against {shown}"

    def check(self, trace: Path, shown: Path) -> str | None:
        """Scan one trace; on a hit void the suite and return the trial's failure reason."""
        if not self.registries or not trace.is_file():
            return None
        with self._lock:
            for folder in self.registries:
                try:
                    result = canary_scan(folder, [trace], jobs=1)
                except InputError as exc:
                    return f"could not scan its trace for canaries: {exc}"
                if result.clean:
                    continue
                mark_void(folder, result)
                hit = result.hits[0]
                return (
                    f"its output holds a canary of suite {hit.suite!r} (question "
                    f"{hit.question_id!r}) at {shown}:{hit.line}; the suite is now void"
                )
        return None
