"""The public API's entries from Python: ``flightdeck.score`` and ``flightdeck.load_results``.

Each goes through the facade as a command does: it opens the project through
:meth:`flightdeck.project.Project.open` (params.yaml here, else the nearest one above the
suite folder); ``score`` is then ``knowledge score``'s verb, and ``load_results`` reads the
per-question results, for a notebook, where the suite's paths say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.project import Project
from flightdeck.project.modes import DryRuns

if TYPE_CHECKING:
    import polars as pl

    from flightdeck.params import Params
    from flightdeck.scoring.outcomes import ScoreResult


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


def score(
    suite: Path | str,
    arms: Sequence[str] | None = None,
    *,
    params: Params | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    metrics: Path | None = None,
    report: Path | None = None,
    results_dir: Path | None = None,
    on_progress: Callable[[str], None] | None = None,
    dry_runs: DryRuns = DryRuns.REFUSE,
) -> ScoreResult:
    """``flightdeck.score``: the whole of ``knowledge score`` from Python, through the facade.

    ``params`` default to the project's params.yaml, found as the CLI finds it (./params.yaml,
    else the nearest one above the suite folder), and ``arms`` to its ``arms``. Outputs default
    to ``metrics/<suite>.json``, ``reports/<suite>.md`` (with its ``.svg``) and
    ``results/<suite>/`` under the project root. The ledger (``scores.jsonl``) gets each arm's
    hashes unless already there. The result says what was written (``written``) and which arms
    were recorded (``recorded``).
    """
    folder = Path(suite)
    project = Project(params) if params is not None else Project.open(near=folder)
    return project.suite(folder).score(
        arms=arms,
        baseline=baseline,
        candidate=candidate,
        metrics=metrics,
        report=report,
        results_dir=results_dir,
        dry_runs=dry_runs,
        on_progress=on_progress,
    )
