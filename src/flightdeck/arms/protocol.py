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
from dataclasses import dataclass
from typing import Any

from flightdeck.errors import JSONProblem, ProtocolError
from flightdeck.files.strict_json import loads_strict
from flightdeck.suite.records import OPAQUE_RE, SHA256_RE, Question, parse_source_uri

ENV_TASK = "FLIGHTDECK_TASK"
ENV_WORKSPACE = "FLIGHTDECK_WORKSPACE"
ENV_RESULT = "FLIGHTDECK_RESULT"
ENV_TRACE = "FLIGHTDECK_TRACE"

_MAX_QUOTED = 80
_MAX_USAGE_FIELDS = 32
_MAX_PROVENANCE_BYTES = 16 << 10


@dataclass(frozen=True)
class HarnessResult:
    answer: str
    citations: tuple[tuple[str, str], ...]  # (uri, sha256)
    read: tuple[str, ...] | None = None  # files the harness says it read, if it says
    usage: dict[str, int] | None = None  # token counts, for the ledger and the summary
    provenance: dict[str, Any] | None = None  # the same for every trial; goes into the meta

    def record(self, question_id: str) -> dict[str, Any]:
        """The answers-file record for this result."""
        return {
            "id": question_id,
            "answer": self.answer,
            "citations": [{"uri": uri, "sha256": sha} for uri, sha in self.citations],
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

    The one reader of the task, for flightdeck's own agents: an :class:`InputError` names
    where the task came from when it is missing, not JSON, or lacks a ``question`` string;
    ``as_of`` defaults to no repositories and must map repositories to commits.
    """
    import os
    import sys

    from flightdeck.errors import InputError

    source = ENV_TASK
    raw = os.environ.get(ENV_TASK)
    if raw is None:
        source = "<stdin>"
        if sys.stdin.isatty():
            raise InputError(
                source, None, "no task; pipe the question record in, or pass --question"
            )
        raw = sys.stdin.read()
    try:
        task = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, None, f"the task is not JSON ({exc.msg}); pass the question record as JSON"
        ) from None
    if not isinstance(task, dict) or not isinstance(task.get("question"), str):
        raise InputError(source, None, 'the task needs a "question" string; pass the record')
    as_of = task.setdefault("as_of", {})
    if not isinstance(as_of, dict):
        raise InputError(source, None, 'the task\'s "as_of" must map repositories to commits')
    return task


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
        detail = problem.what.removeprefix("not JSON (").removesuffix(")")
        raise ProtocolError(f"{where} is not the result JSON ({detail}): {_quote(last)}")
    raise ProtocolError(f"{where} is not the result JSON: it {problem.what}")


def check_result(value: Any, question: Question) -> HarnessResult:
    """Validate a decoded result against the protocol and the question's ``as_of``."""
    if not isinstance(value, dict):
        raise ProtocolError(f"result must be a JSON object, got {type(value).__name__}")
    if not isinstance(value.get("answer"), str):
        raise ProtocolError("result needs an 'answer' string")
    citations = value.get("citations", [])
    if not isinstance(citations, list):
        raise ProtocolError("result 'citations' must be a list of {uri, sha256}")
    checked = []
    for item in citations:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise ProtocolError(f"each citation must be {{uri, sha256}}, got {_quote(repr(item))}")
        uri, digest = item["uri"], item.get("sha256")
        check_citation_uri(uri, question)
        if not isinstance(digest, str) or not SHA256_RE.match(digest):
            raise ProtocolError(f"citation {_quote(uri)} needs a sha256 of 64 hex digits")
        checked.append((uri, digest.lower()))
    read = value.get("read")
    if read is not None and (
        not isinstance(read, list) or not all(isinstance(r, str) for r in read)
    ):
        raise ProtocolError("result 'read' must be a list of <repo>/<path> strings")
    usage = _check_usage(value.get("usage"))
    provenance = _check_provenance(value.get("provenance"))
    return HarnessResult(
        value["answer"],
        tuple(checked),
        None if read is None else tuple(read),
        usage,
        provenance,
    )


def _check_usage(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > _MAX_USAGE_FIELDS:
        raise ProtocolError(
            f"result 'usage' must be an object of at most {_MAX_USAGE_FIELDS} counts"
        )
    for name, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ProtocolError(f"usage {_quote(name)} must be a non-negative integer")
    return dict(value)


def _check_provenance(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ProtocolError("result 'provenance' must be a JSON object")
    if len(json.dumps(value)) > _MAX_PROVENANCE_BYTES:
        raise ProtocolError(f"result 'provenance' is over {_MAX_PROVENANCE_BYTES >> 10} KiB")
    return value


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
