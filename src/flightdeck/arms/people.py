"""Answers a person produced (a chat product with documents attached), with their provenance.

:func:`import_answers` reads the person's answers (JSONL or CSV), hashes each cited file as
it was in the snapshot the person worked from, and writes the arm's answers and meta. The
hash comes from the snapshot, not from ``as_of``: an attachment older than ``as_of`` shows up
as a stale citation when the arm is scored, which is the point.

The snapshot is either a folder laid out as ``<repo>/<path>`` (the attachments), or the
commits the attachments were exported from (``REPO=SHA``, read through git).

A citation of a file the snapshot does not hold is recorded with the SHA-256 of no bytes
(``e3b0c442…b855``) and reported, so it scores as fabricated or stale rather than vanishing;
``on_missing="error"`` refuses the file instead. When none of the cited files is in the
snapshot, the snapshot is wrong, and that is always an error.

Real exports are taken as they come (#15): a CSV's delimiter (``,`` ``;`` or tab) is sniffed;
a URL citation is kept, opaque, with its given hash or else :func:`opaque_sha256`; a
citation of a repository outside the question's ``as_of`` is kept (it scores as fabricated:
no valid source lies there) and reported as a warning rather than refusing the whole file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from flightdeck import __version__
from flightdeck.arms.attachments import (
    EMPTY_SHA256,
    hash_from_folder,
    snapshot_record,
    split_uri,
)
from flightdeck.arms.protocol import ProtocolError, check_citation_uri
from flightdeck.clock import utc_now
from flightdeck.errors import InputError
from flightdeck.jsonl import read_jsonl, sha256_file, write_json, write_jsonl
from flightdeck.project import CACHE_FOLDER, Suite, as_suite, check_arm_name
from flightdeck.suite.citations import opaque_sha256
from flightdeck.suite.records import (
    COMMIT_RE,
    SHA256_RE,
    Question,
    parse_source_uri,
    read_questions,
)
from flightdeck.suite.repos import RepoSet

CSV_SEPARATORS = re.compile(r"[\s;|]+")
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


@dataclass(frozen=True)
class AbsentCitation:
    line: int
    id: str
    uri: str


@dataclass(frozen=True)
class OutsideCitation:
    """A citation of a repository the question's ``as_of`` does not pin: kept, fabricated."""

    line: int
    id: str
    uri: str
    as_of: tuple[str, ...]


@dataclass(frozen=True)
class ImportResult:
    suite: str
    arm: str
    questions: int
    answers_path: Path
    meta_path: Path
    knowledge_snapshot: Any
    answered: list[str]
    unanswered: list[str]
    absent: list[AbsentCitation] = field(default_factory=list)
    outside: list[OutsideCitation] = field(default_factory=list)
    delimiter: str | None = None  # a CSV's sniffed delimiter; None for JSONL


# --- reading the person's file --------------------------------------------------------------


def read_rows(path: Path) -> list[Row]:
    """Rows of a ``.jsonl`` or ``.csv`` file; bad rows raise ``InputError(path, line, ...)``."""
    return read_rows_with_format(path)[0]


def read_rows_with_format(path: Path) -> tuple[list[Row], str | None]:
    """Rows, and the CSV delimiter that was sniffed (None for JSONL)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return list(_jsonl_rows(path)), None
    if suffix in (".csv", ".tsv"):
        text = _csv_text(path)
        delimiter = sniff_delimiter(text)
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
        raise InputError(path, line, f"not CSV ({exc}); check the quoting") from None


# --- hashing from the snapshot --------------------------------------------------------------


def _hash_from_commits(
    repos: RepoSet, commits: Mapping[str, str], wanted: set[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    found = {}
    for repo in sorted({r for r, _ in wanted}):
        with repos.get(repo).blobs() as reader:
            for r, path in sorted(wanted):
                if r == repo:
                    data = reader.read(commits[repo], path)
                    if data is not None:
                        found[(r, path)] = hashlib.sha256(data).hexdigest()
    return found


def parse_snapshot_commits(values: tuple[str, ...]) -> dict[str, str]:
    """``REPO=SHA`` pairs (``--snapshot-commit``) -> mapping; each SHA a full 40-hex commit."""
    commits = {}
    for value in values:
        repo, sep, commit = value.partition("=")
        if not sep or not repo or not COMMIT_RE.match(commit):
            raise InputError(
                "--snapshot-commit",
                None,
                f"{value!r} is not REPO=<40-hex commit>; e.g. sdlc=$(git rev-parse v1.2)",
            )
        commits[repo] = commit.lower()
    return commits


# --- the import ----------------------------------------------------------------------------


def check_date(value: str) -> str:
    """The date the person ran the arm: ``YYYY-MM-DD`` or an ISO 8601 time; kept as given."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise InputError(
            "--date", None, f"{value!r} is not a date; use YYYY-MM-DD or an ISO 8601 time"
        ) from None
    return value


def import_answers(
    suite_dir: Suite | Path,
    arm: str,
    source: Path,
    *,
    by: str,
    model: str,
    date: str,
    snapshot_dir: Path | None = None,
    snapshot_commits: Mapping[str, str] | None = None,
    repos: Mapping[str, Path] | None = None,
    cache_dir: Path = CACHE_FOLDER,
    on_missing: Literal["record", "error"] = "record",
    replace: bool = False,
) -> ImportResult:
    """Write ``answers/<arm>.jsonl`` and its meta from a person's file; see the module doc."""
    check_arm_name(arm)
    for name, value in (("--by", by), ("--model", model)):
        if not value.strip():
            raise InputError(name, None, "is empty; say who ran the arm and with which model")
    check_date(date)
    if (snapshot_dir is None) == (not snapshot_commits):
        raise InputError(
            "--snapshot",
            None,
            "give the documents the person had: --snapshot DIR or --snapshot-commit REPO=SHA",
        )
    if snapshot_dir is not None and not snapshot_dir.is_dir():
        raise InputError(snapshot_dir, None, "snapshot folder not found; it holds <repo>/<path>")
    suite = as_suite(suite_dir, keys=False)
    suite.require_intact()
    questions = {q.id: q for q in read_questions(suite.questions)}
    answers_path = suite.answers(arm)
    meta_path = suite.meta(arm)
    if answers_path.exists() and not replace:
        raise InputError(
            answers_path, None, "already exists; use a new arm name, or --replace to overwrite"
        )

    rows, delimiter, outside = _checked_rows(source, questions)
    outside_uris = {(o.line, o.uri) for o in outside}
    wanted = {
        pair
        for row in rows
        for c in row.citations
        if (pair := split_uri(c.uri)) and not c.sha256 and (row.line, c.uri) not in outside_uris
    }
    commit_repos = RepoSet(repos or {}, cache_dir)
    if snapshot_dir is not None:
        hashes = hash_from_folder(snapshot_dir, wanted)
        where = str(snapshot_dir)
        snapshot: Any = snapshot_record(snapshot_dir)
    else:
        commits = dict(snapshot_commits or {})
        _check_commits(commits, wanted, commit_repos)
        hashes = _hash_from_commits(commit_repos, commits, wanted)
        where = "the snapshot commits"
        snapshot = {repo: [commits[repo]] for repo in sorted(commits)}
    if wanted and not hashes:
        raise InputError(
            source,
            None,
            f"none of the {len(wanted)} cited files is in {where}; check the snapshot "
            "(a folder must hold <repo>/<path>)",
        )

    absent: list[AbsentCitation] = []
    records: dict[str, dict[str, Any]] = {}
    for row in rows:
        citations = []
        for c in row.citations:
            pair = split_uri(c.uri)
            if pair is None:  # a URL: opaque, its given hash or the hash of the uri itself
                citations.append({"uri": c.uri, "sha256": c.sha256 or opaque_sha256(c.uri)})
                continue
            if (row.line, c.uri) in outside_uris:  # fabricated whatever its hash: none known
                citations.append({"uri": c.uri, "sha256": _outside_hash(snapshot_dir, pair)})
                continue
            digest = c.sha256 or hashes.get(pair)
            if digest is None:
                if on_missing == "error":
                    raise InputError(
                        source, row.line, f"citation {c.uri!r} is not in {where}; fix the uri"
                    )
                absent.append(AbsentCitation(row.line, row.id, c.uri))
                digest = EMPTY_SHA256
            citations.append({"uri": c.uri, "sha256": digest})
        records[row.id] = {"id": row.id, "answer": row.answer, "citations": citations}

    ordered = [records[qid] for qid in questions if qid in records]
    from flightdeck.jsonl import encode_lines, sha256_bytes

    suite.require_unchanged_if_scored(arm, sha256_bytes(encode_lines(ordered)))
    provenance = {"by": by, "date": date, "model": model, "knowledge_snapshot": snapshot}
    _require_same_provenance_if_scored(suite, arm, meta_path, provenance)
    write_jsonl(answers_path, ordered)
    meta = {
        "runner": "person",
        **provenance,
        "source": {"file": source.name, "sha256": sha256_file(source)},
        "absent_citations": len(absent),
        **({"outside_citations": len(outside)} if outside else {}),
        "imported": utc_now(),
        "via": "flightdeck knowledge import-answers",
        "flightdeck_version": __version__,
    }
    write_json(meta_path, meta)
    return ImportResult(
        suite.name,
        arm,
        len(questions),
        answers_path,
        meta_path,
        snapshot,
        [r["id"] for r in ordered],
        [qid for qid in questions if qid not in records],
        absent,
        outside,
        delimiter,
    )


def _require_same_provenance_if_scored(
    suite: Suite, arm: str, meta_path: Path, provenance: dict[str, Any]
) -> None:
    """A scored arm's meta keeps who ran it, when, with which model and documents.

    The same answers imported again (a pipeline re-running its import stage) pass the ledger;
    a different ``--by``, ``--model``, ``--date`` or snapshot would rewrite what the report
    says about answers that were scored as someone else's. A snapshot folder is compared by
    its hash and file count, not by the path it was given as.
    """
    from flightdeck.suite.records import read_meta

    scored = suite.read_ledger().get(arm)
    if scored is None or not meta_path.is_file():
        return
    old = read_meta(meta_path).fields

    def comparable(name: str, value: Any) -> Any:
        if name == "knowledge_snapshot" and isinstance(value, dict) and "sha256" in value:
            return {k: value.get(k) for k in ("sha256", "files")}
        return value

    for name, flag in (
        ("by", "--by"),
        ("model", "--model"),
        ("date", "--date"),
        ("knowledge_snapshot", "--snapshot"),
    ):
        if comparable(name, old.get(name)) != comparable(name, provenance[name]):
            what = f"{name} {old.get(name)!r}"
            if name == "knowledge_snapshot":
                what = "another snapshot (its documents differ)"
            raise InputError(
                meta_path,
                None,
                f"arm {arm!r} was scored on {scored[2]} with {what}; a scored arm's provenance "
                f"cannot change: give the same {flag}, or import under a new arm name",
            )


def _outside_hash(snapshot_dir: Path | None, pair: tuple[str, str]) -> str:
    """The snapshot's bytes of a file outside as_of, if the folder holds it; else of nothing."""
    if snapshot_dir is not None and (snapshot_dir / pair[0] / pair[1]).is_file():
        return sha256_file(snapshot_dir / pair[0] / pair[1])
    return EMPTY_SHA256


def _checked_rows(
    source: Path, questions: Mapping[str, Question]
) -> tuple[list[Row], str | None, list[OutsideCitation]]:
    rows, delimiter = read_rows_with_format(source)
    seen: dict[str, int] = {}
    outside: list[OutsideCitation] = []
    for row in rows:
        if row.id not in questions:
            raise InputError(
                source,
                row.line,
                f"id {row.id!r} is not a question of this suite; fix the id or drop the row",
            )
        if row.id in seen:
            raise InputError(
                source, row.line, f"second answer for {row.id!r} (first on line {seen[row.id]})"
            )
        seen[row.id] = row.line
        question = questions[row.id]
        for c in row.citations:
            parsed = parse_source_uri(c.uri)
            if parsed is not None and parsed.repo not in question.as_of:
                # checked as if in as_of (the path, the span), then kept as outside it
                question = msgspec.structs.replace(
                    question, as_of={**question.as_of, parsed.repo: "0" * 40}
                )
                outside.append(
                    OutsideCitation(row.line, row.id, c.uri, tuple(questions[row.id].as_of))
                )
            try:
                check_citation_uri(c.uri, question)
            except ProtocolError as exc:
                raise InputError(source, row.line, f"{exc}; fix the uri") from None
            if split_uri(c.uri) is not None and c.sha256 is not None:
                raise InputError(
                    source, row.line, f"remove the sha256 of {c.uri!r}: it comes from the snapshot"
                )
    if not rows:
        raise InputError(source, None, "no answers; write one row per answered question")
    return rows, delimiter, outside


def _check_commits(
    commits: Mapping[str, str], wanted: set[tuple[str, str]], repos: RepoSet
) -> None:
    uncovered = sorted({r for r, _ in wanted} - set(commits))
    if uncovered:
        raise InputError(
            "--snapshot-commit",
            None,
            f"citations name repository {uncovered[0]!r}; "
            f"add --snapshot-commit {uncovered[0]}=<commit>",
        )
    repos.require_commits(
        (repo, commit, "--snapshot-commit", None) for repo, commit in sorted(commits.items())
    )
