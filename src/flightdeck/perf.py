"""Performance switches shared by the hot paths (100,000-question suites)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cycle collector while building many small, acyclic records.

    With it on, building 100,000 records costs 3-4x: each generation-0 pass walks the
    growing heap. Our records hold no cycles, so nothing is lost by pausing it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
