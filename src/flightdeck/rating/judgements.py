"""What a judge says of an answer, and the judgements files that keep it beside the labels.

A judge writes ``suites/<suite>/judgements/<judge>/<arm>.jsonl``, one line per answer::

    {"id", "correct", "facts": [{"fact", "present", "quote"}], "unsupported": [uris],
     "answer_sha256", "judge": {"name", "kind", "model", "prompt_sha256", "temperature", "rules"}}

never ``labels/``: the labels stay the people's, and calibration compares the two. A judgement
is bound to the answer's hash like a label and to the judge's identity: a changed answer or a
changed judge (another model, an edited prompt, another temperature) makes it stale, and the
next run judges that answer again. Every kind of judge (:mod:`flightdeck.rating.judges`,
:mod:`flightdeck.rating.judge_llm`) returns the :class:`Verdict` defined here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from flightdeck.errors import InputError
from flightdeck.files.jsonl import atomic_write, encode_lines, read_bytes
from flightdeck.files.jsonl import read_jsonl as _read_jsonl
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.suite.problems import refusal
from flightdeck.suite.records import Answer, Key, Question
from flightdeck.suite.schema import Sha256


class JudgeIdentity(msgspec.Struct, frozen=True, kw_only=True):
    """What a calibration and a judgement hold for: a judge as it is now.

    A facts judge has ``rules`` (its normalisation's version) and no model, prompt or
    temperature; an llm judge the model, its prompt's sha256 and the temperature.
    """

    name: str
    kind: Literal["facts", "llm"]
    model: str | None
    prompt_sha256: str | None
    temperature: float | None
    rules: str | None

    def to_json(self) -> dict[str, Any]:
        """The identity as a judgements line holds it (``judge``), its fields in this order."""
        return {f: getattr(self, f) for f in self.__struct_fields__}


@dataclass(frozen=True, slots=True)
class FactVerdict:
    fact: str
    present: bool
    quote: str | None  # the answer's own words that state the fact, when present


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a judge says of one answer."""

    correct: bool
    facts: tuple[FactVerdict, ...]
    unsupported: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Judgement:
    id: str
    correct: bool
    facts: tuple[FactVerdict, ...]
    unsupported: tuple[str, ...]
    answer_sha256: str
    judge: dict[str, Any]
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "correct": self.correct,
            "facts": [{"fact": f.fact, "present": f.present, "quote": f.quote} for f in self.facts],
            "unsupported": list(self.unsupported),
            "answer_sha256": self.answer_sha256,
            "judge": self.judge,
        }


JudgeFn = Callable[[Question, Key, Answer], Verdict]


def judgements_path(suite: SuiteFolder, judge: str, arm: str) -> Path:
    return suite.judgements(judge, arm)


def read_judgements(path: Path, question_ids: Sequence[str]) -> list[Judgement]:
    """One arm's judgements, validated line by line (one per id)."""
    known = set(question_ids)
    out, seen = [], set()
    for line, obj in _read_jsonl(path, read_bytes(path)):
        judgement = _parse(path, line, obj, known)
        if judgement.id in seen:
            raise InputError(path, line, f"a second judgement of {judgement.id!r}; remove one")
        seen.add(judgement.id)
        out.append(judgement)
    return out


class _FactLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    fact: str
    present: bool
    quote: str | None  # given, though null when the fact is absent


class JudgementLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One line of a judgements file: the rule it is read by (every field given)."""

    id: str
    correct: bool
    facts: tuple[_FactLine, ...]
    unsupported: tuple[str, ...]
    answer_sha256: Sha256
    judge: dict[str, Any]


_FIELDS = {f.name: f.type for f in msgspec.structs.fields(JudgementLine)}
# What each field's refusal is called, in the order a line's faults are named.
_WORDS = {
    "correct": "correct must be true or false",
    "answer_sha256": "answer_sha256 must be 64 hex digits",
    "facts": "facts must be a list of {fact, present, quote}",
    "unsupported": "unsupported must be a list of uris",
    "judge": "judge must be the judge's identity object",
}


def _parse(path: Path, line: int, obj: dict[str, Any], known: set[str]) -> Judgement:
    def fail(message: str) -> InputError:
        return InputError(path, line, f"{message}; judge the arm again (`knowledge judge`)")

    if set(obj) != set(_FIELDS):
        raise fail(f"a judgement has exactly the fields {', '.join(sorted(_FIELDS))}")
    if not isinstance(obj["id"], str) or obj["id"] not in known:
        raise fail(f"id {obj['id']!r} is not a question of this suite")
    try:
        record = msgspec.convert(obj, JudgementLine)
    except msgspec.ValidationError:
        name = next(n for n in _WORDS if refusal(obj[n], _FIELDS[n]) is not None)
        raise fail(_WORDS[name]) from None
    return Judgement(
        record.id,
        record.correct,
        tuple(FactVerdict(f.fact, f.present, f.quote) for f in record.facts),
        record.unsupported,
        record.answer_sha256.lower(),
        record.judge,
        line,
    )


def current_judgements(
    path: Path, answers: dict[str, Answer], identity: JudgeIdentity
) -> dict[str, Judgement]:
    """The judgements in ``path`` of these very answers by this very judge, by id."""
    if not path.is_file():
        return {}
    out = {}
    judge = identity.to_json()
    for j in read_judgements(path, list(answers)):
        answer = answers.get(j.id)
        if answer is not None and j.answer_sha256 == answer.sha256 and j.judge == judge:
            out[j.id] = j
    return out


def resume_judgements(
    path: Path, answers: dict[str, Answer], identity: JudgeIdentity
) -> tuple[dict[str, Judgement], int]:
    """Keep the current judgements; rewrite the file without the rest (stale or torn)."""
    if not path.is_file():
        return {}, 0
    data = path.read_bytes()
    lines = [raw for raw in data.split(b"\n") if raw.strip()]
    torn = 0
    if lines and not data.endswith(b"\n"):  # a kill mid-write leaves a cut last line
        try:
            json.loads(lines[-1])
        except ValueError:
            lines, torn = lines[:-1], 1
    if torn:
        atomic_write(path, b"".join(raw + b"\n" for raw in lines))
    kept = current_judgements(path, answers, identity)
    dropped = len(lines) - len(kept)
    if dropped:
        atomic_write(path, encode_lines(j.to_json() for j in kept.values()))
    return kept, dropped + torn


def judgements_of(
    suite: SuiteFolder, arm: str, answers: dict[str, Answer]
) -> dict[str, list[Judgement]]:
    """Every judge's current judgement of each answer of ``arm``, for the rating page."""
    folder = suite.judgements_folder
    out: dict[str, list[Judgement]] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob(f"*/{arm}.jsonl")):
        for j in read_judgements(path, list(answers)):
            answer = answers.get(j.id)
            if answer is not None and j.answer_sha256 == answer.sha256:
                out.setdefault(j.id, []).append(j)
    return out


def disagreements(judgements: Sequence[Judgement], correct: bool) -> list[dict[str, Any]]:
    """What the page shows a rater after they rated: each judge that said otherwise, and why."""
    return [
        {
            "judge": str(j.judge.get("name", "?")),
            "correct": j.correct,
            "missing": [f.fact for f in j.facts if not f.present],
            "found": [{"fact": f.fact, "quote": f.quote} for f in j.facts if f.present],
        }
        for j in judgements
        if j.correct != correct
    ]
