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

The file is read by :mod:`flightdeck.arms.people_rows`, the snapshot hashed by
:mod:`flightdeck.arms.snapshot`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from flightdeck.arms.people_rows import Row, read_rows_with_format
from flightdeck.arms.protocol import check_citation_uri
from flightdeck.arms.snapshot import (
    EMPTY_SHA256,
    check_snapshot_commits,
    hash_from_commits,
    hash_from_folder,
    snapshot_record,
    split_uri,
)
from flightdeck.errors import InputError, ProtocolError
from flightdeck.files.clock import utc_now
from flightdeck.files.jsonl import encode_document, encode_lines, sha256_bytes, sha256_file
from flightdeck.params.arm_names import check_arm_name
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.suite.citations import opaque_sha256
from flightdeck.suite.records import (
    Question,
    parse_source_uri,
    read_questions,
)
from flightdeck.suite.repos import RepoSet
from flightdeck.suite.staging import write_together
from flightdeck.version import __version__


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


@dataclass(frozen=True)
class ImportOptions:
    """How a person's answers are taken in (``knowledge import-answers``'s flags).

    The snapshot is ``snapshot_dir`` (``<repo>/<path>``) or ``snapshot_commits`` (repository
    -> the commit the documents were exported from), exactly one of them.
    """

    by: str
    model: str
    date: str
    snapshot_dir: Path | None = None
    snapshot_commits: Mapping[str, str] | None = None
    on_missing: Literal["record", "error"] = "record"
    replace: bool = False


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
    suite: SuiteFolder,
    arm: str,
    source: Path,
    options: ImportOptions,
    *,
    repos: RepoSet,
) -> ImportResult:
    """Write ``answers/<arm>.jsonl`` and its meta from a person's file; see the module doc.

    ``repos`` are where the snapshot commits are read: the project's
    (:attr:`flightdeck.project.Project.repos`).
    """
    by, model, date = options.by, options.model, options.date
    snapshot_dir, snapshot_commits = options.snapshot_dir, options.snapshot_commits
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
    suite = suite.opened(keys=False)
    suite.require_intact()
    questions = {q.id: q for q in read_questions(suite.questions)}
    answers_path = suite.answers(arm)
    meta_path = suite.meta(arm)
    if answers_path.exists() and not options.replace:
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
    if snapshot_dir is not None:
        hashes = hash_from_folder(snapshot_dir, wanted)
        where = str(snapshot_dir)
        snapshot: Any = snapshot_record(snapshot_dir)
    else:
        commits = dict(snapshot_commits or {})
        check_snapshot_commits(commits, wanted, repos)
        hashes = hash_from_commits(repos, commits, wanted)
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
                if options.on_missing == "error":
                    raise InputError(
                        source, row.line, f"citation {c.uri!r} is not in {where}; fix the uri"
                    )
                absent.append(AbsentCitation(row.line, row.id, c.uri))
                digest = EMPTY_SHA256
            citations.append({"uri": c.uri, "sha256": digest})
        records[row.id] = {"id": row.id, "answer": row.answer, "citations": citations}

    ordered = [records[qid] for qid in questions if qid in records]
    suite.require_unchanged_if_scored(arm, sha256_bytes(encode_lines(ordered)))
    provenance = {"by": by, "date": date, "model": model, "knowledge_snapshot": snapshot}
    _require_same_provenance_if_scored(suite, arm, meta_path, provenance)
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
    # answers and meta appear together or not at all, even if the import is killed (#25)
    write_together(
        answers_path.parent,  # the tracked answers folder, or a scratch arm's (#21)
        {answers_path.name: encode_lines(ordered), meta_path.name: encode_document(meta)},
    )
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
    suite: SuiteFolder, arm: str, meta_path: Path, provenance: dict[str, Any]
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
                f"arm {arm!r} was scored on {scored.scored_at} with {what}; a scored arm's "
                f"provenance cannot change: give the same {flag}, or import under a new arm name",
            )


def _outside_hash(snapshot_dir: Path | None, pair: tuple[str, str]) -> str:
    """The snapshot's bytes of a file outside as_of, if the folder holds it; else of nothing.

    Looked up in the folder's listing, as every other citation is (a path too long for the
    file system, or one through a symlinked folder, is simply not in the snapshot).
    """
    if snapshot_dir is None:
        return EMPTY_SHA256
    return hash_from_folder(snapshot_dir, [pair]).get(pair, EMPTY_SHA256)


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
