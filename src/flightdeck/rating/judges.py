"""Judges: an answer's correctness from its required facts, written beside the people's labels.

Two kinds: ``facts`` (built in, offline, below) and ``llm`` (:mod:`flightdeck.rating.judge_llm`).
:func:`run_judge` picks the kind params.yaml declares and runs it over arms; what a judge says
and the files that keep it are :mod:`flightdeck.rating.judgements`. Runs resume: each
judgement is appended and fsynced as it is made, so a killed run loses at most the answer it
was judging.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError, JudgeFailed
from flightdeck.files.jsonl import append_jsonl, locked_folder
from flightdeck.params.arm_names import check_arm_name
from flightdeck.params.sections import JudgeSpec
from flightdeck.project.names import PARAMS_FILE
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.rating.judgements import (
    FactVerdict,
    JudgeFn,
    JudgeIdentity,
    Judgement,
    Verdict,
    judgements_path,
    resume_judgements,
)
from flightdeck.suite.records import Answer, Key, Question

# Bump when the facts judge's normalisation changes: it is part of the judge's identity, so a
# calibration made under older rules no longer vouches for the judge.
FACTS_RULES = "facts-v1: NFKC, casefold, words split at punctuation, Porter2 stems, in order"


def judge_identity(spec: JudgeSpec) -> JudgeIdentity:
    """What a calibration holds for: kind, model, the prompt's sha256, temperature, rules."""
    from flightdeck.files.jsonl import sha256_bytes

    if spec.kind == "facts":
        return JudgeIdentity(
            name=spec.name,
            kind="facts",
            model=None,
            prompt_sha256=None,
            temperature=None,
            rules=FACTS_RULES,
        )
    assert spec.prompt is not None  # params/sections.py requires it for an llm judge
    prompt = spec.prompt
    if not prompt.is_file():
        raise InputError(prompt, None, f"prompt of judge {spec.name!r} not found; check prompt:")
    return JudgeIdentity(
        name=spec.name,
        kind="llm",
        model=spec.model,
        prompt_sha256=sha256_bytes(prompt.read_bytes()),
        temperature=spec.temperature,
        rules=None,
    )


# --- the facts judge ----------------------------------------------------------------------

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(stem, start, end) of each word of ``text``, offsets into ``text`` itself.

    Each word is NFKC-normalised and case-folded before stemming, so a full-width or
    ligatured spelling, another case, or punctuation and spacing between the words do
    not matter; the offsets still point at the original characters, for the quote.
    """
    stem = _stemmer().stemWord
    out = []
    for match in _WORD.finditer(text):
        folded = unicodedata.normalize("NFKC", match.group()).casefold()
        for part in _WORD.findall(folded):  # NFKC may split a character into several words
            out.append((stem(part), match.start(), match.end()))
    return out


def find_fact(fact: str, answer: str) -> FactVerdict:
    """Whether ``answer`` states ``fact``: its words, normalised, in order and adjacent.

    "Provider keys rotated in one place" is present in "the provider key is rotated in one
    place"? No: "is" sits between. In "provider keys, rotated in one place!" it is. The rule
    is deliberately literal (a person's paraphrase is not found); calibration says how far
    that carries.
    """
    wanted = [t[0] for t in _tokens(fact)]
    if not wanted:
        return FactVerdict(fact, False, None)
    words = _tokens(answer)
    n = len(wanted)
    for i in range(len(words) - n + 1):
        if all(words[i + j][0] == wanted[j] for j in range(n)):
            return FactVerdict(fact, True, answer[words[i][1] : words[i + n - 1][2]])
    return FactVerdict(fact, False, None)


def facts_judge(question: Question, key: Key, answer: Answer) -> Verdict:
    """Correct when every required fact is present; flags no citation (it reads none)."""
    facts = tuple(find_fact(fact, answer.answer) for fact in key.required_facts)
    return Verdict(all(f.present for f in facts), facts, ())


# --- running a judge over arms ----------------------------------------------------------


@dataclass(frozen=True)
class JudgeRun:
    arm: str
    path: Path
    answers: int
    kept: int  # already judged, by this judge, of these answers
    judged: int  # judged now
    dropped: int  # stale lines removed (a changed answer or judge, a line cut by a kill)
    failed: tuple[str, ...]  # ids the judge gave no usable verdict for (rerun to retry)


def judge_arm(
    suite: SuiteFolder,
    spec: JudgeSpec,
    arm: str,
    *,
    questions: Sequence[Question],
    keys: dict[str, Key],
    answers: dict[str, Answer],
    judge_fn: JudgeFn,
    on_progress: Callable[[str], None] | None = None,
) -> JudgeRun:
    """Judge every answer of ``arm`` not yet judged by this judge, one fsynced line each.

    The judge's folder is locked for the run, so two runs of one judge never interleave.
    """
    identity = judge_identity(spec)
    path = judgements_path(suite, spec.name, arm)
    with locked_folder(path.parent):
        kept, dropped = resume_judgements(path, answers, identity)
        judged, failed = 0, []
        for question in questions:
            answer = answers.get(question.id)
            if answer is None or question.id in kept:
                continue
            try:
                verdict = judge_fn(question, keys[question.id], answer)
            except JudgeFailed as exc:
                failed.append(question.id)
                if on_progress:
                    on_progress(f"{arm} {question.id}: no verdict ({exc})")
                continue
            record = Judgement(
                question.id,
                verdict.correct,
                verdict.facts,
                verdict.unsupported,
                answer.sha256,
                identity.to_json(),
            )
            append_jsonl(path, record.to_json())
            judged += 1
            if on_progress:
                on_progress(f"{arm} {question.id}: {'correct' if verdict.correct else 'incorrect'}")
    return JudgeRun(arm, path, len(answers), len(kept), judged, dropped, tuple(failed))


def resolve_judge(params: Any, name: str) -> JudgeSpec:
    """The judge params.yaml declares under ``name``, or an InputError listing those it does."""
    spec: JudgeSpec | None = params.judges.get(name)
    if spec is None:
        declared = ", ".join(sorted(params.judges)) or "none"
        raise InputError(
            params.root / PARAMS_FILE,
            None,
            f"no judge {name!r} under judges: (declared: {declared}); declare it, e.g. "
            f"judges: {{{name}: {{kind: facts}}}}",
        )
    return spec


def run_judge(
    suite: SuiteFolder,
    *,
    params: Any,
    judge: str,
    arms: Sequence[str],
    judge_fn: JudgeFn | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> list[JudgeRun]:
    """Judge each arm's answers on a sealed suite; ``judge_fn`` replaces the declared judge."""
    from flightdeck.suite.records import Canaries, load_suite_files, read_answers

    if not arms:
        raise InputError("--arm", None, "name at least one arm to judge")
    spec = resolve_judge(params, judge)
    suite = suite.opened()
    suite.require_sealed()
    questions, keys = load_suite_files(suite, canaries=Canaries.REQUIRED)
    keys_by_id = {k.id: k for k in keys}
    loaded = {}
    for arm in arms:
        check_arm_name(arm)
        if not suite.answers(arm).is_file():
            raise InputError(
                suite.answers(arm), None, f"no answers for arm {arm!r}; check the name"
            )
        loaded[arm] = {a.id: a for a in read_answers(suite.answers(arm), [q.id for q in questions])}
    close: Callable[[], None] | None = None
    if judge_fn is None:
        if spec.kind == "facts":
            judge_fn = facts_judge
        else:
            from flightdeck.rating.judge_llm import LlmJudge

            llm = LlmJudge(spec)
            judge_fn, close = llm, llm.close
    try:
        return [
            judge_arm(
                suite,
                spec,
                arm,
                questions=questions,
                keys=keys_by_id,
                answers=answers,
                judge_fn=judge_fn,
                on_progress=on_progress,
            )
            for arm, answers in loaded.items()
        ]
    finally:
        if close is not None:
            close()
