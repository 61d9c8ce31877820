"""The rating server under test: a suite of 40 questions x 3 arms over 5,000-line files.

The server runs in a subprocess (``flightdeck knowledge rate --no-browser``) so a test can kill
it like a rater's closed terminal would.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.gitrepo import make_git_repo

ARMS = ("baseline-repo-search", "baseline-projects", "retrieval-mcp")
QUESTIONS = 40
FILE_LINES = 5000
KINDS = ("decision-why", "blocker", "what-changed", "how-to", "who-owns")

# Runs `flightdeck knowledge rate` whether or not the knowledge group has the command yet.
LAUNCHER = """
import sys
from flightdeck.cli.knowledge import knowledge
if "rate" not in knowledge.commands:
    from flightdeck.cli.rating import rate_command
    knowledge.add_command(rate_command)
from flightdeck.cli import main
sys.argv = ["flightdeck", *sys.argv[1:]]
main()
"""


def build_repo(root: Path) -> tuple[Path, str]:
    """A repository of 40 files of 5,000 lines each (the issue's speed target)."""
    files = {
        f"docs/topic-{n:02d}.md": "".join(
            f"topic {n} line {i}: the team wrote something here\n" for i in range(1, FILE_LINES + 1)
        )
        for n in range(QUESTIONS)
    }
    (commit,) = make_git_repo(root, [files])
    return root, commit


def _sha(path: Path, name: str) -> str:
    data = subprocess.run(
        ["git", "-C", str(path), "show", f"HEAD:{name}"], capture_output=True, check=True
    ).stdout
    return hashlib.sha256(data).hexdigest()


@dataclass
class BigSuite:
    root: Path  # the project root: params.yaml, suites/
    suite: Path

    def labels(self) -> list[dict[str, Any]]:
        out = []
        for arm in ARMS:
            path = self.suite / "labels" / f"{arm}.jsonl"
            if path.exists():
                out += [json.loads(x) | {"arm": arm} for x in path.read_text().splitlines() if x]
        return out


def build_suite(tmp_path: Path, big_repo: tuple[Path, str]) -> BigSuite:
    """40 questions x 3 arms, each answer citing spans of the 5,000-line files."""
    repo, commit = big_repo
    suite = tmp_path / "suites" / "bench-v1"
    (suite / "answers").mkdir(parents=True)
    questions, keys = [], []
    answers: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    for n in range(QUESTIONS):
        qid, name = f"q{n:02d}", f"docs/topic-{n:02d}.md"
        digest = _sha(repo, name) if n == 0 else "0" * 64
        questions.append(
            {
                "id": qid,
                "question": f"What does topic {n} say?",
                "kind": KINDS[n % len(KINDS)],
                "as_of": {"team": commit},
                "scope": [],
            }
        )
        keys.append(
            {
                "id": qid,
                "answer_key": f"Topic {n} says the team wrote something.",
                "required_facts": [f"topic {n}", "the team wrote it", "it is written here"],
                "valid_sources": [{"uri": f"team/{name}", "sha256": digest}],
            }
        )
        for a, arm in enumerate(ARMS):
            line = 100 + 1000 * a + 37 * n
            answers[arm].append(
                {
                    "id": qid,
                    "answer": f"Answer {a} to {qid}: topic {n} line {line} says so.",
                    "citations": [
                        {"uri": f"team/{name}#L{line}-L{line + 4}", "sha256": digest},
                        {"uri": f"team/docs/topic-{(n + 1) % QUESTIONS:02d}.md", "sha256": digest},
                        {"uri": f"team/{name}#L{4990 - n}", "sha256": digest},
                    ],
                }
            )
    _write(suite / "questions.jsonl", questions)
    _write(suite / "keys.jsonl", keys)
    for arm, records in answers.items():
        _write(suite / "answers" / f"{arm}.jsonl", records)
    (tmp_path / "params.yaml").write_text(f"repos:\n  team: {repo}\n")
    return BigSuite(tmp_path, suite)


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@dataclass
class Server:
    """A `flightdeck knowledge rate --no-browser` process and the address it printed."""

    proc: subprocess.Popen[bytes]
    url: str
    output: list[str] = field(default_factory=list)

    def kill(self) -> None:
        """SIGKILL: no chance to clean up, as when a terminal is closed."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def start_server(project: BigSuite, rater: str, *extra: str) -> Server:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("DISPLAY", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, "knowledge", "rate", str(project.suite)]
        + ["--rater", rater, "--no-browser", *extra],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        buffer += chunk
        *done, buffer = buffer.split(b"\n")
        lines += [line.decode() for line in done]
        for line in lines:
            if line.startswith("http://127.0.0.1:"):
                return Server(proc, line.strip(), lines)
    Server(proc, "", lines).kill()
    raise AssertionError("the server printed no address:\n" + "\n".join(lines))
