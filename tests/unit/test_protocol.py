"""The harness protocol's readers: the result a harness gives back, and the task it is given.

A result is the Struct :class:`~flightdeck.arms.protocol.HarnessResult` (its citations the
answers file's ``Source``); each fault is named in the words the hand-written checks used
(pinned here word for word), the question's ``as_of`` checked after. The task reaches the
built-in agents through ``tests/cli/test_agent_task.py``; the runner's side of a result is
``tests/unit/test_runner.py`` (``FAILURES``) and ``tests/unit/test_trial_limits.py``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from flightdeck.arms.agents.llm import load_snapshot
from flightdeck.arms.agents.mcp import snapshot_value
from flightdeck.arms.protocol import HarnessResult, ProtocolError, check_result, decode_result
from flightdeck.arms.trial_output import collect_result
from flightdeck.errors import InputError
from flightdeck.suite.records import Question, Source

QUESTION = Question("q1", "?", "how-to", {"sdlc": "a" * 40}, ())
SHA = "ab" * 32
CUT = "{'uri': 5, 'sha256': 'abababababababababababababababababababababababababababa..."


def cited(uri: Any = "sdlc/a.md", sha256: Any = SHA, **more: Any) -> dict[str, Any]:
    return {"uri": uri, "sha256": sha256, **more}


def result(*citations: Any, **fields: Any) -> dict[str, Any]:
    return {"answer": "x", "citations": list(citations), **fields}


REFUSED = [
    pytest.param([1], "result must be a JSON object, got list", id="list"),
    pytest.param(None, "result must be a JSON object, got NoneType", id="null"),
    pytest.param({}, "result needs an 'answer' string", id="no-answer"),
    pytest.param({"answer": 1}, "result needs an 'answer' string", id="answer-int"),
    pytest.param({"answer": None}, "result needs an 'answer' string", id="answer-null"),
    pytest.param(
        {"answer": "x", "citations": {}},
        "result 'citations' must be a list of {uri, sha256}",
        id="citations-object",
    ),
    pytest.param(
        {"answer": "x", "citations": None},
        "result 'citations' must be a list of {uri, sha256}",
        id="citations-null",
    ),
    pytest.param(
        result("sdlc/a.md"), "each citation must be {uri, sha256}, got \"'sdlc/a.md'\"", id="bare"
    ),
    pytest.param(
        result({"sha256": "ab"}),
        "each citation must be {uri, sha256}, got \"{'sha256': 'ab'}\"",
        id="no-uri",
    ),
    pytest.param(
        result(cited(uri=5)), f'each citation must be {{uri, sha256}}, got "{CUT}"', id="uri-int"
    ),
    pytest.param(
        result(cited(title="A")),
        "each citation must be {uri, sha256}, got \"{'uri': 'sdlc/a.md', 'sha256': "
        "'ababababababababababababababababababababababa...\"",
        id="third-field",
    ),
    pytest.param(
        result(cited(uri="")), "citation '' is not <repo>/<path>[#L<a>[-L<b>]]", id="uri-empty"
    ),
    pytest.param(
        result(cited(uri="sdlc")),
        "citation 'sdlc' is not <repo>/<path>[#L<a>[-L<b>]]",
        id="no-path",
    ),
    pytest.param(
        result(cited(uri="sd lc/a.md")),
        "citation 'sd lc/a.md' is not <repo>/<path>[#L<a>[-L<b>]]",
        id="uri-space",
    ),
    pytest.param(
        result(cited(uri="sdlc/a.md#L" + "9" * 5000)),
        f"citation 'sdlc/a.md#L{'9' * 66}...' is not <repo>/<path>[#L<a>[-L<b>]]",
        id="uri-huge-span",
    ),
    pytest.param(
        result(cited(uri="sdlc/a.md#L4-L2")),
        "citation 'sdlc/a.md#L4-L2' has a span that ends before it starts",
        id="span",
    ),
    pytest.param(
        result(cited(uri="elsewhere/a.md")),
        "citation 'elsewhere/a.md' names repository 'elsewhere', outside the question's as_of "
        "(sdlc)",
        id="outside",
    ),
    pytest.param(
        result(cited(uri="sdlc/../a.md")),
        "citation 'sdlc/../a.md' has '..', '.' or an empty segment in its path",
        id="dotdot",
    ),
    pytest.param(
        result({"uri": "sdlc/a.md"}),
        "citation 'sdlc/a.md' needs a sha256 of 64 hex digits",
        id="no-sha",
    ),
    *(
        pytest.param(
            result(cited(), cited(sha256=digest)),
            "citation 'sdlc/a.md' needs a sha256 of 64 hex digits",
            id=f"sha-{name}",
        )
        for name, digest in [("null", None), ("short", "abc"), ("hex", "z" * 64), ("int", 5)]
    ),
    pytest.param(
        result(read="a"), "result 'read' must be a list of <repo>/<path> strings", id="read"
    ),
    pytest.param(
        result(read=[1]), "result 'read' must be a list of <repo>/<path> strings", id="read-item"
    ),
    pytest.param(
        result(usage=[1]), "result 'usage' must be an object of at most 32 counts", id="usage"
    ),
    *(
        pytest.param(
            result(usage={"input_tokens": count}),
            "usage 'input_tokens' must be a non-negative integer",
            id=f"count-{name}",
        )
        for name, count in [("negative", -1), ("float", 1.5), ("bool", True), ("text", "1")]
    ),
    pytest.param(
        result(usage={f"k{i}": 1 for i in range(33)}),
        "result 'usage' must be an object of at most 32 counts",
        id="usage-33",
    ),
    pytest.param(
        result(provenance="m"), "result 'provenance' must be a JSON object", id="provenance"
    ),
    pytest.param(
        result(provenance={"x": "y" * 20000}),
        "result 'provenance' is over 16 KiB",
        id="provenance-size",
    ),
    pytest.param(
        {"answer": "\ud800"},
        "result holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode",
        id="surrogate",
    ),
]


@pytest.mark.parametrize(("value", "message"), REFUSED)
def test_each_fault_of_a_result_is_named_in_one_line(value: Any, message: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        check_result(value, QUESTION)
    assert str(caught.value) == message


def test_a_valid_result_keeps_what_the_protocol_reads_and_ignores_the_rest() -> None:
    value = result(
        cited(uri="sdlc/a.md#L2-L4", sha256=SHA.upper()),
        cited(uri="https://wiki.example/a"),
        read=None,
        usage={"input_tokens": 10**30},
        provenance=None,
        debug="ignored",
    )
    got = check_result(value, QUESTION)
    assert got == HarnessResult(
        "x",
        (Source("sdlc/a.md#L2-L4", SHA), Source("https://wiki.example/a", SHA)),
        usage={"input_tokens": 10**30},
    )
    assert got.record("q1")["citations"][0] == {"uri": "sdlc/a.md#L2-L4", "sha256": SHA}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{"answer": "x", "answer": "y"}',
            "stdout is not the result JSON: it has a duplicate key 'answer' in one object",
            id="duplicate",
        ),
        pytest.param(
            "[" * 5000,
            "stdout is not the result JSON: it is JSON nested too deeply",
            id="deep",
        ),
        pytest.param(
            '{"answer": ' + "9" * 5000 + "}",
            "stdout is not the result JSON: it holds an integer of 5,000 digits (more than 4,300)",
            id="huge-integer",
        ),
    ],
)
def test_output_that_is_no_strict_json_is_named(text: str, message: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_result(text, "stdout")
    assert str(caught.value) == message


def test_the_runners_reader_names_a_bad_result_file(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text('{"answer": "x", "citations": [{"sha256": "ab"}]}')
    with pytest.raises(ProtocolError) as caught:
        collect_result(QUESTION, tmp_path, io.BytesIO(b""), 1 << 20)
    assert str(caught.value) == "each citation must be {uri, sha256}, got \"{'sha256': 'ab'}\""


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            b'{"n": ' + b"9" * 5000 + b"}",
            "holds an integer of 5,000 digits (more than 4,300); write a smaller number, or the "
            "number as a string",
            id="huge-integer",
        ),
        pytest.param(
            b'{"a": 1, "a": 2}',
            "duplicate key 'a' in one object; keep one (JSON readers disagree on which of two "
            "equal keys wins)",
            id="duplicate",
        ),
        pytest.param(b"[" * 5000, "JSON nested too deeply; fix the file", id="deep"),
    ],
)
def test_a_snapshot_file_that_is_bad_json_is_refused(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "snapshot.json"
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        load_snapshot(path)
    assert str(caught.value) == f"{path}: {message}"


@pytest.mark.parametrize("data", [b"name list\n", b"\xff\xfe"], ids=["text", "binary"])
def test_a_snapshot_file_that_is_no_json_is_kept_by_its_hash(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "snapshot.tar"
    path.write_bytes(data)
    assert set(load_snapshot(path)) == {"file", "sha256"}


@pytest.mark.parametrize(
    "text",
    ['{"n": ' + "9" * 5000 + "}", '{"a": 1, "a": 2}', "[" * 5000, "an index of docs"],
    ids=["huge-integer", "duplicate", "deep", "text"],
)
def test_a_servers_snapshot_that_is_no_strict_json_is_kept_as_its_text(text: str) -> None:
    assert snapshot_value(text) == text


def test_a_servers_snapshot_in_json_is_its_value() -> None:
    assert snapshot_value('{"index": "bm25"}') == {"index": "bm25"}
