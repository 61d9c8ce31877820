"""flightdeck: seal a gold set, let arms answer it, score them with honest statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "load_results"]

if TYPE_CHECKING:
    from flightdeck.scoring.results import load_results


def __getattr__(name: str) -> Any:
    """Load the public API on first use, so ``flightdeck --help`` never imports polars."""
    if name == "load_results":
        from flightdeck.scoring.results import load_results

        return load_results
    raise AttributeError(f"module 'flightdeck' has no attribute {name!r}")
