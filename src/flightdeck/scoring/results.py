"""The per-question results files: written from the frame, read back as one for a notebook.

`knowledge score` writes ``results/<suite>/<arm>.jsonl`` (:func:`encode_results`);
`flightdeck.load_results` reads them back (:func:`read_results`, through the facade).
Reading those files (rather than scoring again) gives exactly what the report and metrics
were computed from, needs no labels or sealed keys at hand, and takes a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_jsonl
from flightdeck.scoring.tables import CLASSES, ENGINE, result_schema

if TYPE_CHECKING:
    import polars as pl


def read_results(folder: Path, suite: str, arms: Sequence[str] | None = None) -> pl.DataFrame:
    """The per-question results in ``folder`` of every scored arm of ``suite`` (its name).

    What `flightdeck.load_results` (:mod:`flightdeck.project.results`) returns, once the
    project has said where the results are; ``arms`` as it takes them.
    """
    import polars as pl

    from flightdeck.project.paths import results_arms, results_file

    if not folder.is_dir():
        raise InputError(
            folder, None, f"no results for suite {suite!r}; run `flightdeck knowledge score` first"
        )
    found = results_arms(folder)
    for arm in arms or ():
        if arm not in found:
            raise InputError(
                results_file(folder, arm),
                None,
                f"no results for arm {arm!r}; arms scored: {', '.join(found) or 'none'}",
            )
    frames = [
        frame_from_rows(_rows(results_file(folder, arm))).select(pl.lit(arm).alias("arm"), pl.all())
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


def result_rows(results: pl.DataFrame) -> Iterable[dict[str, Any]]:
    """The results file's records (`results/<suite>/<arm>.jsonl`), one per question."""
    import polars as pl

    names = ("id", "kind", "answered", "raters", "votes", "correct", "citations")
    columns = [results[c].to_list() for c in names]
    # Enum lists leave polars slowly; as strings they are ten times quicker.
    columns.append(results["classes"].cast(pl.List(pl.String)).to_list())
    columns.append(results["citation_valid"].to_list())
    for qid, kind, answered, raters, votes, correct, uris, classes, valid in zip(
        *columns, strict=True
    ):
        yield {
            "id": qid,
            "kind": kind,
            "answered": answered,
            "votes": dict(zip(raters, votes, strict=True)),
            "majority": correct,
            "correct": correct,
            "citations": [
                {"uri": uri, "class": cls} for uri, cls in zip(uris, classes, strict=True)
            ],
            "citation_valid": valid,
        }


def frame_from_rows(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """The per-question frame back from a results file's records (what load_results reads)."""
    import polars as pl

    schema = result_schema()
    columns: dict[str, list[Any]] = {c: [] for c in schema}
    for row in rows:
        votes = row["votes"]
        classes = [c["class"] for c in row["citations"]]
        columns["id"].append(row["id"])
        columns["kind"].append(row["kind"])
        columns["answered"].append(row["answered"])
        columns["raters"].append(list(votes))
        columns["votes"].append(list(votes.values()))
        columns["correct"].append(row["correct"])
        columns["citations"].append([c["uri"] for c in row["citations"]])
        columns["classes"].append(classes)
        columns["citation_valid"].append(row["citation_valid"])
        for cls in CLASSES:
            columns[cls].append(classes.count(cls))
    return pl.DataFrame(columns, schema=schema)


def encode_results(results: pl.DataFrame) -> bytes:
    """The results file's bytes: `jsonl.encode_lines` of :func:`result_rows`, built in polars.

    Each line is put together as text from the columns, so 100,000 questions cost no Python
    per question; strings are quoted as msgspec quotes them (tests/unit/test_tables.py). One
    plan: the votes and the citations are exploded to one text per item, gathered back per
    question in order (every question has a group: an empty list is one null, which the join
    of the group skips) and set beside the other columns, so no join or sort puts them back.
    """
    import polars as pl

    def json_bool(column: str) -> pl.Expr:
        return pl.when(pl.col(column)).then(pl.lit("true")).otherwise(pl.lit("false"))

    quote = _json_strings(results, ("id", "kind"), ("raters", "citations"))
    rows = results.lazy()

    def items(columns: list[str | pl.Expr], text: pl.Expr) -> pl.LazyFrame:
        return (
            rows.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"), *columns)
            .explode(
                *(c if isinstance(c, str) else c.meta.output_name() for c in columns),
                empty_as_null=True,
            )
            .select("row", text.alias("text"))
            .group_by("row", maintain_order=True)
            .agg("text")
            .select(pl.col("text").list.join(","))
        )

    votes = items(
        ["raters", "votes"], pl.concat_str(quote("raters"), pl.lit(":"), json_bool("votes"))
    )
    cites = items(
        ["citations", pl.col("classes").cast(pl.List(pl.String))],
        pl.concat_str(
            pl.lit('{"uri":'),
            quote("citations"),
            pl.lit(',"class":"'),
            pl.col("classes"),
            pl.lit('"}'),
        ),
    )
    line = pl.concat_str(
        pl.lit('{"id":'),
        quote("id"),
        pl.lit(',"kind":'),
        quote("kind"),
        pl.lit(',"answered":'),
        json_bool("answered"),
        pl.lit(',"votes":{'),
        pl.col("vote"),
        pl.lit('},"majority":'),
        json_bool("correct"),
        pl.lit(',"correct":'),
        json_bool("correct"),
        pl.lit(',"citations":['),
        pl.col("cite"),
        pl.lit('],"citation_valid":'),
        json_bool("citation_valid"),
        pl.lit("}\n"),
    )
    scalars = rows.select("id", "kind", "answered", "correct", "citation_valid")
    text = pl.concat(
        [scalars, votes.rename({"text": "vote"}), cites.rename({"text": "cite"})],
        how="horizontal",
    ).select(line.str.join("").cast(pl.Binary))
    data: bytes = text.collect(engine=ENGINE).item()
    return data


# Printable ASCII but the quote and the backslash: a JSON string of these is the text quoted.
_PLAIN = r"^[\x20\x21\x23-\x5b\x5d-\x7e]*$"


def _json_strings(
    frame: pl.DataFrame, columns: Sequence[str], lists: Sequence[str]
) -> Callable[[str], pl.Expr]:
    """What quotes a string column (of ``columns``, or an item of ``lists``) as JSON string
    literals: the plain ones in polars; the few that need escapes go through msgspec, found
    by one pass over every string of the frame."""
    import msgspec
    import polars as pl

    plain = pl.col("s").str.contains(_PLAIN)
    strings = [frame.lazy().select(pl.col(c).alias("s")) for c in columns]
    strings += [frame.lazy().select(pl.col(c).explode().alias("s")) for c in lists]
    odd = pl.concat(strings).filter(~plain).unique().collect(engine=ENGINE)["s"]
    escaped = {s: msgspec.json.encode(s).decode() for s in odd.drop_nulls().to_list()}

    def quote(column: str) -> pl.Expr:
        quoted = pl.concat_str(pl.lit('"'), pl.col(column), pl.lit('"'))
        if not escaped:
            return quoted
        return (
            pl.when(pl.col(column).str.contains(_PLAIN))
            .then(quoted)
            .otherwise(pl.col(column).replace_strict(escaped, default=None, return_dtype=pl.String))
        )

    return quote
