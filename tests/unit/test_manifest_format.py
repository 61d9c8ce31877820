"""The holdouts manifest as a Struct: a newer writer's fields survive, and the fast decode
accepts exactly what the strict reader accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.errors import InputError
from flightdeck.files.jsonl import read_json
from flightdeck.holdouts.leaks import canary_scan, mark_void
from flightdeck.holdouts.manifest import load_manifest, read_manifest
from flightdeck.holdouts.manifest_format import all_canaries, decode, from_value, problem
from flightdeck.holdouts.registry import register_suite, unvoid
from flightdeck.suite.records import CANARY_PREFIX, CANARY_RE


def canary(n: int) -> str:
    return f"{CANARY_PREFIX}{n:032x}"


def newer_writers_manifest() -> dict[str, Any]:
    """A manifest as a later version might write it: fields this version does not know."""
    return {
        "canaries": {canary(1): {"question_id": "q1", "suite": "s1"}},
        "format": 1,
        "history": [
            {
                "at": "2026-01-01T00:00:00Z",
                "canaries": 1,
                "event": "registered",
                "signed_by": {"key": "k1", "sig": "abc"},
                "suite": "s1",
            },
            {"at": "2026-01-02T00:00:00Z", "event": "rotated", "reason": "a new kind"},
        ],
        "suites": {
            "s1": {
                "manifest_sha256": "a" * 64,
                "owner": "team-x",
                "registered_at": "2026-01-01T00:00:00Z",
                "status": "sealed",
            }
        },
    }


def write(folder: Path, value: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "manifest.json"
    path.write_text(json.dumps(value, indent=2))
    return path


def test_a_newer_writers_events_and_suite_fields_survive_a_rewrite(tmp_path: Path) -> None:
    holdouts = tmp_path / "holdouts"
    path = write(holdouts, newer_writers_manifest())
    register_suite(holdouts, suite="s2", manifest_sha256="b" * 64, canaries={"q1": canary(2)})
    trace = tmp_path / "trace.log"
    trace.write_text(canary(1))
    assert mark_void(holdouts, canary_scan(holdouts, [trace])) == ["s1"]
    unvoid(holdouts, "s1", by="ana", why="a fixture")
    after = json.loads(path.read_text())
    old = newer_writers_manifest()
    assert after["history"][:2] == old["history"]  # both events, every field, as written
    assert [e["event"] for e in after["history"][2:]] == ["registered", "void", "unvoid"]
    assert after["suites"]["s1"]["owner"] == "team-x"  # kept through void and unvoid
    assert after["suites"]["s1"]["status"] == "sealed"
    assert "evidence" not in after["suites"]["s1"]
    lines = path.read_text().splitlines()
    assert (
        lines[lines.index('  "history": [') + 1]
        == "    " + json.dumps(old["history"][0], sort_keys=True, ensure_ascii=False) + ","
    )  # one line per event, keys sorted, as this version writes its own


def test_the_fast_decode_and_the_strict_reader_give_the_same_manifest(tmp_path: Path) -> None:
    holdouts = tmp_path / "holdouts"
    path = write(holdouts, newer_writers_manifest())
    register_suite(holdouts, suite="s2", manifest_sha256="b" * 64, canaries={"q1": canary(2)})
    data = path.read_bytes()
    fast = decode(data)
    assert fast is not None
    value = read_json(path)
    assert problem(value) is None
    assert fast == from_value(value)


DUPLICATE = '"question_id": "q1", "suite": "s1"'

REFUSED = [
    pytest.param(
        "{"
        f'"canaries": {{"{canary(1)}": {{{DUPLICATE}}}, "{canary(1)}": {{{DUPLICATE}}}}},'
        '"format": 1, "history": [],'
        f'"suites": {{"s1": {{"manifest_sha256": "{"a" * 64}", "status": "sealed"}}}}'
        "}",
        "duplicate key",
        id="canary-twice",
    ),
    pytest.param(
        "{"
        f'"canaries": {{"{canary(1)}": {{"question_id": "q1", "suite": "s1", "suite": "s2"}}}},'
        '"format": 1, "history": [],'
        f'"suites": {{"s1": {{"manifest_sha256": "{"a" * 64}", "status": "sealed"}},'
        f'"s2": {{"manifest_sha256": "{"b" * 64}", "status": "sealed"}}}}'
        "}",
        "duplicate key",
        id="owner-twice",
    ),
    pytest.param(
        '{"canaries": {}, "format": 1, "suites": {},'
        '"history": [{"event": "x", "at": "t", "new": 1, "new": 2}]}',
        "duplicate key",
        id="event-key-twice",
    ),
    pytest.param(
        '{"canaries": {}, "format": 1, "suites": {},'
        '"history": [{"event": "x", "at": "t", "new": "\\ud800"}]}',
        "unpaired surrogate",
        id="lone-surrogate",
    ),
    pytest.param(
        '{"canaries": {}, "format": 1, "suites": {}, "history": [], "format": 1}',
        "duplicate key",
        id="format-twice",
    ),
    pytest.param(
        '{"canaries": {}, "format": 1, "suites": {}, "history": [{"event": "x", "at": 1}]}',
        r"history\[0\]: Expected `str`, got `int` - at `\$.at`",
        id="event-type",
    ),
    pytest.param(
        '{"canaries": {}, "format": 1, "history": [],'
        f'"suites": {{"s1": {{"manifest_sha256": "{"a" * 64}", "status": "sealed", '
        '"registered_at": 5}}}',
        "suites.s1.registered_at must be a UTC time",
        id="registered-at",
    ),
    pytest.param(
        '{"canaries": {}, "format": 1, "history": [],'
        f'"suites": {{"s1": {{"manifest_sha256": "{"a" * 64}", "status": "sealed", '
        '"registered_at": "2026-13-45"}}}',
        "suites.s1.registered_at must be a UTC time",
        id="registered-at-no-date",
    ),
]


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_what_the_strict_reader_refuses_the_decode_refuses(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(text)
    assert decode(path.read_bytes()) is None
    with pytest.raises(InputError, match=message) as caught:
        read_manifest(path)
    assert caught.value.path == str(path)


def test_an_unknown_field_in_a_canary_entry_is_read_and_not_written(tmp_path: Path) -> None:
    value = newer_writers_manifest()
    value["canaries"][canary(1)]["seen"] = 3
    holdouts = tmp_path / "holdouts"
    path = write(holdouts, value)
    assert load_manifest(path).canaries[canary(1)].question_id == "q1"
    register_suite(holdouts, suite="s2", manifest_sha256="b" * 64, canaries={"q1": canary(2)})
    assert json.loads(path.read_text())["canaries"][canary(1)] == {
        "question_id": "q1",
        "suite": "s1",
    }


def test_a_rewrite_of_a_manifest_this_version_wrote_changes_only_the_new_lines(
    tmp_path: Path,
) -> None:
    holdouts = tmp_path / "holdouts"
    register_suite(holdouts, suite="s1", manifest_sha256="a" * 64, canaries={"q1": canary(1)})
    path = holdouts / "manifest.json"
    before = path.read_text().splitlines()
    register_suite(holdouts, suite="s2", manifest_sha256="b" * 64, canaries={"q1": canary(2)})
    after = path.read_text().splitlines()
    kept = {line.rstrip(",") for line in after}
    assert all(line.rstrip(",") in kept for line in before)  # a comma added, nothing else
    assert len(after) == len(before) + 3  # a canary, a suite and an event
    manifest = load_manifest(path)
    assert msgspec.json.decode(manifest.history_json[0])["suite"] == "s1"
    assert [e.suite for e in manifest.history] == ["s1", "s2"]


def test_the_canary_prefix_holds_no_lowercase_hex_digit() -> None:
    """all_canaries counts on it: deleting the hex digits must leave each prefix whole."""
    assert not set(CANARY_PREFIX) & set("0123456789abcdef")


TAIL = "0123456789abcdef"


@given(
    st.lists(
        st.one_of(
            st.text(TAIL, min_size=32, max_size=32).map(lambda t: CANARY_PREFIX + t),
            st.text(TAIL + "ABCDEFgz-\u00e9", min_size=30, max_size=34).map(
                lambda t: CANARY_PREFIX + t
            ),
            st.text(TAIL, min_size=0, max_size=40).map(lambda t: t[:16] + CANARY_PREFIX + t[16:]),
            st.text(max_size=90),
        ),
        max_size=6,
    )
)
def test_all_canaries_agrees_with_the_canary_pattern(keys: list[str]) -> None:
    assert all_canaries(keys) == all(CANARY_RE.match(k) for k in keys)
