"""Build a small but complete flightdeck project for tests: a real repo, a suite, arms.

The repository ``sdlc`` has two commits: ``as_of`` (what the questions pin) and a later one
that edits the decision record, so a citation hashed from HEAD is stale.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.gitrepo import make_git_repo

from flightdeck.params import Params
from flightdeck.project import Project
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder

if TYPE_CHECKING:
    from collections.abc import Mapping

    from flightdeck.suite.repos import RepoSet

FILES_AS_OF = {
    "docs/adr/0001-database.md": "# ADR 1: Postgres\n\nWe chose Postgres for JSONB support.\n",
    "docs/runbooks/deploy.md": "# Deploy\n\n1. Run make release.\n2. Tag the commit.\n",
    "docs/runbooks/old/deploy-v0.md": "# Old deploy\n\nUse the shell script.\n",
    "CODEOWNERS": "docs/ @ada\nsrc/ @grace\n",
    "CHANGELOG.md": "## 2.0\n\n- Dropped Python 3.9.\n",
}
FILES_LATER = {"docs/adr/0001-database.md": "# ADR 1: Postgres (superseded)\n\nNow SQLite.\n"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


QUESTIONS = [
    ("q1", "Why did we choose Postgres?", "decision-why", "docs/adr/0001-database.md", ["JSONB"]),
    ("q2", "How do we deploy?", "how-to", "docs/runbooks/deploy.md", ["make release"]),
    ("q3", "Who owns the docs?", "who-owns", "CODEOWNERS", ["@ada"]),
    ("q4", "What changed in 2.0?", "what-changed", "CHANGELOG.md", ["Python 3.9"]),
]

# What a right answer to each of QUESTIONS says (BuiltProject.write_arm cites the question's source).
RIGHT_ANSWERS = ["Postgres, for JSONB.", "make release, then tag.", "@ada", "Dropped Python 3.9."]


@dataclass
class BuiltProject:
    root: Path
    suite: Path
    repo: Path
    as_of: str
    later: str

    @property
    def folder(self) -> SuiteFolder:
        """The suite as the task modules take it: its folder in this project."""
        return SuiteFolder(self.suite, ProjectPaths(self.root))

    def source(self, path: str) -> dict[str, str]:
        return {"uri": f"sdlc/{path}", "sha256": sha(FILES_AS_OF[path])}

    def write_answers(self, arm: str, records: list[dict[str, Any]]) -> Path:
        return write_jsonl(self.suite / "answers" / f"{arm}.jsonl", records)

    def write_labels(self, arm: str, records: list[dict[str, Any]]) -> Path:
        return write_jsonl(self.suite / "labels" / f"{arm}.jsonl", records)

    def write_arm(self, arm: str, correct: list[bool]) -> list[dict[str, Any]]:
        """An arm ready to score: the right answer to each of the first ``len(correct)``
        questions, citing its source as it was at as_of, labelled ``correct[i]`` by both
        ada and bob, and its meta. Returns the answers written."""
        records = [
            answer(self, qid, text, [path])
            for (qid, *_, path, _), text in zip(QUESTIONS, RIGHT_ANSWERS, strict=True)
        ][: len(correct)]
        self.write_answers(arm, records)
        self.write_labels(arm, labels_for(records, {"ada": correct, "bob": correct}))
        self.write_meta(arm)
        return records

    def write_meta(self, arm: str, **fields: Any) -> Path:
        meta = {
            "runner": "person",
            "by": "ada",
            "date": "2026-11-01",
            "model": "chat-model-1",
            "knowledge_snapshot": {"sdlc": self.as_of},
        } | fields
        path = self.suite / "answers" / f"{arm}.meta.json"
        path.write_text(json.dumps(meta))
        return path


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def project_repos(root: Path, repos: Mapping[str, Path]) -> RepoSet:
    """The repositories ``repos`` of the project at ``root``, opened the one way flightdeck
    opens them: ``Project.repos``, bundles cloned into the project's cache."""
    return Project(Params(root=root, repos=dict(repos))).repos


def build_project(root: Path, *, name: str = "demo-v1") -> BuiltProject:
    """A project folder with params.yaml, the sdlc repo and an unsealed suite."""
    repo = root / "repos" / "sdlc"
    as_of, later = make_git_repo(repo, [FILES_AS_OF, FILES_LATER])
    suite = root / "suites" / name
    questions, keys = [], []
    for qid, text, kind, path, facts in QUESTIONS:
        questions.append(
            {"id": qid, "question": text, "kind": kind, "as_of": {"sdlc": as_of}, "scope": []}
        )
        keys.append(
            {
                "id": qid,
                "answer_key": f"See {path}.",
                "required_facts": facts,
                "valid_sources": [{"uri": f"sdlc/{path}", "sha256": sha(FILES_AS_OF[path])}],
            }
        )
    write_jsonl(suite / "questions.jsonl", questions)
    write_jsonl(suite / "keys.jsonl", keys)
    (root / "params.yaml").write_text(
        "seed: 0\nresamples: 2000\nconfidence: 0.95\nthreshold: 15\nmin_raters: 2\n"
        "gate_margin: 10\nholdouts: holdouts\nrepos:\n  sdlc: repos/sdlc\n"
    )
    return BuiltProject(root, suite, repo, as_of, later)


def copy_project(template: BuiltProject, root: Path) -> BuiltProject:
    """``template``'s files (the repository's .git too) copied into ``root``: the same
    commits, for the price of a copy instead of a ``git init`` and two commits."""
    shutil.copytree(template.root, root, symlinks=True, dirs_exist_ok=True)
    moved = {
        name: root / getattr(template, name).relative_to(template.root)
        for name in ("suite", "repo")
    }
    return BuiltProject(root, moved["suite"], moved["repo"], template.as_of, template.later)


def answer(project: BuiltProject, qid: str, text: str, paths: list[str]) -> dict[str, Any]:
    """An answer citing files as they were at as_of."""
    return {"id": qid, "answer": text, "citations": [project.source(p) for p in paths]}


def labels_for(arm_answers: list[dict[str, Any]], votes: dict[str, list[bool]]) -> list[dict]:
    """Labels by each rater, in order: ``votes[rater][i]`` rates ``arm_answers[i]``."""
    out = []
    for rater, marks in votes.items():
        for record, correct in zip(arm_answers, marks, strict=True):
            out.append({"id": record["id"], "rater": rater, "correct": correct, "unsupported": []})
    return out
