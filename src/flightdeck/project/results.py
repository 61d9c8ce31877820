"""``flightdeck.load_results``: the per-question results of a suite, for a notebook.

An entry of the public API like ``flightdeck.score``, so it finds the results as the
commands do: it opens the project through :meth:`flightdeck.project.Project.open` (params.yaml
here, else the nearest one above the suite folder) and reads where its suite's paths say.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.project import Project

if TYPE_CHECKING:
    import polars as pl


def load_results(
    suite: str | Path,
    *,
    results: str | Path | None = None,
    arms: Sequence[str] | None = None,
) -> pl.DataFrame:
    """The per-question results of every scored arm of ``suite``, one row per (arm, question).

    Columns: ``arm`` then those of `flightdeck.scoring.tables.result_schema`: ``id``, ``kind``,
    ``answered``, ``raters`` and ``votes`` (aligned lists), ``correct`` (the majority; a tie or
    a missing answer is incorrect), ``citations`` and ``classes`` (aligned lists: each cited uri
    and its class), ``citation_valid``, and the counts ``fabricated``, ``stale``,
    ``unsupported``, ``valid``. Rows are in arm order, then suite order.

    Args:
        suite: The suite folder (``suites/knowledge-demo-v1``).
        results: The folder `knowledge score` wrote them to; by default, as the command's
            ``--results`` default, ``results/<suite>/`` beside the project's params.yaml.
        arms: Which arms, in this order; by default every arm with a results file, sorted.

    Raises:
        InputError: no results for the suite or an arm (score it first), or a results file
            that is not one `knowledge score` wrote.
    """
    from flightdeck.scoring.results import read_results

    folder = Path(suite)
    name = folder.resolve().name
    if results is not None:
        return read_results(Path(results), name, arms)
    # where `knowledge score` writes them by default, the project opened as every entry does
    return read_results(Project.open(near=folder).suite(folder).folder.results_dir, name, arms)
