"""One arm's answers and labels as columns and frames, gathered once for the label checks
and the scoring.

``check_labels`` (`scoring/rules.py`) and ``score_arm`` read the same fields of the same
records: the labels' ids and raters, their ``unsupported`` entries, the answers' citations.
Each field is read here in one pass over the records (a list comprehension, which measured
quicker than ``map(attrgetter(...))`` on these Structs), and a column that repeats a value per
item (the id beside each citation, beside each entry) is made by polars from the column it
repeats, not by a Python list of strings. The plans that score the frames are in
`scoring/tables.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

from flightdeck.scoring.tables import ENGINE, strip_span
from flightdeck.suite.records import Answer, Label

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class ArmFrames:
    """An arm's answers and labels, each field read once (see the module's docstring)."""

    answered: pl.DataFrame  # id: one row per answer, in the answers' order
    citations: pl.DataFrame  # id, uri, sha256: one row per citation, in the answers' order
    labels: pl.DataFrame  # id, rater, correct: one row per label, in file order
    flags: pl.DataFrame  # label (its position in the labels), id, entry: one per entry
    label_ids: list[str]  # the labels' ids, in file order
    raters: list[str]  # the labels' raters, in file order


def arm_frames(answers: Iterable[Answer], labels: Sequence[Label]) -> ArmFrames:
    """The frames and columns of :class:`ArmFrames`, from validated answers and labels."""
    import polars as pl

    answers = list(answers)
    answered = pl.DataFrame({"id": [a.id for a in answers]}, schema={"id": pl.String})
    parts = [a.citations for a in answers]
    cited = list(chain.from_iterable(parts))
    citations = _repeated(answered, list(map(len, parts))).with_columns(
        pl.Series("uri", [c.uri for c in cited], dtype=pl.String),
        pl.Series("sha256", [c.sha256 for c in cited], dtype=pl.String),
    )
    label_ids = [label.id for label in labels]
    raters = [label.rater for label in labels]
    frame = pl.DataFrame(
        {"id": label_ids, "rater": raters, "correct": [label.correct for label in labels]},
        schema={"id": pl.String, "rater": pl.String, "correct": pl.Boolean},
    )
    # The few labels with entries: their positions, then their entries in order.
    where = [i for i, label in enumerate(labels) if label.unsupported]
    entries = [labels[i].unsupported for i in where]
    flagging = pl.DataFrame(
        {"label": where, "id": frame["id"].gather(where)},
        schema={"label": pl.UInt32, "id": pl.String},
    )
    flags = _repeated(flagging, list(map(len, entries))).with_columns(
        pl.Series("entry", list(chain.from_iterable(entries)), dtype=pl.String)
    )
    return ArmFrames(answered, citations, frame, flags, label_ids, raters)


def _repeated(frame: pl.DataFrame, counts: list[int]) -> pl.DataFrame:
    """Each row of ``frame`` ``counts`` times, in order (a row of count 0 is left out)."""
    import polars as pl

    names = frame.columns
    return (
        frame.with_columns(pl.Series("_n", counts, dtype=pl.UInt32))
        .filter(pl.col("_n") > 0)
        .select(pl.col(name).repeat_by("_n") for name in names)
        .explode(names)
    )


def unflagging_labels(frames: ArmFrames) -> list[int]:
    """The positions of the labels with an ``unsupported`` entry that flags none of their
    answer's citations (or whose id has no answer), in file order.

    The rule of ``suite.citations.first_unflagging``, for every entry at once: an entry flags
    a citation when equal to its uri, or spanless and equal to its uri without the span.
    """
    import polars as pl

    cites = frames.citations.lazy()
    missed = frames.flags.lazy().join(
        cites.select("id", pl.col("uri").alias("entry")), on=["id", "entry"], how="anti"
    )
    # The files cited, of the answers with an entry not cited as written.
    files = (
        cites.join(missed.select("id").unique(), on="id", how="semi")
        .select("id", strip_span("uri").alias("entry"), pl.lit(True).alias("_file"))
        .unique()
    )
    spanless = strip_span("entry") == pl.col("entry")
    unflagging = (
        missed.join(files, on=["id", "entry"], how="left")
        .filter(~spanless | pl.col("_file").is_null())
        .select(pl.col("label").unique().sort())
    )
    positions: list[int] = unflagging.collect(engine=ENGINE)["label"].to_list()
    return positions
