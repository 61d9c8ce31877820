"""What one rater rates, in a blind order seeded per rater: every answer of every arm.

The order is the sort of HMAC-SHA-256 of ``[suite, rater, arm, id]`` under the project's
order secret (:func:`order_secret`: 32 random bytes in the project cache, created atomically
on first use, never sent to the page, masked from harnesses with the rest of the cache): the
same for one rater of one suite on every start (so a restart resumes where the rater
stopped), different for each rater, with the arms interleaved. An unkeyed hash of public
names would let anyone recompute the order and read the arm off each position; keyed, two
projects with the same suite, rater and arm names get unrelated orders. Each item gets an
opaque id, an HMAC of the arm and the question id under a key drawn fresh at every start, so
no id, address or page says which arm wrote the answer. The adjudication view keeps only the
answers the first two raters split on. :class:`~flightdeck.rating.session.RatingSession`
shows and labels them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.files.jsonl import canonical_json, writing_to
from flightdeck.project.modes import ToRate
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.rating.judgements import Judgement, judgements_of
from flightdeck.suite.records import (
    Answer,
    Key,
    Question,
    read_answers,
    read_keys,
    read_labels,
    read_questions,
)

_SECRET_BYTES = 32


def order_key(suite: str, rater: str, arm: str, question_id: str, *, secret: bytes) -> str:
    """The sort key that places one answer in one rater's order (hex HMAC-SHA-256)."""
    message = canonical_json([suite, rater, arm, question_id])
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def order_secret(path: Path) -> bytes:
    """The project's rating-order secret at ``path`` (``ProjectPaths.rating_order_key``),
    created on first use (mode 0600).

    Written to a temp file and linked into place, so two raters starting at once agree on
    one secret (the second link fails and reads the first). A file of the wrong size is an
    :class:`InputError`: delete it to start afresh (the order changes; labels are kept).
    """
    cache = path.parent
    if not path.exists():
        with writing_to(cache):
            cache.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(_SECRET_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another start made it first
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
    data = path.read_bytes()
    if len(data) != _SECRET_BYTES:
        raise InputError(path, None, "not a rating-order secret; delete it to make a new one")
    return data


@dataclass(frozen=True, slots=True)
class Item:
    """One answer to rate; ``item_id`` is all a page may show of which answer it is."""

    item_id: str
    arm: str
    question: Question
    key: Key
    answer: Answer


@dataclass(frozen=True, slots=True)
class RaterItems:
    """One rater's items in their order, the suite's question ids, and the judges' verdicts."""

    items: list[Item]
    question_ids: tuple[str, ...]
    judged: dict[tuple[str, str], list[Judgement]]  # (arm, question id) -> judgements


def load_items(
    suite: SuiteFolder, rater: str, secret: bytes, *, arms: Sequence[str] | None, to_rate: ToRate
) -> RaterItems:
    """The answers ``rater`` rates (of ``arms``, or of every arm), mixed in their order.

    ``secret`` keys the items' opaque ids; ``ToRate.SPLIT_ANSWERS``: only the answers the
    first two other raters split on.
    """
    questions = {q.id: q for q in read_questions(suite.questions)}
    question_ids = tuple(questions)
    keys_path = suite.keys
    keys = {k.id: k for k in read_keys(keys_path)}
    folder = suite.answers_folder
    adjudicate = to_rate is ToRate.SPLIT_ANSWERS
    found = suite.arms()
    if not found:
        raise InputError(folder, None, "no answers/<arm>.jsonl to rate; run or import an arm first")
    for arm in arms or ():
        if arm not in found:
            raise InputError(
                "--arm", None, f"no answers for arm {arm!r}; the arms are {', '.join(found)}"
            )
    items = []
    judged_by: dict[tuple[str, str], list[Judgement]] = {}
    for arm in found if arms is None else sorted(set(arms)):
        arm_answers = read_answers(suite.answers(arm), questions)
        judged = judgements_of(suite, arm, {a.id: a for a in arm_answers})
        judged_by.update({(arm, qid): js for qid, js in judged.items()})
        split = split_ids(suite, rater, arm, questions) if adjudicate else None
        for answer in arm_answers:
            if split is not None and answer.id not in split:
                continue
            if answer.id not in keys:
                raise InputError(
                    keys_path, None, f"no key for question {answer.id!r}; add its answer key"
                )
            mac = hmac.new(secret, canonical_json([arm, answer.id]), "sha256")
            items.append(
                Item(mac.hexdigest()[:20], arm, questions[answer.id], keys[answer.id], answer)
            )
    order = order_secret(suite.project.rating_order_key)
    items.sort(key=lambda i: order_key(suite.name, rater, i.arm, i.answer.id, secret=order))
    if not items and adjudicate:
        raise InputError(
            suite.labels_folder,
            None,
            "the first two raters split on no answer: nothing to adjudicate",
        )
    if not items:
        raise InputError(folder, None, "the answers files hold no answers to rate")
    return RaterItems(items, question_ids, judged_by)


def split_ids(suite: SuiteFolder, rater: str, arm: str, questions: dict[str, Question]) -> set[str]:
    """Ids the first two other raters of ``arm`` (in file order) marked differently.

    The adjudication view: a third person rates only what the first two split on,
    and their label makes the majority.
    """
    path = suite.labels(arm)
    if not path.exists():
        return set()
    labels = [la for la in read_labels(path, questions) if la.rater != rater]
    raters = list(dict.fromkeys(la.rater for la in labels))[:2]
    if len(raters) < 2:
        return set()
    marks: dict[str, dict[str, bool]] = {}
    for label in labels:
        if label.rater in raters:
            marks.setdefault(label.id, {})[label.rater] = label.correct
    return {qid for qid, m in marks.items() if len(m) == 2 and len(set(m.values())) == 2}
