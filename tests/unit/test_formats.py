"""Readers stop at the first bad record with `<file>:<line>: <what and how to fix>`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.errors import InputError
from flightdeck.suite.records import (
    CANARY_PREFIX,
    KINDS,
    Canaries,
    read_answers,
    read_keys,
    read_labels,
    read_manifest,
    read_meta,
    read_questions,
)

C = "a" * 40
S = "b" * 64
Q = {"id": "q1", "question": "Why?", "kind": "decision-why", "as_of": {"sdlc": C}, "scope": []}
K = {
    "id": "q1",
    "answer_key": "x",
    "required_facts": ["f"],
    "valid_sources": [{"uri": "sdlc/a.md", "sha256": S}],
}


def write(tmp_path: Path, name: str, lines: list[object]) -> Path:
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        pytest.param([Q, "{not json"], r"q\.jsonl:2: not JSON", id="not-json"),
        pytest.param(
            [Q, Q], r"q\.jsonl:2: duplicate id 'q1' \(first on line 1\)", id="duplicate-id"
        ),
        pytest.param(
            [Q | {"kind": "trivia"}],
            r"q\.jsonl:1: kind 'trivia' is unknown; use one of",
            id="unknown-kind",
        ),
        pytest.param(
            [Q | {"as_of": {"sdlc": "abc123"}}],
            r"q\.jsonl:1: as_of commit for 'sdlc' must be a full 40-hex",
            id="short-commit",
        ),
        pytest.param([Q | {"id": ""}], r"q\.jsonl:1: id is empty", id="empty-id"),
        pytest.param(
            [{k: v for k, v in Q.items() if k != "scope"}],
            r"q\.jsonl:1: missing field 'scope'",
            id="missing-field",
        ),
        pytest.param([Q | {"extra": 1}], r"q\.jsonl:1: unknown field 'extra'", id="unknown-field"),
        pytest.param(
            ["[1, 2]"], r"q\.jsonl:1: expected a JSON object, got an array", id="not-object"
        ),
        pytest.param(
            [Q | {"scope": "docs/**"}],
            r"q\.jsonl:1: scope must be a list of strings",
            id="scope-not-list",
        ),
        pytest.param([], r"q\.jsonl: no questions", id="empty-file"),
    ],
)
def test_questions_bad_input(tmp_path: Path, lines: list[object], message: str) -> None:
    path = write(tmp_path, "q.jsonl", lines)
    with pytest.raises(InputError, match=message):
        read_questions(path)


def test_questions_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(json.dumps(Q).encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"q\.jsonl:2: not UTF-8"):
        read_questions(path)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        pytest.param(
            [K | {"required_facts": []}],
            r"k\.jsonl:1: required_facts is empty; list at least one",
            id="empty-facts",
        ),
        pytest.param(
            [K | {"valid_sources": []}],
            r"k\.jsonl:1: valid_sources is empty; list at least one source",
            id="empty-sources",
        ),
        pytest.param(
            [K | {"valid_sources": [{"uri": "sdlc/a.md", "sha256": "abc"}]}],
            r"k\.jsonl:1: valid_sources sha256 of 'sdlc/a.md' must be 64 hex",
            id="short-sha",
        ),
        pytest.param(
            [K | {"valid_sources": [{"uri": "a.md", "sha256": S}]}],
            r"k\.jsonl:1: valid_sources uri 'a.md' is not <repo>/<path>",
            id="bad-uri",
        ),
        pytest.param(
            [K | {"valid_sources": [{"uri": "sdlc/a.md#L9-L3", "sha256": S}]}],
            r"ends before it starts",
            id="backwards-span",
        ),
        pytest.param([K | {"canary": "nope"}], r"k\.jsonl:1: canary must be", id="bad-canary"),
    ],
)
def test_keys_bad_input(tmp_path: Path, lines: list[object], message: str) -> None:
    path = write(tmp_path, "k.jsonl", lines)
    with pytest.raises(InputError, match=message):
        read_keys(path)


def test_keys_accept_spans_and_opaque_uris(tmp_path: Path) -> None:
    sources = [
        {"uri": "sdlc/a.md#L3-L9", "sha256": S.upper()},
        {"uri": "https://x.org/p#h", "sha256": S},
    ]
    keys = read_keys(write(tmp_path, "k.jsonl", [K | {"valid_sources": sources}]))
    assert [s.uri for s in keys[0].valid_sources] == ["sdlc/a.md#L3-L9", "https://x.org/p#h"]
    assert keys[0].valid_sources[0].sha256 == S  # normalised to lower case


def test_answers_reject_id_outside_suite(tmp_path: Path) -> None:
    path = write(tmp_path, "a.jsonl", [{"id": "q9", "answer": "x", "citations": []}])
    with pytest.raises(InputError, match=r"a\.jsonl:1: id 'q9' is not a question of this suite"):
        read_answers(path, ["q1"])


def test_answer_hash_is_canonical_json(tmp_path: Path) -> None:
    # The spec: SHA-256 of the record as canonical JSON (sorted keys, "," and ":", non-ASCII kept).
    record = {"id": "q1", "answer": "Grüße", "citations": []}
    path = write(tmp_path, "a.jsonl", [json.dumps(record, indent=1)])  # another layout, same record
    path.write_text(json.dumps(record, ensure_ascii=True) + "\n")
    import hashlib

    canonical = '{"answer":"Grüße","citations":[],"id":"q1"}'.encode()
    assert read_answers(path, ["q1"])[0].sha256 == hashlib.sha256(canonical).hexdigest()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        pytest.param(
            [{"id": "q1", "rater": "ada", "correct": "yes", "unsupported": []}],
            r"l\.jsonl:1: correct must be true or false, got 'yes'",
            id="correct-not-bool",
        ),
        pytest.param(
            [{"id": "q1", "rater": "ada", "correct": True, "unsupported": []}] * 2,
            r"l\.jsonl:2: duplicate label by rater 'ada' on id 'q1' \(first on line 1\); remove one of the two",
            id="two-labels-one-rater",
        ),
        pytest.param(
            [{"id": "q2", "rater": "ada", "correct": True, "unsupported": []}],
            r"l\.jsonl:1: id 'q2' is not a question",
            id="label-id-outside",
        ),
        pytest.param(
            [
                {
                    "id": "q1",
                    "rater": "ada",
                    "correct": True,
                    "unsupported": [],
                    "answer_sha256": "x",
                }
            ],
            r"answer_sha256 must be 64 hex",
            id="bad-answer-sha",
        ),
    ],
)
def test_labels_bad_input(tmp_path: Path, lines: list[object], message: str) -> None:
    path = write(tmp_path, "l.jsonl", lines)
    with pytest.raises(InputError, match=message):
        read_labels(path, ["q1"])


def test_meta_and_manifest(tmp_path: Path) -> None:
    meta = tmp_path / "m.json"
    meta.write_text(
        json.dumps(
            {"runner": "robot", "by": "a", "date": "d", "model": "m", "knowledge_snapshot": {}}
        )
    )
    with pytest.raises(
        InputError, match=r"m\.json: runner 'robot' is unknown; use person or harness"
    ):
        read_meta(meta)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "suite": "s",
                "sealed_at": "t",
                "sha256": {"questions.jsonl": S},
                "flightdeck_version": "0",
            }
        )
    )
    with pytest.raises(
        InputError, match=r"manifest\.json: sha256 must map questions\.jsonl and keys\.jsonl"
    ):
        read_manifest(manifest)


READERS = [
    lambda p: read_questions(p),
    lambda p: read_keys(p),
    lambda p: read_answers(p, ["q1", "a"]),
    lambda p: read_labels(p, ["q1", "a"]),
    lambda p: read_meta(p),
    lambda p: read_manifest(p),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "question",
                    "kind",
                    "as_of",
                    "scope",
                    "answer",
                    "citations",
                    "uri",
                    "sha256",
                    "rater",
                    "correct",
                    "unsupported",
                    "runner",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            json_values.map(json.dumps), st.binary(max_size=30).map(lambda b: b.decode("latin-1"))
        ),
        max_size=4,
    ),
    st.integers(min_value=0, max_value=len(READERS) - 1),
)
def test_fuzz_readers_raise_only_input_errors(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], which: int
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "f.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogateescape"))
    message = outcome(READERS[which], path)
    if isinstance(message, str):
        assert message.startswith(str(path))
        assert "\n" not in message


# --- the msgspec schema against a plain-json reference, on inputs near valid records --------

import tests.records_reference as reference  # noqa: E402

HEXES = st.sampled_from(["a" * 40, "A" * 40, "a" * 39, "g" * 40, "b" * 64, "B" * 64, "b" * 63])
TEXTS = st.sampled_from(
    [
        "q1",
        "a",
        "",
        " ",
        "\u2003",
        "x/y",
        "sdlc/a.md",
        "sdlc/a.md#L2-L1",
        "sdlc/a.md#L3",
        "sdlc/a.md#L3-L12",
        "https://x#y",
        "docs/[z-a]",
        "\\ud800",  # a backslash and "ud800": plain text
        "\ud800",  # an unpaired surrogate: json.dumps writes the escape
        "\U0001f600",  # a pair: valid
        CANARY_PREFIX + "0" * 32,
    ]
)
FIELD_VALUES = st.one_of(
    TEXTS,
    HEXES,
    st.booleans(),
    st.none(),
    st.integers(-1, 1),
    st.sampled_from(["how-to", "blocker", "trivia"]),
    st.fixed_dictionaries({"uri": TEXTS, "sha256": HEXES}),  # a source, good or bad
    st.dictionaries(TEXTS, HEXES, min_size=1, max_size=2),  # an as_of, good or bad
)


def near_valid(base: dict[str, object], names: list[str]) -> st.SearchStrategy[str]:
    """JSON lines close to a valid record: fields dropped, replaced, added, duplicated, or
    the whole record spread over several lines."""

    def mutate(draw_ops: list[tuple[int, str, object]]) -> str:
        record = dict(base)
        extra, indent = "", None
        for op, name, value in draw_ops:
            if op == 0:
                record.pop(name, None)
            elif op == 1:
                record[name] = value
            elif op == 2:
                record[name] = [value]
            elif op == 3:
                extra = f',"{name}":{json.dumps(value)}'  # a duplicated key, last one wins
            elif op == 4:
                record = {name: value, **record}  # a key given twice: json keeps the later
                extra = f',"{name}":{json.dumps(base.get(name, value))}'
            else:
                indent = 1  # one record over many lines
        text = json.dumps(record, indent=indent)
        return text[:-1] + extra + "}" if extra and len(record) else text

    ops = st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from([*base, *names]), FIELD_VALUES), max_size=2
    )
    return ops.map(mutate)


SOURCE = {"uri": "sdlc/a.md", "sha256": S}
KNOWN = ["q1", "q2", "q3", "a"]
CASES = {
    "questions": (Q, [], read_questions, reference.questions),
    "keys": (
        K | {"canary": None},
        [],
        lambda p: read_keys(p, canaries=Canaries.FORBIDDEN),
        lambda p: reference.keys(p, sealed=False),
    ),
    "sealed-keys": (
        K | {"canary": CANARY_PREFIX + "1" * 32},
        [],
        lambda p: read_keys(p, canaries=Canaries.REQUIRED),
        lambda p: reference.keys(p, sealed=True),
    ),
    "answers": (
        {"id": "q1", "answer": "x", "citations": [SOURCE]},
        ["sha256", "line"],
        lambda p: read_answers(p, KNOWN),
        lambda p: reference.answers(p, KNOWN),
    ),
    "labels": (
        {"id": "q1", "rater": "ada", "correct": True, "unsupported": ["sdlc/a.md"]},
        ["answer_sha256", "time", "line"],
        lambda p: read_labels(p, KNOWN),
        lambda p: reference.labels(p, KNOWN),
    ),
}


def outcome(reader, path: Path) -> object:  # type: ignore[no-untyped-def]
    try:
        return reader(path)
    except InputError as exc:
        return str(exc)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(sorted(CASES)), st.data())
def test_schema_agrees_with_reference(
    tmp_path_factory: pytest.TempPathFactory, which: str, data: st.DataObject
) -> None:
    base, names, reader, oracle = CASES[which]
    lines = data.draw(st.lists(near_valid(base, names), min_size=1, max_size=3))
    # Each line its own id (unless the mutation changed it), so one bad field is not hidden
    # behind a duplicate-id error on the next line; sometimes a line is repeated on purpose.
    lines = [line.replace('"id": "q1"', f'"id": "q{i + 1}"', 1) for i, line in enumerate(lines)]
    if data.draw(st.booleans()):
        lines.append(lines[0])
    if which == "sealed-keys":  # one canary per key, or the second is a duplicate
        lines = [line.replace("1" * 32, f"{i:032x}") for i, line in enumerate(lines)]
    path = tmp_path_factory.mktemp("schema") / "f.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert outcome(reader, path) == outcome(oracle, path)


def mostly(
    good: st.SearchStrategy[object], *near: st.SearchStrategy[object]
) -> st.SearchStrategy[object]:
    """Eight times in ten a valid value (edge cases included), else a near miss or anything."""
    misses = st.one_of(*near) if near else FIELD_VALUES
    return st.integers(0, 9).flatmap(lambda n: good if n > 1 else misses if n else FIELD_VALUES)


GOOD_URIS = st.sampled_from(["sdlc/a.md", "sdlc/a.md#L3", "sdlc/a.md#L3-L12", "https://x#L9-L2"])
URIS = mostly(GOOD_URIS, st.sampled_from(["sdlc/a.md#L12-L3", "a.md", ""]), TEXTS)
GOOD_HEX = st.sampled_from(["b" * 64, "B" * 64, "0123456789abcdefABCDEF" * 2 + "0" * 20])
SOURCE_ITEM = mostly(
    st.fixed_dictionaries({"uri": URIS, "sha256": mostly(GOOD_HEX, HEXES)}),
    st.fixed_dictionaries({"uri": URIS}),  # (#15) unsealed: seal computes the hash
)
COMMITS = mostly(st.sampled_from(["a" * 40, "A" * 40, "0123456789" * 4]), HEXES)
GLOBS = mostly(st.sampled_from(["docs/**", "docs/[a-z].md", "*.md"]), st.just("docs/[z-a].md"))
IDS = mostly(st.sampled_from(["q1", "q2", "q3"]), st.just("q9"), TEXTS)
TEXT = mostly(st.sampled_from(["x", "Grüße 😀", " y "]), TEXTS)
# Each field, and each value inside one, mostly valid: every rule, the nested ones
# included, is met by some records and broken by others.
FIELDS: dict[str, dict[str, st.SearchStrategy[object]]] = {
    "questions": {
        "id": IDS,
        "question": TEXT,
        "kind": mostly(st.sampled_from(KINDS), st.just("trivia")),
        "as_of": mostly(
            st.dictionaries(st.sampled_from(["sdlc", "b"]), COMMITS, min_size=1, max_size=2),
            st.dictionaries(st.sampled_from(["", "a/b", "s"]), COMMITS, max_size=2),
        ),
        "scope": mostly(st.lists(GLOBS, max_size=2)),
    },
    "keys": {
        "id": IDS,
        "answer_key": TEXT,
        "required_facts": mostly(st.lists(TEXT, min_size=1, max_size=2), st.just([])),
        "valid_sources": mostly(st.lists(SOURCE_ITEM, min_size=1, max_size=2), st.just([])),
        "canary": mostly(
            st.sampled_from([None, CANARY_PREFIX + "1" * 32, CANARY_PREFIX + "2" * 32])
        ),
    },
    "answers": {
        "id": IDS,
        "answer": mostly(TEXT, st.just("")),
        "citations": mostly(st.lists(SOURCE_ITEM, max_size=2)),
    },
    "labels": {
        "id": IDS,
        "rater": mostly(st.sampled_from(["ada", "bob"]), TEXTS),
        "correct": mostly(st.booleans()),
        "unsupported": mostly(st.lists(URIS, max_size=2)),
        "answer_sha256": mostly(GOOD_HEX | st.none()),
        "time": mostly(st.just("2026-12-01T00:00:00Z"), st.none(), st.just("2026-13-45T99:00Z")),
    },
}
READERS_BY_CASE = {
    "questions": (read_questions, reference.questions),
    "keys": (lambda p: read_keys(p), lambda p: reference.keys(p)),
    "answers": (lambda p: read_answers(p, KNOWN), lambda p: reference.answers(p, KNOWN)),
    "labels": (lambda p: read_labels(p, KNOWN), lambda p: reference.labels(p, KNOWN)),
}


@st.composite
def records_of(draw: st.DrawFn, which: str) -> str:
    fields = FIELDS[which]
    record = {
        name: draw(strategy)
        for name, strategy in fields.items()
        if draw(st.integers(0, 19))  # one in twenty left out
    }
    if draw(st.integers(0, 19)) == 0:
        record["extra"] = 1
    return json.dumps(record)


@pytest.mark.slow
@settings(max_examples=800, deadline=None)
@given(st.sampled_from(sorted(FIELDS)), st.data())
def test_schema_agrees_with_reference_field_by_field(
    tmp_path_factory: pytest.TempPathFactory, which: str, data: st.DataObject
) -> None:
    lines = data.draw(st.lists(records_of(which), min_size=1, max_size=3))
    path = tmp_path_factory.mktemp("fields") / "f.jsonl"
    path.write_text("\n".join(lines) + "\n")
    reader, oracle = READERS_BY_CASE[which]
    assert outcome(reader, path) == outcome(oracle, path)


def test_valid_records_match_the_reference_record_for_record(tmp_path: Path) -> None:
    sources = [
        {"uri": "sdlc/a.md#L2-L9", "sha256": S.upper()},
        {"uri": "https://x#L9-L2", "sha256": S},
    ]
    answers = [
        {"id": f"q{i}", "answer": "Grüße 😀", "citations": sources[: i % 3]} for i in range(1, 4)
    ]
    labels = [
        {"id": "q1", "rater": "ada", "correct": True, "answer_sha256": S.upper()},
        {
            "id": "q1",
            "rater": "bob",
            "correct": False,
            "unsupported": ["sdlc/a.md"],
            "time": "2026-12-01",
        },
    ]
    questions = [
        Q,
        Q | {"id": "q2", "as_of": {"sdlc": C.upper(), "b": "1" * 40}, "scope": ["s/**"]},
    ]
    a, lab, q = (
        write(tmp_path, n, r) for n, r in [("a", answers), ("l", labels), ("q", questions)]
    )
    assert read_answers(a, KNOWN) == reference.answers(a, KNOWN)
    assert read_labels(lab, KNOWN) == reference.labels(lab, KNOWN)
    assert read_questions(q) == reference.questions(q)
    assert read_questions(q)[1].as_of == {"sdlc": C, "b": "1" * 40}  # commits lower-cased
    assert [x.line for x in read_labels(lab, KNOWN)] == [1, 2]


@pytest.mark.parametrize(
    ("lines", "reader", "expected"),
    [
        pytest.param(
            [json.dumps(Q, indent=1)],
            read_questions,
            "not JSON (Expecting property name enclosed in double quotes at column 2); "
            "write one object per line",
            id="a-record-over-two-lines",  # msgspec alone would read it as one record
        ),
        pytest.param(
            ['{"id": 5, ' + json.dumps(Q)[1:]],
            read_questions,
            "duplicate key 'id' in one object; "
            "keep one (JSON readers disagree on which of two equal keys wins)",
            id="first-of-two-keys-bad",  # json and msgspec would keep the later without a word
        ),
        pytest.param(
            [json.dumps({"id": "q1", "rater": "ada", "correct": True, "time": None})],
            lambda p: read_labels(p, KNOWN),
            "time must be a string, got None",
            id="null-time",  # the record holds None for no time, the file may not
        ),
        pytest.param(
            [json.dumps(Q | {"line": 7})],
            read_questions,
            "unknown field 'line'; allowed fields are id, question, kind, as_of, scope",
            id="reader-field-in-file",
        ),
        pytest.param(
            [json.dumps(Q | {"as_of": {"sd\ud800": C}})],
            read_questions,
            "holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode",
            id="surrogate-in-repo-name",
        ),
        pytest.param(
            [json.dumps(Q | {"id": "q2"}), json.dumps(Q | {"id": "q2"}), "{bad"],
            read_questions,
            "duplicate id 'q2' (first on line 1); make ids unique",
            id="earlier-duplicate-before-later-bad-line",
        ),
    ],
)
def test_hand_worked_cases(tmp_path: Path, lines: list[str], reader, expected) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "f.jsonl"
    path.write_text("\n".join(lines) + "\n")
    got = outcome(reader, path)
    if expected is None:
        assert not isinstance(got, str), got
    else:
        assert isinstance(got, str)
        assert got.split(": ", 1)[1] == expected, got


@pytest.mark.parametrize(
    ("name", "lines", "message"),
    [
        pytest.param(
            "k.jsonl",
            [
                K | {"canary": "FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-" + "0" * 32},
                K
                | {
                    "id": "q2",
                    "canary": "FLIGHTDECK-SEALED-KEY-CANARY-DO-NOT-TRAIN-OR-INDEX-" + "0" * 32,
                },
            ],
            r"k\.jsonl:2: duplicate canary \(first on line 1\); remove the canaries and seal again",
            id="duplicate-canary",
        ),
        pytest.param(
            "q.jsonl",
            [Q | {"scope": ["sdlc/docs/[z-a].md"]}],
            r"q\.jsonl:1: scope pattern 'sdlc/docs/\[z-a\]\.md' is not a valid glob",
            id="bad-glob",
        ),
        pytest.param(
            "q.jsonl",
            [
                '{"id": "q\\ud800", "question": "x", "kind": "how-to", "as_of": {"sdlc": "'
                + C
                + '"}, "scope": []}'
            ],
            r"q\.jsonl:1: id holds an unpaired surrogate escape",
            id="lone-surrogate",
        ),
        pytest.param(
            "q.jsonl",
            ["\ufeff" + json.dumps(Q)],
            r"q\.jsonl:1: starts with a byte-order mark; save the file as UTF-8 without BOM",
            id="bom",
        ),
    ],
)
def test_more_bad_input(tmp_path: Path, name: str, lines: list[object], message: str) -> None:
    path = write(tmp_path, name, lines)
    reader = read_keys if name == "k.jsonl" else read_questions
    with pytest.raises(InputError, match=message):
        reader(path)


def test_a_missing_path_with_spaces_reads_as_missing(tmp_path: Path) -> None:
    from tests.gitrepo import make_git_repo, sha256_at

    from flightdeck.suite.repos import Repository

    (commit,) = make_git_repo(tmp_path / "r", [{"docs/a b.md": "x\n"}])
    got = sha256_at(
        Repository("r", tmp_path / "r", tmp_path / "cache"),
        [(commit, "docs/no such.md"), (commit, "docs/a b.md"), (commit, "docs/nothere x.md")],
    )
    assert got[(commit, "docs/no such.md")] is None
    assert got[(commit, "docs/nothere x.md")] is None
    assert got[(commit, "docs/a b.md")] is not None
