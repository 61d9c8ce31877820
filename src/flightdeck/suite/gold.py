"""The gold set: questions and keys read together, with the rules between the two files.

Scoring, judging and sealing all need the pair, checked the same way; this is the one reader,
below the task and the judges so neither imports the other for it.
"""

from __future__ import annotations

from flightdeck.errors import InputError
from flightdeck.project import Suite
from flightdeck.suite.records import Key, Question, parse_source_uri, read_keys, read_questions


def load_suite_files(suite: Suite, *, sealed: bool | None) -> tuple[list[Question], list[Key]]:
    """Questions and keys, with the cross-file checks: same ids, sources within ``as_of``."""
    questions = read_questions(suite.questions)
    keys = read_keys(suite.keys, sealed=sealed)
    by_id = {q.id: q for q in questions}
    key_ids = {k.id for k in keys}
    for key in keys:
        question = by_id.get(key.id)
        if question is None:
            raise InputError(
                suite.keys,
                key.line,
                f"id {key.id!r} has no question in questions.jsonl; "
                "the two files need the same ids",
            )
        for source in key.valid_sources:
            parsed = parse_source_uri(source.uri)
            if parsed is None:  # opaque: matched as a whole string
                continue
            if parsed.repo not in question.as_of:
                raise InputError(
                    suite.keys,
                    key.line,
                    f"valid source {source.uri!r} names repository {parsed.repo!r}, which is "
                    f"not in the question's as_of ({', '.join(question.as_of)}); fix the uri",
                )
    for question in questions:
        if question.id not in key_ids:
            raise InputError(
                suite.questions,
                question.line,
                f"id {question.id!r} has no key in keys.jsonl; the two files need the same ids",
            )
    return questions, keys
