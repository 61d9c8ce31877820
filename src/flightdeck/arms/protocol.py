"""The harness protocol: what a trial gives a harness and what it must give back.

A harness is any command. For each question ``flightdeck experiment run`` starts it with:

- the question record ``{id, question, kind, as_of, scope}`` as JSON on stdin and in
  ``FLIGHTDECK_TASK`` (never the key);
- ``FLIGHTDECK_WORKSPACE``: a read-only folder holding ``<repo>/<path>`` for every file the
  question may read (its ``as_of`` commits, filtered by its ``scope``);
- ``FLIGHTDECK_RESULT``: a file path the harness may write its result to;
- ``FLIGHTDECK_TRACE``: a file path for the harness's own log (kept in the trial's trace).

It answers with one JSON object, in ``FLIGHTDECK_RESULT`` or on stdout (the whole of stdout,
or its last non-blank line)::

    {"answer": "...", "citations": [{"uri": "sdlc/docs/adr/0002.md#L3-L9", "sha256": "<hex>"}]}

``sha256`` is the hex SHA-256 of the bytes of the whole cited file as the harness read it.
The result may also list the files the harness read, ``"read": ["sdlc/docs/a.md", ...]``:
the trial's trace then says which (it is never part of the answer).
A citation must name a repository of the question's ``as_of`` (or be an absolute URL such as
``https://...``), and its path may not hold ``..``, ``.`` or empty segments.

Two optional fields are not part of the answer; the runner keeps them beside it:

- ``usage``: token counts of the trial, names to non-negative integers (a model harness
  reports ``input_tokens``, ``cached_tokens``, ``output_tokens``); the runs ledger records them
  and ``experiment run`` prints them per question;
- ``provenance``: a JSON object describing how the harness ran that is the same for every
  trial of an arm (its model, the documents it was given as ``knowledge_snapshot``, a prompt
  hash); the runner writes it into the arm's meta, and a trial whose provenance differs from
  the arm's earlier answers fails, so one arm never mixes two configurations.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from flightdeck.errors import InternalError, JSONProblem, ProtocolError
from flightdeck.files.strict_json import loads_strict
from flightdeck.suite.decoding import SURROGATE, Schema, first_refusal
from flightdeck.suite.explanations import either
from flightdeck.suite.problems import Problem
from flightdeck.suite.records import OPAQUE_RE, Question, Source, parse_source_uri

ENV_TASK = "FLIGHTDECK_TASK"
ENV_WORKSPACE = "FLIGHTDECK_WORKSPACE"
ENV_RESULT = "FLIGHTDECK_RESULT"
ENV_TRACE = "FLIGHTDECK_TRACE"

_MAX_QUOTED = 80
_MAX_USAGE_FIELDS = 32
_MAX_PROVENANCE_BYTES = 16 << 10

Count = Annotated[int, Meta(ge=0)]
Usage = Annotated[dict[str, Count], Meta(max_length=_MAX_USAGE_FIELDS)]


class HarnessResult(Struct, frozen=True):
    """What a harness gives back, as the protocol reads it: the field types are the rules.

    A citation is the answers file's :class:`~flightdeck.suite.schema.Source` (its uri and
    hash rules are the suite's); other fields a harness prints are ignored. What no type can
    hold is checked after: a citation within the question's ``as_of``, the provenance's size.
    """

    answer: str
    citations: tuple[Source, ...] = ()
    read: tuple[str, ...] | None = None  # files the harness says it read, if it says
    usage: Usage | None = None  # token counts, for the ledger and the summary
    provenance: dict[str, Any] | None = None  # the same for every trial; goes into the meta

    def record(self, question_id: str) -> dict[str, Any]:
        """The answers-file record for this result."""
        return {
            "id": question_id,
            "answer": self.answer,
            "citations": [{"uri": c.uri, "sha256": c.sha256} for c in self.citations],
        }


def task_record(question: Question) -> dict[str, Any]:
    """What a harness is told about a question: the question file's fields, nothing more."""
    return {
        "id": question.id,
        "question": question.question,
        "kind": question.kind,
        "as_of": dict(question.as_of),
        "scope": list(question.scope),
    }


def _quote(text: str) -> str:
    text = text.strip()
    shown = text if len(text) <= _MAX_QUOTED else text[: _MAX_QUOTED - 3] + "..."
    return repr(shown)


def read_task() -> dict[str, Any]:
    """The task a harness is given (the question record): ``FLIGHTDECK_TASK``, else stdin.

    The one reader of the task, for flightdeck's own agents, as strict as every reader of
    what a person or a harness gives (:func:`~flightdeck.files.strict_json.loads_strict`):
    an :class:`InputError` names where the task came from when it is missing, not JSON
    (a key given twice, a number too long for Python included), or lacks a ``question``
    string; ``as_of`` defaults to no repositories and must map repositories to commits.
    """
    import os
    import sys

    from flightdeck.errors import InputError

    source = ENV_TASK
    raw = os.environb.get(ENV_TASK.encode())
    if raw is None:
        source = "<stdin>"
        if sys.stdin.isatty():
            raise InputError(
                source, None, "no task; pipe the question record in, or pass --question"
            )
        raw = sys.stdin.buffer.read()
    try:
        task = loads_strict(raw)
    except JSONProblem as exc:
        if exc.kind == "syntax":
            message = f"the task is not JSON ({_syntax(exc)}); pass the question record as JSON"
        else:
            message = f"the task {_said(exc)}; {_TASK_FIX[exc.kind]}"
        raise InputError(source, None, message) from None
    if not isinstance(task, dict) or not isinstance(task.get("question"), str):
        raise InputError(source, None, 'the task needs a "question" string; pass the record')
    as_of = task.setdefault("as_of", {})
    if not isinstance(as_of, dict):
        raise InputError(source, None, 'the task\'s "as_of" must map repositories to commits')
    return task


# How to fix a task that is no strict JSON, by the kind of problem (syntax is said apart).
_TASK_FIX = {
    "encoding": "pass the question record as UTF-8",
    "bom": "pass the question record without a byte-order mark",
    "depth": "pass the question record as JSON",
    "number": "write a smaller number, or the number as a string",
    "duplicate": "keep one (JSON readers disagree on which of two equal keys wins)",
    "surrogate": "write valid Unicode",
}
# What a problem's words need before them to follow "it" or a noun.
_VERB = {"encoding": "is ", "depth": "is ", "duplicate": "has a "}


def _said(problem: JSONProblem) -> str:
    """A problem's words as a predicate: ``holds ...``, ``has a duplicate key ...``."""
    return _VERB.get(problem.kind, "") + problem.what


def _syntax(problem: JSONProblem) -> str:
    return problem.what.removeprefix("not JSON (").removesuffix(")")


def decode_result(text: str, where: str) -> Any:
    """The JSON value of a harness's output (the whole text, else its last non-blank line),
    decoded strictly: any refusal is a one-line :class:`ProtocolError`, never a crash."""
    stripped = text.strip()
    if not stripped:
        raise ProtocolError(f"{where} is empty; print the result JSON or write FLIGHTDECK_RESULT")
    last = stripped.splitlines()[-1].strip()
    problems: list[JSONProblem] = []
    for candidate in dict.fromkeys((stripped, last)):
        try:
            return loads_strict(candidate.encode("utf-8", "surrogatepass"))
        except JSONProblem as exc:
            problems.append(exc)
    # A log line before the result makes the whole a syntax error; say what the last one is.
    problem = next((p for p in problems if p.kind != "syntax"), problems[0])
    if problem.kind == "syntax":
        raise ProtocolError(f"{where} is not the result JSON ({_syntax(problem)}): {_quote(last)}")
    raise ProtocolError(f"{where} is not the result JSON: it {_said(problem)}")


def check_result(value: Any, question: Question) -> HarnessResult:
    """Validate a decoded result against the protocol and the question's ``as_of``.

    The result's Struct says what is wrong in the words of :data:`RESULT` (the first fault,
    field by field, as the suite readers say theirs); then each citation must name a
    repository of the question's ``as_of`` by a clean path, and the provenance be small.
    """
    if not isinstance(value, dict):
        raise ProtocolError(f"result must be a JSON object, got {type(value).__name__}")
    refusal = first_refusal(value, RESULT)
    if refusal is not None:
        message = refusal.message
        raise ProtocolError(f"result {message}" if message == SURROGATE else message)
    try:
        result = msgspec.convert(value, HarnessResult)
    except msgspec.ValidationError as exc:  # a refusal no field's walk found
        raise ProtocolError(f"result: {exc}; fix the result") from None
    if not RESULT.accepts([result]):
        raise InternalError("a rule of HarnessResult has no words")
    for citation in result.citations:
        check_citation_uri(citation.uri, question)
    provenance = result.provenance
    if provenance is not None and len(json.dumps(provenance)) > _MAX_PROVENANCE_BYTES:
        raise ProtocolError(f"result 'provenance' is over {_MAX_PROVENANCE_BYTES >> 10} KiB")
    lower = tuple(Source(c.uri, c.sha256.lower()) for c in result.citations)
    return msgspec.structs.replace(result, citations=lower)


# --- the words for what the result's Struct refuses, field by field ------------------------


def _citations(p: Problem) -> str | None:
    if not p.kind:
        return None  # only a surrogate: the result's
    if not p.path:
        return "result 'citations' must be a list of {uri, sha256}"
    entry = p.root[p.path[0]]
    uri = entry.get("uri") if isinstance(entry, dict) else None
    if not isinstance(uri, str) or (len(p.path) == 1 and p.detail != "missing field 'sha256'"):
        return f"each citation must be {{uri, sha256}}, got {_quote(repr(entry))}"
    if p.path[1:] == ("uri",):
        if p.kind == "check":
            return f"citation {_quote(uri)} has a span that ends before it starts"
        return f"citation {_quote(uri)} is not <repo>/<path>[#L<a>[-L<b>]]"
    return f"citation {_quote(uri)} needs a sha256 of 64 hex digits"


def _usage(p: Problem) -> str | None:
    if not p.kind:
        return None
    if not p.path:
        return f"result 'usage' must be an object of at most {_MAX_USAGE_FIELDS} counts"
    return f"usage {_quote(p.path[0])} must be a non-negative integer"


_ANSWER = "result needs an 'answer' string"
RESULT = Schema(
    HarnessResult,
    {
        "answer": either(lambda _: _ANSWER),
        "citations": _citations,
        "read": either(lambda _: "result 'read' must be a list of <repo>/<path> strings"),
        "usage": _usage,
        "provenance": either(lambda _: "result 'provenance' must be a JSON object"),
    },
    missing={"answer": _ANSWER},
)


def is_url(uri: str) -> bool:
    """An opaque citation (``scheme:...``, e.g. an https page), not a repository file."""
    return bool(OPAQUE_RE.match(uri))


def check_citation_uri(uri: str, question: Question) -> None:
    """A repository uri within the question's ``as_of``, or an opaque one."""
    if is_url(uri):
        return
    parsed = parse_source_uri(uri)
    if parsed is None:
        raise ProtocolError(f"citation {_quote(uri)} is not <repo>/<path>[#L<a>[-L<b>]]")
    repo, path = parsed.repo, parsed.path
    if repo not in question.as_of:
        allowed = ", ".join(sorted(question.as_of))
        raise ProtocolError(
            f"citation {_quote(uri)} names repository {repo!r}, outside the question's "
            f"as_of ({allowed})"
        )
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise ProtocolError(f"citation {_quote(uri)} has '..', '.' or an empty segment in its path")
    if parsed.start is not None and parsed.end is not None and parsed.end < parsed.start:
        raise ProtocolError(f"citation {_quote(uri)} has a span that ends before it starts")
