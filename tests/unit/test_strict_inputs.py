"""The strict decoder and the inputs it guards (#25): hand-worked cases, exact messages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_json, read_jsonl
from flightdeck.files.strict_json import JSONProblem, loads_strict
from flightdeck.params import load_params
from flightdeck.suite.records import Canaries, read_keys, read_labels, read_meta, read_questions

C = "c" * 40
S = "a" * 64
Q = {"id": "q1", "question": "Why?", "kind": "how-to", "as_of": {"sdlc": C}, "scope": []}
K = {
    "id": "q1",
    "answer_key": "A",
    "required_facts": ["f"],
    "valid_sources": [{"uri": "sdlc/a.md", "sha256": S}],
}
DUPLICATE = "keep one (JSON readers disagree on which of two equal keys wins)"


@pytest.mark.parametrize(
    ("data", "kind", "what"),
    [
        pytest.param(b'{"a": 1, "a": 2}', "duplicate", "duplicate key 'a' in one object", id="top"),
        pytest.param(
            b'{"a": [{"b": {"c": 1, "c": 1}}]}',
            "duplicate",
            "duplicate key 'c' in one object",
            id="deep-and-equal-values",
        ),
        pytest.param(
            b'{"\\u0061": 1, "a": 2}', "duplicate", "duplicate key 'a' in one object", id="escaped"
        ),
        pytest.param(
            b'{"a:b": "x:y", "a:b" : "\\u003a"}',
            "duplicate",
            "duplicate key 'a:b' in one object",
            id="colons-in-strings-and-an-escaped-one",
        ),
        pytest.param(
            b"[" + b"1" * 4301 + b"]",
            "number",
            "holds an integer of 4,301 digits (more than 4,300)",
            id="int-over-the-limit",
        ),
        pytest.param(
            b'{"x": -1e400}', "number", "holds a number too large for a float ('-1e400')", id="inf"
        ),
        pytest.param(b'{"x": NaN}', "syntax", "not JSON (NaN is not a JSON number)", id="nan"),
        pytest.param(b'"\xff"', "encoding", "not UTF-8 (byte 2)", id="bad-utf8"),
        pytest.param(
            b'{"x": "\\udc00"}',
            "surrogate",
            "holds an unpaired surrogate escape (\\ud800-\\udfff)",
            id="lone-surrogate",
        ),
        pytest.param(b"\xef\xbb\xbf{}", "bom", "starts with a byte-order mark", id="bom"),
        pytest.param(b"[" * 100_000, "depth", "JSON nested too deeply", id="deep"),
        pytest.param(
            b'{"a": 1} x',
            "syntax",
            "not JSON (Extra data at column 10)",
            id="trailing",
        ),
    ],
)
def test_loads_strict_refuses(data: bytes, kind: str, what: str) -> None:
    with pytest.raises(JSONProblem, match=re.escape(what)) as caught:
        loads_strict(data)
    assert (caught.value.kind, caught.value.what) == (kind, what)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'{"a": {"a": {"a": 1}}, "b": "a:a:a"}', id="same-key-other-objects"),
        pytest.param(b'{"u": "\\u003a", "v": ":"}', id="escaped-colon-no-duplicate"),
        pytest.param(b"[" + b"1" * 4300 + b"]", id="int-at-the-limit"),
        pytest.param(b'{"x": 1.7976931348623157e308}', id="largest-float"),
        pytest.param('{"é": "😀"}'.encode(), id="non-ascii"),
    ],
)
def test_loads_strict_accepts_what_json_reads_alike(data: bytes) -> None:
    assert loads_strict(data) == json.loads(data)


def lines(tmp_path: Path, name: str, *texts: str) -> Path:
    path = tmp_path / name
    path.write_text("".join(t + "\n" for t in texts))
    return path


def test_a_duplicate_key_in_a_key_record_is_refused_not_last_wins(tmp_path: Path) -> None:
    # the issue's attack: the later "answer_key" would have sealed
    text = json.dumps(K)[:-1] + ', "answer_key": "B"}'
    path = lines(tmp_path, "keys.jsonl", json.dumps(K | {"id": "q0"}), text)
    with pytest.raises(InputError) as caught:
        read_keys(path, canaries=Canaries.FORBIDDEN)
    assert str(caught.value) == f"{path}:2: duplicate key 'answer_key' in one object; {DUPLICATE}"


def test_a_duplicate_repository_in_as_of_is_refused(tmp_path: Path) -> None:
    text = json.dumps(Q).replace(
        '{"sdlc": "' + C + '"}', '{"sdlc": "' + C + '", "sdlc": "' + "d" * 40 + '"}'
    )
    path = lines(tmp_path, "questions.jsonl", text)
    with pytest.raises(InputError) as caught:
        read_questions(path)
    assert str(caught.value) == f"{path}:1: duplicate key 'sdlc' in one object; {DUPLICATE}"


def test_a_huge_integer_in_a_label_names_the_line(tmp_path: Path) -> None:
    path = lines(
        tmp_path,
        "labels.jsonl",
        json.dumps({"id": "q1", "rater": "ada", "correct": True}),
        '{"id": "q1", "rater": ' + "9" * 5000 + ', "correct": true}',
    )
    with pytest.raises(InputError) as caught:
        read_labels(path, ["q1"])
    assert str(caught.value) == (
        f"{path}:2: holds an integer of 5,000 digits (more than 4,300); "
        "write a smaller number, or the number as a string"
    )


def test_read_jsonl_and_read_json_are_strict(tmp_path: Path) -> None:
    path = lines(tmp_path, "x.jsonl", '{"a": 1}', '{"a": 1, "a": 1}')
    with pytest.raises(InputError, match=r"x\.jsonl:2: duplicate key 'a' in one object"):
        list(read_jsonl(path))
    doc = tmp_path / "m.json"
    doc.write_text('{\n  "a": 1,\n  "b": 2,\n  "a": 3\n}\n')
    with pytest.raises(InputError) as caught:
        read_json(doc)
    assert str(caught.value) == f"{doc}:4: duplicate key 'a' in one object; {DUPLICATE}"


def meta(tmp_path: Path, date: str) -> Path:
    path = tmp_path / "a.meta.json"
    fields = {"runner": "person", "by": "a", "model": "m", "knowledge_snapshot": {}}
    path.write_text(json.dumps(fields | {"date": date}))
    return path


def test_an_impossible_date_in_a_meta_is_refused(tmp_path: Path) -> None:
    path = meta(tmp_path, "2024-13-45")
    with pytest.raises(InputError) as caught:
        read_meta(path)
    assert str(caught.value) == (
        f"{path}: date '2024-13-45' is not a date; use YYYY-MM-DD or an ISO 8601 time"
    )
    assert (
        read_meta(meta(tmp_path, "2026-11-30T12:00:00Z")).fields["date"] == "2026-11-30T12:00:00Z"
    )


PERSON = "people:\n  chat:\n    from: a.csv\n    by: ada\n    model: m\n    snapshot: s\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            PERSON + "    date: 2024-13-45\n",
            "params.yaml:7: '2024-13-45' is not a real date (month must be in 1..12); "
            "write one as YYYY-MM-DD",
            id="impossible-yaml-date",
        ),
        pytest.param(
            PERSON + "    date: 'last tuesday'\n",
            "params.yaml:2: person arm 'chat': date 'last tuesday' is not a date; use "
            "YYYY-MM-DD or an ISO 8601 time",
            id="not-a-date",
        ),
        pytest.param(
            "seed: 0\nresamples: " + "1" * 5000 + "\n",
            "params.yaml:2: an integer of 5,000 digits is more than Python reads (4,300); "
            "write a smaller number",
            id="huge-int",
        ),
        pytest.param(
            "threshold: 1.0e+400\n",
            "params.yaml:1: threshold must be 0 to 100 points, got inf",
            id="float-overflow",
        ),
        pytest.param(
            "base: &b\n  seed: 1\n<<: *b\nseed: 2\nseed: 3\n",
            "params.yaml:5: duplicate key 'seed' (first on line 4); keep one",
            id="merge-then-a-real-duplicate",
        ),
    ],
)
def test_params_yaml_bad_scalars_name_their_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("params.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_params(Path("params.yaml"))
    assert str(caught.value) == message


def test_params_yaml_merge_keys_work_and_own_keys_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("params.yaml").write_text(
        "defaults: &person\n  by: ada\n  model: chat-1\n  date: 2024-06-01\n  snapshot: snap\n"
        "people:\n  chat:\n    <<: *person\n    from: a.csv\n  chat2:\n    <<: *person\n"
        "    from: b.csv\n    by: grace\n"
    )
    params = load_params(Path("params.yaml"))
    chat, chat2 = params.people["chat"], params.people["chat2"]
    assert (chat.by, chat.model, chat.date, chat.source) == (
        "ada",
        "chat-1",
        "2024-06-01",
        Path("a.csv"),
    )
    assert (chat2.by, chat2.source) == ("grace", Path("b.csv"))


def test_a_repeated_key_before_a_bad_line_is_the_one_named(tmp_path: Path) -> None:
    # line 3 sends the reader line by line; the repeated key on line 2 is still found first
    repeated = json.dumps(Q | {"id": "q2"})[:-1] + ', "kind": "blocker"}'
    path = lines(tmp_path, "questions.jsonl", json.dumps(Q), repeated, "{bad")
    with pytest.raises(InputError) as caught:
        read_questions(path)
    assert str(caught.value) == f"{path}:2: duplicate key 'kind' in one object; {DUPLICATE}"
