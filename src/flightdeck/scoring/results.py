"""Per-question results back as one polars frame, for a notebook: `flightdeck.load_results`.

`knowledge score` writes ``results/<suite>/<arm>.jsonl``; reading those files (rather than
scoring again) gives exactly what the report and metrics were computed from, needs no labels
or sealed keys at hand, and takes a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.errors import InputError
from flightdeck.jsonl import read_jsonl
from flightdeck.scoring.tables import CLASSES

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
    import polars as pl

    from flightdeck.params import load_params
    from flightdeck.scoring.tables import frame_from_rows, result_schema

    suite = Path(suite)
    name = suite.resolve().name
    folder = (
        Path(results) if results is not None else load_params(near=suite).root / "results" / name
    )
    if not folder.is_dir():
        raise InputError(
            folder, None, f"no results for suite {name!r}; run `flightdeck knowledge score` first"
        )
    found = sorted(p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl"))
    for arm in arms or ():
        if arm not in found:
            raise InputError(
                folder / f"{arm}.jsonl",
                None,
                f"no results for arm {arm!r}; arms scored: {', '.join(found) or 'none'}",
            )
    frames = [
        frame_from_rows(_rows(folder / f"{arm}.jsonl")).select(pl.lit(arm).alias("arm"), pl.all())
        for arm in arms or found
    ]
    if not frames:
        return pl.DataFrame(schema={"arm": pl.String, **result_schema()})
    return pl.concat(frames)


def _rows(path: Path) -> list[dict[str, object]]:
    rows = []
    for line, record in read_jsonl(path):
        if not _is_result(record):
            raise InputError(
                path,
                line,
                "not a per-question result; rerun `flightdeck knowledge score` to rewrite it",
            )
        rows.append(record)
    return rows


def _is_result(record: dict[str, object]) -> bool:
    votes, citations = record.get("votes"), record.get("citations")
    return (
        isinstance(record.get("id"), str)
        and isinstance(record.get("kind"), str)
        and all(isinstance(record.get(k), bool) for k in ("answered", "correct", "citation_valid"))
        and isinstance(votes, dict)
        and all(isinstance(v, bool) for v in votes.values())
        and isinstance(citations, list)
        and all(
            isinstance(c, dict) and isinstance(c.get("uri"), str) and c.get("class") in CLASSES
            for c in citations
        )
    )
