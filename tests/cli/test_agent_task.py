"""The task a built-in agent reads (``read_task``): strict JSON, or one line and exit 2.

A task a person pipes in, or the runner's ``FLIGHTDECK_TASK``, with a number too long for
Python, a key given twice, a lone surrogate, bytes that are not UTF-8 or the wrong shape is
named in one line (exit 2, no traceback), through the real command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from flightdeck.cli import cli

DUPLICATE = "keep one (JSON readers disagree on which of two equal keys wins)"
BAD_TASKS = [
    pytest.param(
        b'{"question": "How?", "n": ' + b"9" * 5000 + b"}",
        "the task holds an integer of 5,000 digits (more than 4,300); write a smaller number, "
        "or the number as a string",
        id="huge-integer",
    ),
    pytest.param(
        b'{"question": "a", "question": "b"}',
        f"the task has a duplicate key 'question' in one object; {DUPLICATE}",
        id="duplicate-key",
    ),
    pytest.param(
        b'{"question": "a", "as_of": {"r": "1", "r": "2"}}',
        f"the task has a duplicate key 'r' in one object; {DUPLICATE}",
        id="duplicate-nested-key",
    ),
    pytest.param(
        b'{"question": "\\ud800"}',
        "the task holds an unpaired surrogate escape (\\ud800-\\udfff); write valid Unicode",
        id="surrogate",
    ),
    pytest.param(
        b'{"question": "\xff"}',
        "the task is not UTF-8 (byte 15); pass the question record as UTF-8",
        id="not-utf8",
    ),
    pytest.param(
        b"[" * 5000,
        "the task is JSON nested too deeply; pass the question record as JSON",
        id="deep",
    ),
    pytest.param(
        b"hello",
        "the task is not JSON (Expecting value at column 1); pass the question record as JSON",
        id="not-json",
    ),
    pytest.param(b"{}", 'the task needs a "question" string; pass the record', id="no-question"),
    pytest.param(
        b'{"question": 5}', 'the task needs a "question" string; pass the record', id="question-int"
    ),
    pytest.param(b"[1]", 'the task needs a "question" string; pass the record', id="not-object"),
    pytest.param(
        b'{"question": "q", "as_of": []}',
        'the task\'s "as_of" must map repositories to commits',
        id="as-of-list",
    ),
]


@pytest.mark.parametrize(("task", "message"), BAD_TASKS)
def test_a_bad_task_on_stdin_is_named_in_one_line(
    runner: CliRunner, tmp_path: Path, task: bytes, message: str
) -> None:
    args = ["experiment", "agent", "repo-search", "--workspace", str(tmp_path)]
    result = runner.invoke(cli, args, input=task)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: <stdin>: {message}\n"
    assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("task", "message"), [p for p in BAD_TASKS if p.id in ("huge-integer", "duplicate-key")]
)
def test_a_bad_task_in_the_environment_is_named_in_one_line(
    runner: CliRunner, tmp_path: Path, task: bytes, message: str
) -> None:
    args = ["experiment", "agent", "repo-search", "--workspace", str(tmp_path)]
    result = runner.invoke(cli, args, env={"FLIGHTDECK_TASK": task.decode()})
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: FLIGHTDECK_TASK: {message}\n"


def test_the_attached_agent_reads_the_task_as_strictly(runner: CliRunner, tmp_path: Path) -> None:
    args = [
        "experiment",
        "agent",
        "attached",
        "--model",
        "mockllm/model",
        "--attach",
        str(tmp_path),
    ]
    result = runner.invoke(cli, args, input=b'{"question": "a", "question": "b"}')
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: <stdin>: the task has a duplicate key 'question' in one object; {DUPLICATE}\n"
    )


def test_the_command_refuses_a_huge_integer_without_a_traceback(tmp_path: Path) -> None:
    # The reviewer's case, through a real process and its real stdin: it crashed with exit 3.
    task = json.dumps({"question": "How?"})[:-1].encode() + b', "n": ' + b"9" * 5000 + b"}"
    args = ["experiment", "agent", "repo-search", "--workspace", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "flightdeck", *args], input=task, capture_output=True, check=False
    )
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert proc.stderr.decode().startswith("error: <stdin>: the task holds an integer of 5,000")
