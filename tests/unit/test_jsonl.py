"""Atomic writes leave the old file intact on failure; appends survive torn lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flightdeck.files.jsonl import append_jsonl, atomic_write, read_jsonl


def test_atomic_write_failure_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "metrics.json"
    target.write_text("old\n")

    def boom(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]  # no temp file left


def test_atomic_write_replaces(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "x.json"
    atomic_write(target, b"1")
    atomic_write(target, "2")
    assert target.read_text() == "2"


def test_append_after_torn_line_keeps_records_apart(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "q1"}\n{"id": "q2", "ra')  # a kill mid-write
    append_jsonl(path, {"id": "q3"})
    lines = path.read_text().splitlines()
    assert lines[-1] == '{"id":"q3"}'
    assert lines[1] == '{"id": "q2", "ra'
    records = read_jsonl(path)
    assert next(records)[1] == {"id": "q1"}
    with pytest.raises(Exception, match=r"labels\.jsonl:2: not JSON"):
        next(records)


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        pytest.param("blocker/x.json", "File exists", id="file-where-a-folder-goes"),
        pytest.param("blocker/sub/x.json", "Not a directory", id="file-above-the-folder"),
    ],
)
def test_an_unwritable_path_is_the_users_to_fix(tmp_path: Path, where: str, reason: str) -> None:
    from flightdeck.errors import InputError

    (tmp_path / "blocker").write_text("a file, not a folder\n")
    for write in (lambda p: atomic_write(p, "x"), lambda p: append_jsonl(p, {"a": 1})):
        with pytest.raises(InputError) as caught:
            write(tmp_path / where)
        assert str(caught.value).endswith(f": {reason}; check the path")
        assert "blocker" in str(caught.value)
    assert (tmp_path / "blocker").read_text() == "a file, not a folder\n"


def test_a_folder_where_the_file_goes_is_named(tmp_path: Path) -> None:
    from flightdeck.errors import InputError

    (tmp_path / "x.json").mkdir()
    with pytest.raises(InputError, match=r"x\.json: Is a directory; check the path"):
        atomic_write(tmp_path / "x.json", "x")
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # no temp file left
