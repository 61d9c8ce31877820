"""A JSON Lines file is decoded in one call (#23), and still read as one record per line.

msgspec's ``Decoder.decode_lines`` takes any white space between values, so two records on
one line, or one record over two lines, would decode as well as one per line. The reader
must never take a bad line as part of its neighbours: whatever the file, the records and
their line numbers, or the first bad line, are those of a walk that decodes each non-blank
line on its own (the oracle here, msgspec's plain ``decode`` a line, written in this file).
Blank lines (empty or white space), CRLF endings and a missing last newline keep the
numbers right.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.suite.citations import span_in_order, spans_in_order
from flightdeck.suite.columns import Columns, accepts, colons_agree
from flightdeck.suite.decoding import decode_lines
from flightdeck.suite.explanations import ANSWER, KEY, LABEL, QUESTION, UNSEALED_KEY
from flightdeck.suite.schema import Answer, Label

PATH = Path("answers.jsonl")
SHA = "ab" * 32


def answer(i: int) -> str:
    cite = {"uri": f"sdlc/d/{i}.md#L1-L{i + 1}", "sha256": SHA}
    return json.dumps({"id": f"q{i}", "answer": f"a {i}", "citations": [cite]})


def oracle(data: bytes, cls: type[msgspec.Struct]) -> tuple[list[tuple[str, int]], int | None]:
    """(id, line) of each record a line-by-line walk accepts, and its first bad line."""
    decoder = msgspec.json.Decoder(cls)
    good: list[tuple[str, int]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = decoder.decode(raw)
        except msgspec.DecodeError:
            return good, number
        good.append((record.id, number))  # type: ignore[attr-defined]
    return good, None


def read(data: bytes, schema=ANSWER) -> tuple[list[tuple[str, int]], int | None]:  # type: ignore[no-untyped-def]
    records, error = decode_lines(PATH, data, schema)
    return [(r.id, r.line) for r in records], None if error is None else error.line


A0, A1, A2, A3 = (answer(i) for i in range(4))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"{A0}\n{A1}\n{A2}\n", id="plain"),
        pytest.param(f"{A0}\n{A1}\n{A2}", id="no-last-newline"),
        pytest.param(f"{A0}\r\n{A1}\r\n{A2}\r\n", id="crlf"),
        pytest.param(f"\n{A0}\n\n  \t\n{A1}\r\n \r\n{A2}\n\n", id="blank-lines"),
        pytest.param(f"{A0}\n{A1} {A2}\n{A3}\n", id="two-records-on-one-line"),
        pytest.param(f"{A0}\n{A1[:20]}\n{A1[20:]}\n{A2}\n", id="one-record-over-two-lines"),
        # as many records as lines: one line holds two, another holds half of one
        pytest.param(f"{A0} {A1}\n{A2[:30]}\n{A2[30:]}\n", id="the-counts-make-up"),
        pytest.param(f"{A0}\n{A1[:-1]}\n}}\n{A2}\n", id="a-closing-brace-alone"),
        pytest.param(f"{A0}\n{{\n{A1[1:]}\n", id="an-opening-brace-alone"),
        pytest.param(f"{A0}\n\x0c\n{A1}\n", id="form-feed-line"),
        pytest.param(f"{A0}\n{A1}\x0b\n", id="vertical-tab-after"),
        pytest.param(
            f'{A0}\n{{"id": "q9", "answer": "x", "citations": []}} \n', id="trailing-space"
        ),
        pytest.param(f'{A0}\n{{"id": "q9", "answer": 3, "citations": []}}\n{A1}\n', id="bad-type"),
        pytest.param("", id="empty"),
        pytest.param("\n \n", id="only-blank"),
    ],
)
def test_records_and_lines_are_those_of_a_walk_line_by_line(text: str) -> None:
    data = text.encode()
    assert read(data) == oracle(data, Answer)


PIECES = st.sampled_from(["record", "two", "split", "blank", "white", "crlf", "bad"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(PIECES, st.integers(1, 60)), max_size=12), st.booleans())
def test_no_file_makes_a_line_part_of_its_neighbours(
    pieces: list[tuple[str, int]], last_newline: bool
) -> None:
    lines: list[str] = []
    for i, (kind, cut) in enumerate(pieces):
        record = answer(i)
        if kind == "record":
            lines.append(record)
        elif kind == "two":
            lines.append(f"{record} {answer(100 + i)}")
        elif kind == "split":  # cut anywhere, the two halves on their own lines
            lines += [record[:cut], record[cut:]]
        elif kind == "blank":
            lines.append("")
        elif kind == "white":
            lines.append(" \t ")
        elif kind == "crlf":
            lines.append(record + "\r")
        else:
            lines.append(record.replace('"answer"', '"answer": 1, "x"', 1))
    data = ("\n".join(lines) + ("\n" if last_newline else "")).encode()
    assert read(data) == oracle(data, Answer)


def test_labels_keep_their_lines_with_crlf_and_blank_lines() -> None:
    rows = [json.dumps({"id": f"q{i}", "rater": "ada", "correct": i % 2 == 0}) for i in range(5)]
    data = ("\r\n".join(rows[:2]) + "\r\n\r\n" + "\r\n".join(rows[2:]) + "\r\n").encode()
    assert read(data, LABEL) == oracle(data, Label)
    assert [line for _, line in read(data, LABEL)[0]] == [1, 2, 4, 5, 6]


URIS = st.one_of(
    st.builds(
        "{}/{}#L{}-L{}".format,
        st.sampled_from(["sdlc", "app"]),
        st.sampled_from(["a.md", "d/x-Ly.md", "b:c.md"]),
        st.integers(1, 10**18 - 1),
        st.integers(1, 10**18 - 1),
    ),
    st.builds("{}/a.md#L{}".format, st.sampled_from(["sdlc", "x"]), st.integers(1, 99)),
    st.sampled_from(["sdlc/a.md", "https://w.example/p#L9-L3", "urn:x\n#L5-L2", "s/a-L.md"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(URIS, max_size=8))
def test_spans_in_order_at_once_is_the_rule_uri_by_uri(uris: list[str]) -> None:
    assert spans_in_order(uris) == all(map(span_in_order, uris))


def _repeats_a_key(text: str) -> bool:
    """The oracle: the standard json module, told to refuse an object with a key twice."""

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError("repeated")
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return True
    return False


LABEL_FIELDS = st.fixed_dictionaries(
    {"id": st.sampled_from(["q1", "unsupported", "correct"]), "rater": st.just("ada")},
    optional={
        "unsupported": st.sampled_from([[], ["s/a.md"], ["s/a.md#L1-L2"]]),
        "answer_sha256": st.sampled_from([None, SHA]),
        "time": st.just("2026-01-01T00:00:00Z"),
        "facts": st.sampled_from([[], [True, False]]),
    },
)


@st.composite
def label_lines(draw: st.DrawFn) -> str:
    """A label line, maybe with one of its keys given twice (either value last)."""
    record = {**draw(LABEL_FIELDS), "correct": draw(st.booleans())}
    items = [f"{json.dumps(k)}{draw(st.sampled_from([':', ': ', ' :']))}{json.dumps(v)}"
             for k, v in record.items()]  # fmt: skip
    if draw(st.booleans()):
        again = draw(st.sampled_from(sorted(record)))
        value = draw(st.sampled_from([record[again], [], None, "x", True]))
        if again in ("unsupported", "facts") and not isinstance(value, list):
            value = []
        items.insert(draw(st.integers(0, len(items))), f'"{again}": {json.dumps(value)}')
    return "{" + ", ".join(items) + "}"


@settings(max_examples=400, deadline=None)
@given(st.lists(label_lines(), min_size=1, max_size=6))
def test_a_repeated_key_is_refused_on_its_line_without_a_second_decode(lines: list[str]) -> None:
    data = "\n".join(lines).encode()
    records, error = decode_lines(PATH, data, LABEL)
    repeated = [n for n, line in enumerate(lines, start=1) if _repeats_a_key(line)]
    if repeated:
        assert error is not None
        assert error.line == repeated[0]
        assert "duplicate key" in error.message
    elif error is not None:  # a repeat is the only fault these lines can have but a value
        assert "duplicate key" not in error.message


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(f'{{"id": "q1", "answer": "a", "citations": [{{"uri": "s/a.md", "sha256": "{SHA}", "sha256": "{SHA}"}}]}}', id="in-a-citation"),
        pytest.param('{"id": "q1", "id": "q1", "answer": "a", "citations": []}', id="top-level"),
        pytest.param('{"id": "q1", "answer": "a\\u003a", "citations": [], "answer": "b"}', id="beside-an-escaped-colon"),
    ],
)  # fmt: skip
def test_an_answer_repeating_a_key_at_any_depth_is_refused(line: str) -> None:
    data = f"{A0}\n{line}\n{A1}\n".encode()
    _, error = decode_lines(PATH, data, ANSWER)
    assert error is not None
    assert error.line == 2
    assert "duplicate key" in error.message


# --- the colon count (#23): never agrees with a repeat, and agrees on a plainly written file


CANARY_HEX = "FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-" + "0f" * 16
TEXTS = st.sampled_from(["q1", "q:2", 'x"unsupported":', 'a\\"id":b', "unsupported", "é: é"])
URI = st.sampled_from(["s/a.md", "s/b:c.md#L1-L2", "https://w.example/p:q", "urn:x:y"])
SOURCE = st.fixed_dictionaries({"uri": URI, "sha256": st.just(SHA)})
UNHASHED = st.fixed_dictionaries({"uri": URI}, optional={"sha256": st.just(SHA)})
TIME = "2026-01-01T00:00:00Z"
# each schema's fields: required, then optional (drawn with a value at the default often)
RECORDS = {
    "label": st.fixed_dictionaries(
        {"id": TEXTS, "rater": TEXTS, "correct": st.booleans()},
        optional={
            "unsupported": st.one_of(st.just([]), st.lists(URI, max_size=2)),
            "answer_sha256": st.sampled_from([None, SHA]),
            "time": st.sampled_from([TIME, TIME, None]),  # null: refused, as a repeat is
            "facts": st.sampled_from([[], [True, False]]),
        },
    ),
    "key": st.fixed_dictionaries(
        {
            "id": TEXTS,
            "answer_key": TEXTS,
            "required_facts": st.lists(TEXTS, min_size=1, max_size=2),
            "valid_sources": st.lists(SOURCE, min_size=1, max_size=2),
        },
        optional={"canary": st.sampled_from([None, CANARY_HEX])},
    ),
    "unsealed": st.fixed_dictionaries(
        {
            "id": TEXTS,
            "answer_key": TEXTS,
            "required_facts": st.lists(TEXTS, min_size=1, max_size=2),
            "valid_sources": st.lists(UNHASHED, min_size=1, max_size=2),
        },
        optional={"canary": st.sampled_from([None, CANARY_HEX])},
    ),
    "question": st.fixed_dictionaries(
        {
            "id": TEXTS,
            "question": TEXTS,
            "kind": st.sampled_from(["how-to", "blocker"]),
            "as_of": st.dictionaries(
                st.sampled_from(["sdlc", "a:b", "id"]), st.just("c" * 40), min_size=1
            ),
            "scope": st.lists(st.sampled_from(["src/**", "a:b/*"]), max_size=2),
        }
    ),
    "answer": st.fixed_dictionaries(
        {
            "id": TEXTS,
            "answer": st.one_of(TEXTS, st.just("")),
            "citations": st.lists(SOURCE, max_size=2),
        }
    ),
}
SCHEMAS = {
    "label": LABEL,
    "key": KEY,
    "unsealed": UNSEALED_KEY,
    "question": QUESTION,
    "answer": ANSWER,
}
# how a key is written: plainly, with a space before its colon, or its first letter escaped
SPELLINGS = st.sampled_from(["plain", "plain", "plain", "space", "escaped"])


def _key(name: str, spelling: str) -> str:
    if spelling == "escaped":
        return f'"\\u{ord(name[0]):04x}{name[1:]}":'
    return f"{json.dumps(name)}{' :' if spelling == 'space' else ':'}"


@st.composite
def _object(draw: st.DrawFn, obj: dict[str, object], repeat: bool) -> tuple[str, bool]:
    """``obj`` written with drawn key spellings, its keys in a drawn order, maybe one given
    twice (at this depth or in a nested object); and whether every key is written plainly."""
    plain = True
    items = []
    for name, value in obj.items():
        spelling = draw(SPELLINGS)
        plain = plain and spelling == "plain"
        if isinstance(value, dict) or (
            isinstance(value, list) and value and isinstance(value[0], dict)
        ):
            inner = [value] if isinstance(value, dict) else value
            texts = []
            for one in inner:
                text, inner_plain = draw(_object(one, repeat and draw(st.booleans())))
                texts.append(text)
                plain = plain and inner_plain
            written = texts[0] if isinstance(value, dict) else "[" + ", ".join(texts) + "]"
        else:
            written = json.dumps(value)
        items.append(_key(name, spelling) + written)
    items = draw(st.permutations(items))
    if repeat and obj and draw(st.booleans()):
        again = draw(st.sampled_from(sorted(obj)))
        items.insert(
            draw(st.integers(0, len(items))), _key(again, "plain") + json.dumps(obj[again])
        )
    return "{" + ", ".join(items) + "}", plain


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.data(), st.sampled_from(sorted(RECORDS)))
def test_the_colons_never_agree_with_a_repeated_key(data: st.DataObject, kind: str) -> None:
    schema = SCHEMAS[kind]
    objs = data.draw(st.lists(RECORDS[kind], min_size=1, max_size=5))
    drawn = [data.draw(_object(obj, data.draw(st.booleans()))) for obj in objs]
    text = "\n".join(line for line, _ in drawn).encode()
    try:
        records = schema.decoder.decode_lines(text)
    except msgspec.ValidationError:
        return  # a value its field refuses: never counted
    columns = Columns(records)
    assert accepts(schema.rules, columns)
    agree = colons_agree(text, columns, in_file=schema.file_fields, not_null=schema.not_null)
    repeated = any(_repeats_a_key(line) for line, _ in drawn)
    nulled = any(obj.get(name, 0) is None for obj in objs for name in schema.not_null)
    if repeated or nulled:
        assert not agree
    elif all(plain for _, plain in drawn):
        assert agree  # the fast path: a plain file needs no closer look


KEY_RECORD = {
    "id": "q1",
    "answer_key": "k",
    "required_facts": ["f"],
    "valid_sources": [{"uri": "s/a.md", "sha256": SHA}],
}
LABEL_RECORD = {"id": "q1", "rater": "ada", "correct": True}
LEFT_AT_DEFAULT = {  # a field with a default a file may give: its default as written
    "label-unsupported": (LABEL, "unsupported", "[]", LABEL_RECORD),
    "label-sha256": (LABEL, "answer_sha256", "null", LABEL_RECORD),
    "key-canary": (KEY, "canary", "null", KEY_RECORD),
}


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(LEFT_AT_DEFAULT)),
    st.lists(
        st.sampled_from(["given", "left-out", "twice", "other-key-twice"]), min_size=1, max_size=8
    ),
)
def test_a_default_given_twice_on_a_line_is_seen_beside_lines_that_leave_it_out(
    case: str, lines: list[str]
) -> None:
    """The records at a field's default do not say which lines gave it: the file's text must."""
    schema, name, default, record = LEFT_AT_DEFAULT[case]
    texts = []
    for i, how in enumerate(lines):
        body = json.dumps({**record, "id": f"q{i}"})[:-1]
        given_once = f', "{name}": {default}'
        texts.append(
            {
                "given": body + given_once,
                "left-out": body,
                "twice": body + given_once * 2,
                "other-key-twice": body + f', "id": "q{i}"',
            }[how]
            + "}"
        )
    data = "\n".join(texts).encode()
    records = schema.decoder.decode_lines(data)
    columns = Columns(records)
    agree = colons_agree(data, columns, in_file=schema.file_fields, not_null=schema.not_null)
    assert agree == ("twice" not in lines and "other-key-twice" not in lines)


class _Note(msgspec.Struct, forbid_unknown_fields=True):
    note: str | None = None


class _Nested(msgspec.Struct, forbid_unknown_fields=True):  # "note": also a nested record's key
    id: str
    inner: tuple[_Note, ...] = ()
    note: str | None = None


class _Tagged(msgspec.Struct, forbid_unknown_fields=True):  # a dict's keys may be any name
    id: str
    inner: dict[str, str | None] = {}
    note: str | None = None


class _Loose(msgspec.Struct):  # unknown fields skipped, so a key may be anything
    id: str
    inner: tuple[_Note, ...] = ()
    note: str | None = None


class _Opaque(msgspec.Struct, forbid_unknown_fields=True):  # Any is not counted: looked at closer
    id: str
    inner: Any = ()
    note: str | None = None


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([_Nested, _Tagged, _Loose, _Opaque]),
    st.lists(
        st.tuples(
            st.sampled_from(
                ["", ', "note": null', ', "note": "a:b"', ', "note": null, "note": null']
            ),
            st.booleans(),  # a nested "note"
            st.booleans(),  # "id" given twice
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_a_key_name_shared_with_a_nested_place_is_not_taken_for_the_field(
    cls: type[msgspec.Struct], lines: list[tuple[str, bool, bool]]
) -> None:
    texts = []
    for i, (note, nested, id_twice) in enumerate(lines):
        inner = ""
        if nested:
            inner = ', "inner": {"note": "x"}' if cls is _Tagged else ', "inner": [{"note": "x"}]'
        again = f', "id": "q{i}"' if id_twice else ""
        texts.append(f'{{"id": "q{i}"{inner}{note}{again}}}')
    data = "\n".join(texts).encode()
    columns = Columns(msgspec.json.Decoder(cls).decode_lines(data))
    in_file = msgspec.structs.fields(cls)
    agree = colons_agree(data, columns, in_file=in_file, not_null=())
    counted = cls is not _Opaque or not any(nested for _, nested, _ in lines)  # Any at its default
    assert agree == (not any(map(_repeats_a_key, texts)) and counted)
