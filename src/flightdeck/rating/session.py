"""Blind rating: every answer of every arm, one at a time, in an order seeded per rater.

The items and their blind order come from :mod:`flightdeck.rating.items`; here a rater sees
them one at a time (nothing in this module's views names the arm) and labels them.

Labels are written as they are given: a new label is appended to ``labels/<arm>.jsonl`` and
fsynced; a changed label replaces the rater's old line in one atomic rewrite, so the file
never holds two labels by one rater for one id, nor loses one. A label whose
``answer_sha256`` no longer matches the answer counts as not given, and rating the answer
again replaces it. This module does no terminal or network I/O: the CLI and
:mod:`flightdeck.rating.server` drive a :class:`RatingSession`.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flightdeck.errors import BadLabel, InputError, NoSuchItem
from flightdeck.files.clock import format_utc
from flightdeck.files.jsonl import append_jsonl, atomic_write, dumps_line, locked_folder
from flightdeck.project.modes import ToRate
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.rating.items import Item, load_items
from flightdeck.rating.judgements import disagreements
from flightdeck.rating.lines import CitationView, LineReader, cited_lines, cited_page
from flightdeck.suite.citations import is_flagged_unsupported
from flightdeck.suite.records import Label, read_labels
from flightdeck.suite.repos import RepoSet

__all__ = [
    "CitationView",
    "ItemView",
    "OwnLabel",
    "RatingSession",
    "SaveResult",
]


@dataclass(frozen=True, slots=True)
class OwnLabel:
    """This rater's current label on an item (never another rater's)."""

    correct: bool
    unsupported: tuple[int, ...]  # citation numbers, from 1
    time: str | None
    facts: tuple[bool, ...] | None = None  # the facts ticked, when the label says (#21)


@dataclass(frozen=True, slots=True)
class ItemView:
    """What a rater sees of one answer: nothing here names or hints at the arm."""

    item_id: str
    position: int  # 0-based, in this rater's order
    total: int
    labelled: int
    question_id: str
    question: str
    kind: str
    answer_key: str
    facts: tuple[str, ...]
    answer: str
    citations: tuple[CitationView, ...]
    own: OwnLabel | None
    # Judges that disagreed with this rater's label: empty until the rater has rated (#14).
    judges: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item_id,
            "position": self.position,
            "total": self.total,
            "labelled": self.labelled,
            "question_id": self.question_id,
            "question": self.question,
            "kind": self.kind,
            "answer_key": self.answer_key,
            "facts": list(self.facts),
            "answer": self.answer,
            "citations": [c.to_json() for c in self.citations],
            "own": None
            if self.own is None
            else {
                "correct": self.own.correct,
                "unsupported": list(self.own.unsupported),
                "time": self.own.time,
                "facts": None if self.own.facts is None else list(self.own.facts),
            },
            "judges": list(self.judges),
        }


@dataclass(frozen=True, slots=True)
class SaveResult:
    written: bool  # False when the label was already there, unchanged
    next_position: int | None  # None when every item is labelled


class RatingSession:
    """One rater's pass over a suite: the ordered items, their views, and label writes.

    Thread-safe: the web server calls it from several request threads. Close it (or use it
    as a context manager) to stop the git processes that read the cited files.
    """

    def __init__(
        self,
        suite: SuiteFolder,
        rater: str,
        repos: RepoSet,
        *,
        clock: Callable[[], datetime] | None = None,
        arms: Sequence[str] | None = None,
        to_rate: ToRate = ToRate.EVERY_ANSWER,
    ) -> None:
        if not rater.strip() or rater != rater.strip():
            raise InputError("--rater", None, f"rater {rater!r} must be a non-empty name")
        self.suite = suite.opened()
        self.suite.require_intact()
        self.suite_name = self.suite.name
        self.rater = rater
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.RLock()
        self._secret = secrets.token_bytes(32)
        loaded = load_items(self.suite, rater, self._secret, arms=arms, to_rate=to_rate)
        self._items = loaded.items
        self._question_ids = loaded.question_ids
        self._judged = loaded.judged
        self._by_id = {item.item_id: pos for pos, item in enumerate(self._items)}
        self._own: dict[tuple[str, str], Label] = {}
        for arm in sorted({item.arm for item in self._items}):
            self._own.update(self._read_own_labels(arm))
        self._lines = LineReader(repos)
        try:
            self._lines.check(
                (item.question, item.answer.citations, self.suite.questions)
                for item in sorted(self._items, key=lambda i: i.question.line)
            )
        except BaseException:
            self._lines.close()
            raise
        self._citations: dict[str, tuple[CitationView, ...]] = {}

    # --- loading ---------------------------------------------------------------------

    def _read_own_labels(self, arm: str) -> dict[tuple[str, str], Label]:
        path = self.suite.labels(arm)
        if not path.exists():
            return {}
        labels = read_labels(path, self._question_ids)
        for label in labels:  # one person under a second spelling: scoring would refuse it
            if label.rater != self.rater and label.rater.casefold() == self.rater.casefold():
                raise InputError(
                    "--rater",
                    None,
                    f"{self.rater!r} differs only in case from rater {label.rater!r} in "
                    f"{path}; rate as --rater {label.rater!r} (one name for one person)",
                )
        return {(arm, label.id): label for label in labels if label.rater == self.rater}

    # --- reading ---------------------------------------------------------------------

    @property
    def total(self) -> int:
        return len(self._items)

    @property
    def labelled(self) -> int:
        with self._lock:
            return sum(1 for item in self._items if self._current_label(item) is not None)

    def _current_label(self, item: Item) -> Label | None:
        """This rater's label on the item, unless it was given to an older answer."""
        label = self._own.get((item.arm, item.answer.id))
        if label is None:
            return None
        if label.answer_sha256 is not None and label.answer_sha256 != item.answer.sha256:
            return None
        return label

    def first_unlabelled(self) -> int | None:
        """Where to start: the first item in this rater's order not yet labelled."""
        return self.next_unlabelled(-1)

    def next_unlabelled(self, after: int) -> int | None:
        """The next unlabelled item after ``after``, wrapping round; None when all are done."""
        with self._lock:
            n = len(self._items)
            for step in range(1, n + 1):
                pos = (after + step) % n
                if self._current_label(self._items[pos]) is None:
                    return pos
            return None

    def review(self) -> list[dict[str, Any]]:
        """Every item in this rater's order with their label, for the review list.

        Only the question and the rater's own verdict: nothing that names the arm.
        """
        with self._lock:
            out = []
            for pos, item in enumerate(self._items):
                label = self._current_label(item)
                text = item.question.question
                out.append(
                    {
                        "position": pos,
                        "question_id": item.question.id,
                        "question": text if len(text) <= 70 else text[:67] + "...",
                        "correct": None if label is None else label.correct,
                    }
                )
            return out

    def position_of(self, item_id: str) -> int:
        pos = self._by_id.get(item_id)
        if pos is None:
            raise NoSuchItem(f"no item {item_id!r}")
        return pos

    def view(self, position: int) -> ItemView:
        """The item at ``position`` as the rater sees it, with their own label if any."""
        if not 0 <= position < len(self._items):
            raise NoSuchItem(f"no item at position {position}")
        item = self._items[position]
        with self._lock:
            citations = self._citations.get(item.item_id)
            if citations is None:
                citations = cited_lines(self._lines, item.question, item.answer.citations)
                self._citations[item.item_id] = citations
            label = self._current_label(item)
            time = label.time if label else None
            labelled = sum(1 for i in self._items if self._current_label(i) is not None)
        own = None
        if label is not None:
            flagged = tuple(
                n
                for n, cite in enumerate(item.answer.citations, start=1)
                if is_flagged_unsupported(cite.uri, label.unsupported)
            )
            facts = (
                label.facts
                if label.facts and len(label.facts) == len(item.key.required_facts)
                else None
            )
            own = OwnLabel(label.correct, flagged, time, facts)
        judged = self._judged.get((item.arm, item.answer.id), [])
        notes = () if label is None else tuple(disagreements(judged, label.correct))
        return ItemView(
            item_id=item.item_id,
            position=position,
            total=len(self._items),
            labelled=labelled,
            question_id=item.question.id,
            question=item.question.question,
            kind=item.question.kind,
            answer_key=item.key.answer_key,
            facts=item.key.required_facts,
            answer=item.answer.answer,
            citations=citations,
            own=own,
            judges=notes,
        )

    def citation_page(self, position: int, number: int, page: int) -> CitationView:
        """Page ``page`` (from 0) of citation ``number`` (from 1) of the item at ``position``.

        Every line of a whole-file or long citation can be paged to (#21); a page past the
        last is the last.
        """
        if not 0 <= position < len(self._items):
            raise NoSuchItem(f"no item at position {position}")
        item = self._items[position]
        cites = item.answer.citations
        if not 1 <= number <= len(cites):
            raise NoSuchItem(f"no citation {number}")
        uri = cites[number - 1].uri
        return cited_page(self._lines, item.question, number=number, uri=uri, page=page)

    # --- writing ---------------------------------------------------------------------

    def save(
        self,
        position: int,
        correct: bool,
        unsupported: Sequence[int],
        facts: Sequence[bool] | None = None,
    ) -> SaveResult:
        """Record this rater's label on an item; ``unsupported`` holds citation numbers.

        ``facts`` are the required facts the rater ticked, one per fact in the key's order
        (stored in the label, so a judge's fact-level agreement can be measured). A new
        label is appended and fsynced; a changed one replaces the old line; an unchanged one
        is left as it is. Returns where to go next.
        """
        if not 0 <= position < len(self._items):
            raise NoSuchItem(f"no item at position {position}")
        item = self._items[position]
        ticks = None if facts is None else tuple(bool(f) for f in facts)
        if ticks is not None and len(ticks) != len(item.key.required_facts):
            raise BadLabel(
                f"{len(ticks)} fact ticks for {len(item.key.required_facts)} required facts"
            )
        cites = item.answer.citations
        for number in unsupported:
            if not 1 <= number <= len(cites):
                raise BadLabel(f"citation {number} does not exist (1..{len(cites)})")
        uris = list(dict.fromkeys(cites[n - 1].uri for n in sorted(set(unsupported))))
        with self._lock:
            old = self._current_label(item)
            unchanged = (
                old is not None
                and old.correct == correct
                and old.answer_sha256 == item.answer.sha256
                and set(old.unsupported) == set(uris)
                and old.facts == ticks
            )
            if not unchanged:
                time = format_utc(self._clock())
                record: dict[str, Any] = {
                    "id": item.answer.id,
                    "rater": self.rater,
                    "correct": bool(correct),
                    "unsupported": uris,
                    "answer_sha256": item.answer.sha256,
                    "time": time,
                }
                if ticks is not None:
                    record["facts"] = list(ticks)
                _write_label(self.suite.labels(item.arm), record)
                self._own[(item.arm, item.answer.id)] = Label(
                    item.answer.id,
                    self.rater,
                    bool(correct),
                    tuple(uris),
                    item.answer.sha256,
                    time=time,
                    facts=ticks,
                )
            return SaveResult(not unchanged, self.next_unlabelled(position))

    def close(self) -> None:
        self._lines.close()

    def __enter__(self) -> RatingSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_label(path: Path, record: dict[str, Any]) -> None:
    """Append ``record``, or replace the rater's old line for the id in one atomic rewrite.

    One rewrite (the other lines as they were, then the new label) rather than a rewrite
    without the old line followed by an append: a kill between those two steps would lose
    the label, while ``os.replace`` leaves either the old file or the new one.
    """
    with locked_folder(path.parent):
        data = path.read_bytes() if path.exists() else b""
        kept, replaced = [], False
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                obj = None
            if (
                isinstance(obj, dict)
                and obj.get("id") == record["id"]
                and obj.get("rater") == record["rater"]
            ):
                replaced = True
                continue
            kept.append(raw + b"\n")
        if replaced:
            atomic_write(path, b"".join(kept) + (dumps_line(record) + "\n").encode())
        else:
            append_jsonl(path, record)
