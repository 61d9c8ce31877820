"""A person's answers file read as rows: JSONL, or a CSV as spreadsheets export it.

Real exports are taken as they come (#15): a CSV's delimiter (``,`` ``;`` or tab) is sniffed,
a byte-order mark is dropped, and a bad row names its file and line. An answer may be as long
as a person can paste (a chat product's long reply), up to :data:`ANSWER_LIMIT` characters in
either format (the csv module's own limit, 128 KiB a cell, would call it "not CSV"). What the
rows mean (the suite's ids, the citations' hashes) is :mod:`flightdeck.arms.people`'s to check.
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_jsonl
from flightdeck.suite.records import SHA256_RE

CSV_SEPARATORS = re.compile(r"[\s;|]+")
# The longest answer (or CSV cell) an import takes, in characters: far above any reply a
# person pastes (a 1 MiB one is tested), low enough that a wrong file is refused, not stored.
ANSWER_LIMIT = 16 << 20
_TOO_LONG = f"is longer than the answer-size limit ({ANSWER_LIMIT >> 20} Mi characters)"
JSONL_FIELDS = ("id", "answer", "citations")


@dataclass(frozen=True)
class Citation:
    uri: str
    sha256: str | None  # given only for a URL; repository files are hashed from the snapshot


@dataclass(frozen=True)
class Row:
    """One answer as the person gave it, with the line it started on."""

    line: int
    id: str
    answer: str
    citations: tuple[Citation, ...]


def read_rows_with_format(path: Path) -> tuple[list[Row], str | None]:
    """Rows, and the CSV delimiter that was sniffed (None for JSONL)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return list(_jsonl_rows(path)), None
    if suffix in (".csv", ".tsv"):
        text = _csv_text(path)
        delimiter = sniff_delimiter(text)
        with _cells_up_to(ANSWER_LIMIT):
            return list(_csv_rows(path, text, delimiter)), delimiter
    raise InputError(path, None, "unknown format; give a .jsonl, .csv or .tsv file")


def _jsonl_rows(path: Path) -> Iterator[Row]:
    for line, obj in read_jsonl(path):
        unknown = sorted(set(obj) - set(JSONL_FIELDS))
        if unknown:
            raise InputError(
                path, line, f"unknown field {unknown[0]!r}; a row has id, answer, citations"
            )
        qid, answer = obj.get("id"), obj.get("answer")
        if not isinstance(qid, str) or not qid.strip():
            raise InputError(path, line, "id must be a non-empty string; give the question's id")
        if not isinstance(answer, str):
            raise InputError(path, line, "answer must be a string; write the answer's text")
        if len(answer) > ANSWER_LIMIT:
            raise InputError(path, line, f"answer {_TOO_LONG}; is this the right file?")
        raw = obj.get("citations", [])
        if not isinstance(raw, list):
            raise InputError(path, line, "citations must be a list of uris or {uri} objects")
        yield Row(line, qid, answer, tuple(_citation(path, line, item) for item in raw))


def _citation(path: Path, line: int, item: object) -> Citation:
    if isinstance(item, str) and item.strip():
        return Citation(item.strip(), None)
    if isinstance(item, dict) and isinstance(item.get("uri"), str) and item["uri"].strip():
        extra = sorted(set(item) - {"uri", "sha256"})
        if extra:
            raise InputError(path, line, f"citation field {extra[0]!r} is unknown; give {{uri}}")
        digest = item.get("sha256")
        if digest is not None and (not isinstance(digest, str) or not SHA256_RE.match(digest)):
            raise InputError(path, line, f"sha256 of {item['uri']!r} must be 64 hex digits")
        return Citation(item["uri"].strip(), None if digest is None else digest.lower())
    raise InputError(path, line, f"citation {item!r} must be a uri string or {{uri}}; fix it")


CSV_DELIMITERS = ",;\t"
_SNIFF_BYTES = 64 << 10


def _csv_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, None, "file not found; check the path") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"not UTF-8 (byte {exc.start + 1}); save as UTF-8") from None


def sniff_delimiter(text: str) -> str:
    """``,``, ``;`` or tab: what spreadsheets export, in every locale's habit.

    :class:`csv.Sniffer`, restricted to those three, reads the first 64 KiB; the header must
    then split into columns that hold ``id`` and ``answer``, else the delimiter that does
    split it so is taken (a sample of long quoted answers can mislead the sniffer). Nothing
    found: ``,``, and the header check names the missing column.
    """
    sample = text[:_SNIFF_BYTES]
    try:
        delimiter = csv.Sniffer().sniff(sample, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        delimiter = ","
    header = text.split("\n", 1)[0]
    if _names_columns(header, delimiter):
        return delimiter
    for candidate in CSV_DELIMITERS:
        if _names_columns(header, candidate):
            return candidate
    return ","


def _names_columns(header: str, delimiter: str) -> bool:
    try:
        names = next(csv.reader([header], delimiter=delimiter))
    except (csv.Error, StopIteration):
        return False
    return {"id", "answer"} <= {name.strip().lower() for name in names}


def _csv_rows(path: Path, text: str, delimiter: str) -> Iterator[Row]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = [name.strip().lower() for name in next(reader)]
    except StopIteration:
        raise InputError(path, 1, "empty file; the first row names the columns") from None
    except csv.Error as exc:  # e.g. an unclosed quote in the header row
        raise InputError(path, 1, f"not CSV ({exc}); check the header row's quoting") from None
    for name in ("id", "answer"):
        if name not in header:
            raise InputError(path, 1, f"no {name!r} column; name the columns id,answer,citations")
    index = {name: header.index(name) for name in ("id", "answer", "citations") if name in header}
    line = reader.line_num + 1
    try:
        for cells in reader:
            start, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(header):
                raise InputError(path, start, f"{len(cells)} cells for {len(header)} columns")
            cells += [""] * (len(header) - len(cells))
            qid = cells[index["id"]].strip()
            if not qid:
                raise InputError(path, start, "id is empty; give the question's id")
            uris = cells[index["citations"]] if "citations" in index else ""
            citations = tuple(Citation(u, None) for u in CSV_SEPARATORS.split(uris) if u)
            yield Row(start, qid, cells[index["answer"]], citations)
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise InputError(path, line, f"a cell {_TOO_LONG}; is this the right file?") from None
        raise InputError(path, line, f"not CSV ({exc}); check the quoting") from None


@contextlib.contextmanager
def _cells_up_to(limit: int) -> Iterator[None]:
    """The csv module's cell limit (one setting for the whole process) raised while reading."""
    old = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(old)
