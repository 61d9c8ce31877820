"""flightdeck: seal a gold set, let arms answer it, score them with honest statistics.

The public Python API is small and loads lazily, so ``flightdeck --help`` stays fast (and
never imports polars):

    import flightdeck
    result = flightdeck.score("suites/knowledge-demo-v1")  # the arms params.yaml names
    frame = flightdeck.load_results("suites/knowledge-demo-v1")

``score`` does what ``flightdeck knowledge score`` does (scores, writes metrics, results
and report, records the ledger) and returns the
:class:`~flightdeck.scoring.outcomes.ScoreResult`; ``load_results`` reads the per-question
results back as one polars frame.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from flightdeck.version import __version__ as __version__  # re-exported

# name -> the module that defines it; imported on first use (PEP 562).
_LAZY = {
    "DryRuns": "flightdeck.project.modes",  # score(..., dry_runs=DryRuns.ALLOW)
    "score": "flightdeck.project.results",  # through the facade: Project.open().suite().score()
    "load_results": "flightdeck.project.results",  # through the facade: Project.open()
}

__all__ = ["DryRuns", "__version__", "load_results", "score"]  # the names in _LAZY

if TYPE_CHECKING:
    from flightdeck.project.modes import DryRuns
    from flightdeck.project.results import load_results, score


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'flightdeck' has no attribute {name!r}")
