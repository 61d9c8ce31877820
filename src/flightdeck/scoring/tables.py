"""The scoring tables as polars frames: questions, keys, answers and labels in, results out.

The spec's rules are joins and group-bys: a citation against its question's valid sources
(by uri without span, then by hash), against its raters' ``unsupported`` entries, a question's
votes, the breakdown by kind. Run as frames they cost native code per table instead of Python
per citation, which is what lets 100,000 questions x 3 arms score in seconds. The rules are
the spec's, in the spec's order, and `tests/unit/test_tables.py` checks them against a plain
Python reading of the spec (`tests/citations_reference.py`, test_tables.spec_rows).

The per-question frame (:func:`result_schema`, one row per question in suite order) is what
``flightdeck.load_results`` hands a notebook user, with an ``arm`` column in front.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final

from flightdeck.suite.citations import OPAQUE_RE, CitationClass
from flightdeck.suite.records import Answer, Key, Label, Question

if TYPE_CHECKING:
    import polars as pl

CLASSES = tuple(str(c) for c in CitationClass)  # fabricated, stale, unsupported, valid
# A uri that starts with a scheme and a colon is opaque: citations.OPAQUE_RE, anchored (it
# holds nothing Python's re and polars' regex read differently: ASCII classes, no escapes).
_OPAQUE = "^" + OPAQUE_RE.pattern
# The span: from the last "#" to the end, when what follows it starts with "L".
_SPAN = r"#L[^#]*$"


def result_schema() -> dict[str, Any]:
    """Column -> polars dtype of the per-question frame (see the README, "From Python")."""
    import polars as pl

    return {
        "id": pl.String,  # the question id
        "kind": pl.String,  # its kind (decision-why, blocker, ...)
        "answered": pl.Boolean,  # the arm answered it
        "raters": pl.List(pl.String),  # who rated the answer, in labels-file order
        "votes": pl.List(pl.Boolean),  # their `correct`, aligned with raters
        "correct": pl.Boolean,  # the majority of votes; a tie or no answer is incorrect
        "citations": pl.List(pl.String),  # the cited uris, in the answer's order
        "classes": pl.List(pl.Enum(list(CLASSES))),  # each citation's class, aligned
        "citation_valid": pl.Boolean,  # cited at least once and every citation valid
        **dict.fromkeys(CLASSES, pl.UInt32),  # how many citations of each class
    }


def strip_span(column: str) -> pl.Expr:
    """`suite.citations.strip_span` as an expression: ``sdlc/a.md#L3-L9`` -> ``sdlc/a.md``."""
    import polars as pl

    uri = pl.col(column)
    return pl.when(uri.str.contains(_OPAQUE)).then(uri).otherwise(uri.str.replace(_SPAN, ""))


@dataclass(frozen=True)
class SuiteTables:
    """A suite's questions (suite order) and valid sources, built once for every arm."""

    questions: pl.DataFrame  # order, id, kind
    valid: pl.DataFrame  # id, base (uri without span), sha256: what a citation matches


def suite_tables(questions: Sequence[Question], keys: Mapping[str, Key]) -> SuiteTables:
    """Frames of the questions and of the valid sources of the keys."""
    import polars as pl

    frame = pl.DataFrame(
        {"id": _field(questions, "id"), "kind": _field(questions, "kind")},
        schema={"id": pl.String, "kind": pl.String},
    ).with_row_index("order")
    keyed = list(keys.values())
    ids, sources = _flat(keyed, "valid_sources", _field(keyed, "id"))
    valid = (
        pl.LazyFrame(
            {"id": ids, "uri": _field(sources, "uri"), "sha256": _field(sources, "sha256")},
            schema={"id": pl.String, "uri": pl.String, "sha256": pl.String},
        )
        .select("id", strip_span("uri").alias("base"), "sha256")
        .unique()
        .collect(engine=ENGINE)
    )
    return SuiteTables(frame, valid)


def _field(records: Sequence[Any], name: str) -> list[Any]:
    """One field of every record, as a column (a pass in C: no tuple or dict per record)."""
    return list(map(attrgetter(name), records))


def _flat(records: Sequence[Any], name: str, ids: list[str]) -> tuple[list[str], list[Any]]:
    """(the id of the record each item belongs to, the items): a tuple field flattened;
    ``ids`` are the records' ids."""
    parts = _field(records, name)
    return _repeated(ids, parts), list(chain.from_iterable(parts))


def _repeated(values: Iterable[Any], parts: Sequence[Sequence[Any]]) -> list[Any]:
    """Each value once per item of its part: the column that goes beside the parts flattened."""
    return list(chain.from_iterable(map(repeat, values, map(len, parts))))


@dataclass(frozen=True)
class ArmFrames:
    """One arm's answers and labels, each field read once, for ``check_labels`` and
    ``score_arm`` both (`scoring/rules.py`)."""

    answered: pl.DataFrame  # id: one row per answer, in the answers' order
    citations: pl.DataFrame  # id, uri, sha256: one row per citation, in the answers' order
    labels: pl.DataFrame  # id, rater, correct: one row per label, in file order
    flags: pl.DataFrame  # label (its position in the labels), id, entry: one per entry
    label_ids: list[str]  # the labels' ids, in file order
    raters: list[str]  # the labels' raters, in file order


def arm_frames(answers: Iterable[Answer], labels: Sequence[Label]) -> ArmFrames:
    """The frames and columns of :class:`ArmFrames`, from validated answers and labels.

    Each field is read in one list comprehension (which measured quicker than ``map`` and
    ``attrgetter`` on these Structs); the id beside each citation and each entry is repeated
    by polars from the column it repeats, not built as a Python list of strings.
    """
    import polars as pl

    answers = list(answers)
    answered = pl.DataFrame({"id": [a.id for a in answers]}, schema={"id": pl.String})
    parts = [a.citations for a in answers]
    cited = list(chain.from_iterable(parts))
    citations = _each_repeated(answered, list(map(len, parts))).with_columns(
        pl.Series("uri", [c.uri for c in cited], dtype=pl.String),
        pl.Series("sha256", [c.sha256 for c in cited], dtype=pl.String),
    )
    label_ids = [label.id for label in labels]
    raters = [label.rater for label in labels]
    frame = pl.DataFrame(
        {"id": label_ids, "rater": raters, "correct": [label.correct for label in labels]},
        schema={"id": pl.String, "rater": pl.String, "correct": pl.Boolean},
    )
    where = [i for i, label in enumerate(labels) if label.unsupported]  # the few with entries
    entries = [labels[i].unsupported for i in where]
    flagging = pl.DataFrame(
        {"label": where, "id": frame["id"].gather(where)},
        schema={"label": pl.UInt32, "id": pl.String},
    )
    flags = _each_repeated(flagging, list(map(len, entries))).with_columns(
        pl.Series("entry", list(chain.from_iterable(entries)), dtype=pl.String)
    )
    return ArmFrames(answered, citations, frame, flags, label_ids, raters)


def _each_repeated(frame: pl.DataFrame, counts: list[int]) -> pl.DataFrame:
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
    answer's citations (or whose id has no answer), in file order: the entries
    :func:`_flag_matches` pairs with no citation (``suite.citations.first_unflagging``'s rule,
    for every entry at once)."""
    import polars as pl

    cites = frames.citations.lazy().with_row_index("_cite")
    flags = frames.flags.lazy().with_row_index("_entry")
    matches = _flag_matches(cites, flags, on=["id"])
    unflagging = flags.join(matches, on="_entry", how="anti").select(
        pl.col("label").unique().sort()
    )
    positions: list[int] = unflagging.collect(engine=ENGINE)["label"].to_list()
    return positions


def _classify(citations: pl.LazyFrame, valid: pl.LazyFrame, flags: pl.LazyFrame) -> pl.LazyFrame:
    """Each citation's class, in the spec's order; rows keep the citations' order (a plan).

    fabricated: its uri without span is none of the question's valid sources (also without
    span); stale: it is one, but with none of that source's hashes; unsupported: a rater of the
    answer lists it (an entry equal to the uri, or a spanless entry equal to the uri without its
    span); valid: none of these.
    """
    import polars as pl

    cites = _flagged(citations.with_columns(strip_span("uri").alias("base")), flags, on=["id"])
    hashes = valid.group_by("id", "base").agg(pl.col("sha256").alias("hashes"))
    joined = cites.join(hashes, on=["id", "base"], how="left", maintain_order="left")
    cls = (
        pl.when(pl.col("hashes").is_null())
        .then(pl.lit("fabricated"))
        .when(~pl.col("hashes").list.contains(pl.col("sha256")))
        .then(pl.lit("stale"))
        .when(pl.col("flagged"))
        .then(pl.lit("unsupported"))
        .otherwise(pl.lit("valid"))
        .cast(pl.Enum(list(CLASSES)))
    )
    return joined.select("id", "uri", cls.alias("class"))


def flagged(cites: pl.DataFrame, flags: pl.DataFrame, *, on: list[str]) -> pl.DataFrame:
    """``cites`` (``on`` columns, uri) with ``flagged``: an entry of ``flags`` with the same
    ``on`` values equals the uri, or has no span and equals the uri without its span."""
    return _flagged(cites.lazy(), flags.lazy(), on=on).collect(engine=ENGINE)


def _flagged(cites: pl.LazyFrame, flags: pl.LazyFrame, *, on: list[str]) -> pl.LazyFrame:
    """:func:`flagged` as a plan: the citations :func:`_flag_matches` pairs with an entry."""
    import polars as pl

    cites = cites.with_row_index("_cite")
    matches = _flag_matches(cites, flags.with_row_index("_entry"), on=on)
    hit = matches.select("_cite").unique().with_columns(pl.lit(True).alias("flagged"))
    return (
        cites.join(hit, on="_cite", how="left", maintain_order="left")
        .with_columns(pl.col("flagged").fill_null(False))
        .drop("_cite")
    )


def _flag_matches(cites: pl.LazyFrame, flags: pl.LazyFrame, *, on: list[str]) -> pl.LazyFrame:
    """The (``_entry``, ``_cite``) row pairs where an entry of ``flags`` flags a citation of
    ``cites`` with the same ``on`` values, as a plan; a pair may come twice.

    The rule's one statement over frames (``suite.citations.is_flagged_unsupported`` reads it
    per record): an entry flags a citation when equal to its uri, or spanless and equal to its
    uri without the span. ``cites`` carry a ``_cite`` row index, ``flags`` an ``_entry`` one.
    """
    import polars as pl

    entries = flags.select(*on, "entry", "_entry")
    as_written = entries.join(
        cites.select(*on, pl.col("uri").alias("entry"), "_cite"), on=[*on, "entry"]
    )
    spanless = entries.filter(strip_span("entry") == pl.col("entry"))
    # Spans are stripped only from the citations that share their ``on`` values with a
    # spanless entry (in scoring: of the answers a rater flagged by file).
    files = cites.join(spanless.select(on).unique(), on=on, how="semi").select(
        *on, strip_span("uri").alias("entry"), "_cite"
    )
    by_file = spanless.join(files, on=[*on, "entry"])
    return pl.concat([as_written.select("_entry", "_cite"), by_file.select("_entry", "_cite")])


# The plans here are joins and group-bys of frames already in memory: the in-memory engine
# runs them with half the work of the streaming one (polars' default for a lazy plan).
ENGINE: Final = "in-memory"


def scored_frame(tables: SuiteTables, frames: ArmFrames) -> pl.DataFrame:
    """One row per question in suite order, with the columns of :func:`result_schema`: the
    citations classed (:func:`_classify`) and the votes counted, as one plan."""
    classified = _classify(frames.citations.lazy(), tables.valid.lazy(), frames.flags.lazy())
    answered, labels = frames.answered.lazy(), frames.labels.lazy()
    plan = _results(tables.questions.lazy(), answered, labels, classified)
    return plan.collect(engine=ENGINE)


def _results(
    questions: pl.LazyFrame, answered: pl.LazyFrame, labels: pl.LazyFrame, classified: pl.LazyFrame
) -> pl.LazyFrame:
    """:func:`scored_frame`'s rows from the citations already classed, as a plan."""
    import polars as pl

    # Groups come out in any order (the joins below put them in suite order: each keeps the
    # questions' order); within a group the rows keep the file's order, so raters, votes and
    # citations stay aligned and ordered.
    votes = labels.group_by("id").agg(
        pl.col("rater").alias("raters"),
        pl.col("correct").alias("votes"),
        pl.col("correct").sum().alias("yes"),
        pl.len().alias("rated"),
    )
    counts = [(pl.col("class") == cls).sum().cast(pl.UInt32).alias(cls) for cls in CLASSES]
    cited = classified.group_by("id").agg(
        pl.col("uri").alias("citations"), pl.col("class").alias("classes"), *counts
    )
    schema = result_schema()
    frame = (
        questions.join(
            answered.with_columns(pl.lit(True).alias("answered")),
            on="id",
            how="left",
            maintain_order="left",
        )
        .join(votes, on="id", how="left", maintain_order="left")
        .join(cited, on="id", how="left", maintain_order="left")
    )
    answered_col = pl.col("answered").fill_null(False)
    # A tie counts as incorrect: the majority needs more yes than no.
    majority = (2 * pl.col("yes").fill_null(0) > pl.col("rated").fill_null(0)) & answered_col
    n_cited = sum((pl.col(cls).fill_null(0) for cls in CLASSES), pl.lit(0, pl.UInt32))
    all_valid = (n_cited > 0) & (pl.col("valid").fill_null(0) == n_cited) & answered_col
    return frame.select(
        "id",
        "kind",
        answered_col.alias("answered"),
        # An unanswered question has no votes, even from labels that score would refuse.
        *(
            pl.when(answered_col)
            .then(pl.col(c).fill_null(pl.lit([], schema[c])))
            .otherwise(pl.lit([], schema[c]))
            .alias(c)
            for c in ("raters", "votes")
        ),
        majority.alias("correct"),
        *(pl.col(c).fill_null(pl.lit([], schema[c])) for c in ("citations", "classes")),
        all_valid.alias("citation_valid"),
        *(pl.col(cls).fill_null(0) for cls in CLASSES),
    ).cast(schema)  # type: ignore[arg-type]


def by_kind(results: pl.DataFrame) -> dict[str, dict[str, int]]:
    """kind -> {n, correct, citation_valid}, kinds in order of first appearance."""
    import polars as pl

    table = results.group_by("kind", maintain_order=True).agg(
        pl.len().alias("n"), pl.col("correct").sum(), pl.col("citation_valid").sum()
    )
    return {
        row["kind"]: {k: int(row[k]) for k in ("n", "correct", "citation_valid")}
        for row in table.iter_rows(named=True)
    }


def class_counts(results: pl.DataFrame) -> dict[str, int]:
    """Citations of each class over all answers, in the spec's order."""
    totals = results.select(CLASSES).sum().row(0)
    return {cls: int(total) for cls, total in zip(CLASSES, totals, strict=True)}


@dataclass(frozen=True)
class FirstTwoRaters:
    """The raters of an arm in order of first appearance, and what Cohen's kappa needs of the
    first two: over the ids both labelled, how many, how many they agree on, and how many
    each said correct (all 0 with fewer than two raters)."""

    raters: tuple[str, ...]
    n: int
    agree: int
    yes_a: int
    yes_b: int


def first_two_raters(labels: pl.DataFrame) -> FirstTwoRaters:
    """The raters in order of first appearance, with the counts of the first two (kappa's)."""
    import polars as pl

    raters = tuple(labels["rater"].unique(maintain_order=True).to_list())
    if len(raters) < 2:
        return FirstTwoRaters(raters, 0, 0, 0, 0)
    rated = labels.lazy()
    a = rated.filter(pl.col("rater") == raters[0]).select("id", pl.col("correct").alias("a"))
    b = rated.filter(pl.col("rater") == raters[1]).select("id", pl.col("correct").alias("b"))
    both = a.join(b, on="id", how="inner")
    row = (
        both.select(
            pl.len().alias("n"),
            (pl.col("a") == pl.col("b")).sum().alias("agree"),
            pl.col("a").sum().alias("yes_a"),
            pl.col("b").sum().alias("yes_b"),
        )
        .collect(engine=ENGINE)
        .row(0)
    )
    n, agree, yes_a, yes_b = (int(x or 0) for x in row)
    return FirstTwoRaters(raters, n, agree, yes_a, yes_b)
