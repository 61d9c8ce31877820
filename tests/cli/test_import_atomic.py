"""`knowledge import-answers` is one step: killed anywhere, answers and meta appear together or
not at all (#25).

The import runs as a real process (``python -c``, the real CLI) that SIGKILLs itself just
before its N-th file-system step inside the answers folder (a mkdir, rename, replace, rmdir,
or any fsync): a real kill at a controlled point, with no hook in flightdeck. N runs from 1
until the import finishes without reaching it, so every step is a kill point. After each
kill the next command (``knowledge status``) must find the old state (no answers, no meta)
or the new (both, the meta naming this import), never one file alone, and no staging left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from tests.builders import FILES_AS_OF, BuiltProject

from flightdeck.cli import cli

ADR = "docs/adr/0001-database.md"

# Run the real CLI, killing the process before the N-th step that touches the answers folder.
KILLER = """
import os, signal, sys
answers, limit = sys.argv[1], int(sys.argv[2])
count = 0

def step(name):
    real = getattr(os, name)
    def wrapped(*args, **kwargs):
        global count
        touches = name == "fsync" or any(answers in str(a) for a in args)
        if touches:
            count += 1
            if count == limit:
                os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(os, name, wrapped)

for name in ("mkdir", "rename", "replace", "rmdir", "fsync"):
    step(name)
from flightdeck.cli import main
sys.argv = ["flightdeck", *sys.argv[3:]]
main()
"""


def import_killed_at(project: BuiltProject, limit: int, by: str, *extra: str) -> int:
    """The import's exit status when killed before its ``limit``-th step (-9: killed)."""
    folder = project.root / "attachments" / "sdlc" / "docs" / "adr"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0001-database.md").write_text(FILES_AS_OF[ADR])
    source = project.root / "answers.csv"
    source.write_text(f"id,answer,citations\nq1,Postgres for JSONB,sdlc/{ADR}\n")
    args = [
        "knowledge",
        "import-answers",
        str(project.suite),
        "--arm",
        "chat",
        "--from",
        str(source),
        "--by",
        by,
        "--model",
        "chat-model-1",
        "--date",
        "2026-11-20",
        "--snapshot",
        str(project.root / "attachments"),
        *extra,
    ]
    answers = str(project.suite / "answers")
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", KILLER, answers, str(limit), *args],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    return done.returncode


def state(project: BuiltProject) -> tuple[bool, bool, str | None]:
    """After the next command: (answers there, meta there, who the meta says gave them)."""
    result = CliRunner().invoke(cli, ["knowledge", "status", str(project.suite)])
    assert "Traceback" not in result.output, result.output
    folder = project.suite / "answers"
    left = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    assert not [name for name in left if name.startswith(".")], left  # no staging left
    meta = folder / "chat.meta.json"
    by = json.loads(meta.read_text())["by"] if meta.is_file() else None
    return (folder / "chat.jsonl").is_file(), meta.is_file(), by


@pytest.mark.slow
def test_a_killed_first_import_leaves_both_files_or_neither(project: BuiltProject) -> None:
    outcomes = []
    limit = 1
    while import_killed_at(project, limit, "ada") != 0:
        answers, meta, by = state(project)
        assert answers == meta, f"killed at step {limit}: answers {answers}, meta {meta}"
        outcomes.append(answers)
        if answers:  # completed by the next command: as the import would have left it
            assert by == "ada"
            for name in ("chat.jsonl", "chat.meta.json"):
                (project.suite / "answers" / name).unlink()
        limit += 1
    assert state(project) == (True, True, "ada")
    # kills both before the commit (rolled back) and after it (completed) were seen
    assert False in outcomes, outcomes
    assert True in outcomes, outcomes
    assert limit >= 5, limit  # mkdir, the two fsyncs, the commit rename, the two moves


@pytest.mark.slow
def test_a_killed_replace_keeps_the_old_pair_or_the_new(project: BuiltProject) -> None:
    assert import_killed_at(project, 10**6, "ada") == 0  # the old pair, in one piece
    old_answers = (project.suite / "answers" / "chat.jsonl").read_bytes()
    limit = 1
    seen = set()
    while import_killed_at(project, limit, "grace", "--replace") != 0:
        answers, meta, by = state(project)
        assert answers, f"killed at step {limit}"
        assert meta, f"killed at step {limit}"
        assert by in ("ada", "grace")
        seen.add(by)
        if by == "grace":  # put the old pair back for the next kill point
            import_killed_at(project, 10**6, "ada", "--replace")
            assert (project.suite / "answers" / "chat.jsonl").read_bytes() == old_answers
        limit += 1
    assert seen == {"ada", "grace"}, seen
    assert state(project) == (True, True, "grace")
