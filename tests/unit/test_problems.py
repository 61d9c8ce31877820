"""One way to validate (#23): the Struct is the rule, msgspec says where it refuses, and the
words only say it.

``problems()`` is checked on hand-worked values (the place, msgspec's kind); the readers'
acceptance is held to the Struct's alone on generated records: a record has a message
exactly when msgspec refuses it, a rule its types carry fails, or it holds a lone surrogate.
"""

from __future__ import annotations

import ast
import inspect
from typing import Annotated, Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import Meta

from flightdeck.files.strict_json import has_lone_surrogate
from flightdeck.suite import explanations
from flightdeck.suite.decoding import NonBlank, Schema, first_refusal
from flightdeck.suite.explanations import ANSWER, KEY, LABEL, MANIFEST, META, QUESTION
from flightdeck.suite.problems import problems
from flightdeck.suite.schema import Commit, Glob, RepoName, Source, Uri

AS_OF = Annotated[dict[RepoName, Commit], Meta(min_length=1)]
C = "a" * 40


@pytest.mark.parametrize(
    ("value", "type_", "expected"),
    [
        pytest.param(3, NonBlank, [("type", (), False)], id="not-a-string"),
        pytest.param(" ", NonBlank, [("pattern", (), False)], id="blank"),
        pytest.param("\ud800", NonBlank, [("", (), False)], id="surrogate-only"),
        pytest.param([], Annotated[tuple[NonBlank, ...], Meta(min_length=1)], [("length", (), False)], id="too-short"),
        pytest.param(["a", " ", 3], tuple[NonBlank, ...], [("pattern", (1,), False), ("type", (2,), False)], id="items-in-order"),
        pytest.param({"a/b": "x"}, AS_OF, [("pattern", ("a/b",), True), ("pattern", ("a/b",), False)], id="key-before-value"),
        pytest.param({"s": C, "t": "0"}, AS_OF, [("pattern", ("t",), False)], id="the-bad-value"),
        pytest.param(["docs/[z-a]"], tuple[Glob, ...], [("check", (0,), False)], id="a-check-the-type-carries"),
        pytest.param("sdlc/a.md#L9-L3", Uri, [("check", (), False)], id="span-backwards"),
        pytest.param([{"uri": "a.md"}], tuple[Source, ...], [("shape", (0,), False), ("pattern", (0, "uri"), False)], id="shape-then-fields"),
        pytest.param([{"uri": "x/y", "sha256": "b" * 64}], tuple[Source, ...], [], id="valid"),
    ],
)  # fmt: skip
def test_problems_name_each_refused_place_in_reading_order(
    value: Any, type_: Any, expected: list[tuple[str, tuple[Any, ...], bool]]
) -> None:
    found = [(p.kind, p.path, p.at_key) for p in problems(value, type_)]
    assert found == expected


def test_a_problem_carries_msgspec_own_words() -> None:
    (problem,) = problems({"s": "0"}, AS_OF)
    assert problem.detail == f"Expected `str` matching regex {Commit.__metadata__[0].pattern!r}"
    assert problem.value == "0"
    assert problem.root == {"s": "0"}


def test_the_words_call_no_validator() -> None:
    """explanations.py words refusals; it never asks msgspec (or a regex) whether a value is good."""
    tree = ast.parse(inspect.getsource(explanations))
    called = {
        ast.unparse(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    validators = {"msgspec.convert", "msgspec.json.decode", "msgspec.json.Decoder"}
    assert called & validators == set()
    assert "fails" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


# --- acceptance is the Struct's alone ---------------------------------------------------

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from(
        ["", " ", "q1", "x/y", "how-to", "trivia", "a" * 40, "b" * 64, "sdlc/a.md#L3-L1",
         "docs/[z-a]", "docs/**", "2026-12-01", "2026-13-45", "\ud800", "questions.jsonl",
         "keys.jsonl", "person", "https://x"]
    ),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["uri", "sha256", "sdlc", "a/b", "keys.jsonl"]), inner, max_size=2),
    max_leaves=4,
)  # fmt: skip
SCHEMAS = {
    "question": QUESTION,
    "key": KEY,
    "answer": ANSWER,
    "label": LABEL,
    "manifest": MANIFEST,
    "meta": META,
}
VALID = {
    "question": {"id": "q", "question": "Why?", "kind": "how-to", "as_of": {"s": C}, "scope": []},
    "key": {
        "id": "q",
        "answer_key": "x",
        "required_facts": ["f"],
        "valid_sources": [{"uri": "s/a.md", "sha256": "b" * 64}],
    },
    "answer": {"id": "q", "answer": "", "citations": []},
    "label": {"id": "q", "rater": "ada", "correct": True},
    "manifest": {
        "suite": "s",
        "sealed_at": "t",
        "sha256": {"questions.jsonl": "b" * 64, "keys.jsonl": "c" * 64},
        "flightdeck_version": "1",
    },
    "meta": {"runner": "person", "by": "a", "date": "2026-12-01", "model": "m", "knowledge_snapshot": None},
}  # fmt: skip


def _struct_accepts(obj: dict[str, Any], schema: Schema[Any]) -> bool:
    try:
        record = msgspec.convert(obj, schema.cls)
    except msgspec.ValidationError:
        return False
    except UnicodeEncodeError:  # msgspec refused it but could not quote a lone surrogate
        return False
    nulls = any(obj.get(name, 0) is None for name in schema.not_null)
    return schema.accepts([record]) and not nulls and not has_lone_surrogate(obj)


@pytest.mark.slow  # a property test over 600 cases
@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(SCHEMAS)), st.data())
def test_a_record_has_a_message_exactly_when_the_struct_refuses_it(
    which: str, data: st.DataObject
) -> None:
    schema = SCHEMAS[which]
    obj = dict(VALID[which])
    names = [f.encode_name for f in schema.file_fields]
    for _ in range(data.draw(st.integers(1, 2))):
        name = data.draw(st.sampled_from([*names, "extra"]))
        if data.draw(st.booleans()):
            obj.pop(name, None)
        else:
            obj[name] = data.draw(VALUES)
    refused = first_refusal(obj, schema)
    message = None if refused is None else refused.message
    assert (message is None) == _struct_accepts(obj, schema), message
