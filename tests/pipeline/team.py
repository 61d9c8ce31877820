"""A team's project made by `flightdeck init`, driven by params.yaml alone: the one builder.

Two repositories (git bundles under vendor/), a four-question suite whose keys leave sha256
to seal, the arms params.yaml names (harnesses and people's imports), a person's
`;`-separated export with its attachments, and two raters' labels. ``test_second_project``
and ``test_project_kinds`` build their projects here, each with its own arms and votes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from tests.gitrepo import make_bundle, make_git_repo
from tests.pipeline.project import BIN, Pipeline, tool_env

APP = {
    "README.md": "# app\n\nThe billing app.\n",
    "docs/adr/0007-queues.md": "# ADR 7\n\nWe use SQS for queues: at-least-once delivery.\n",
    "docs/runbooks/release.md": "# Release\n\nRun make ship, then tag vX.Y.\n",
}
INFRA = {
    "README.md": "# infra\n",
    "OWNERS": "terraform/ @grace\nk8s/ @linus\n",
    "docs/incidents/2026-03-dns.md": "# DNS outage\n\nA TTL of 0 overloaded the resolvers.\n",
}
QUESTIONS = [
    ("t1", "Why do we use SQS for queues?", "decision-why", "app", "docs/adr/0007-queues.md",
     "SQS"),
    ("t2", "How do we release the app?", "how-to", "app", "docs/runbooks/release.md", "make ship"),
    ("t3", "Who owns the terraform code?", "who-owns", "infra", "OWNERS", "@grace"),
    ("t4", "What caused the DNS outage?", "blocker", "infra", "docs/incidents/2026-03-dns.md",
     "TTL"),
]  # fmt: skip
PIN = "git+https://github.com/acme/flightdeck@0123456789abcdef0123456789abcdef01234567"
EXPORT = (
    "id;answer;citations\n"
    't1;"SQS, for at-least-once delivery";app/docs/adr/0007-queues.md\n'
    "t2;Run make ship;app/docs/runbooks/release.md\n"
    "t3;@grace owns terraform;infra/OWNERS\n"
    "t4;No idea;\n"
)  # semicolons, as a European spreadsheet writes it


def person(suite: str, **changes: str) -> dict[str, str]:
    """A person's import as params.yaml ``people`` names it: the export and its attachments."""
    return {
        "from": f"exports/{suite}.csv",
        "by": "Grace Hopper",
        "model": "Team Chat (model-x)",
        "date": "2026-11-20",
        "snapshot": "exports/attachments",
    } | changes


@dataclass(frozen=True)
class Team:
    """What a team writes: its suite's name, arms (harness commands, people's imports) and
    each arm's votes (both raters agree), in params.yaml's order of ``arms``."""

    suite: str
    harnesses: Mapping[str, str] = field(default_factory=dict)
    people: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    votes: Mapping[str, Sequence[bool]] = field(default_factory=dict)
    gitignore: str | None = None  # a .gitignore the team had before init
    scaffold: bool = False  # start the suite with `knowledge new`, as the team would

    @property
    def arms(self) -> list[str]:
        return [*self.harnesses, *self.people]


def flightdeck(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "flightdeck"), *args],
        cwd=root,
        env=tool_env(home),
        capture_output=True,
        text=True,
        check=False,
    )


def jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def build_team(root: Path, home: Path, sources: Path, team: Team) -> tuple[Pipeline, bytes]:
    """The team's project, committed (not yet run), and the dvc.yaml `init` wrote."""
    project = Pipeline(root, home)
    project.git("init", "--quiet", "--initial-branch=main")
    if team.gitignore is not None:
        (root / ".gitignore").write_text(team.gitignore)
    init = flightdeck(root, home, "init", "--suite", team.suite, "--install", PIN)
    assert init.returncode == 0, init.stderr
    dvc_yaml = (root / "dvc.yaml").read_bytes()
    app_as_of, _ = make_git_repo(sources / "app", [APP, {"README.md": "# app v2\n"}])
    (infra_as_of,) = make_git_repo(sources / "infra", [INFRA])
    (root / "vendor").mkdir()
    make_bundle(sources / "app", root / "vendor" / "app.bundle")
    make_bundle(sources / "infra", root / "vendor" / "infra.bundle")
    arms = team.arms
    # params.yaml is the only pipeline file the team edits
    params = yaml.safe_load((root / "params.yaml").read_text())
    params.update(
        repos={"app": "vendor/app.bundle", "infra": "vendor/infra.bundle"},
        harnesses=dict(team.harnesses),
        people={arm: dict(spec) for arm, spec in team.people.items()},
        arms=arms,
        baseline=arms[0],
        candidate=arms[1],
        pinned=arms[0],
        resamples=2000,
    )
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    folder = f"suites/{team.suite}"
    if team.scaffold:  # a short hash and a branch, resolved to full commits
        args = ("--as-of", f"app={app_as_of[:8]}", "--as-of", "infra=main")
        new = flightdeck(root, home, "knowledge", "new", folder, *args)
        assert new.returncode == 0, new.stderr
    suite = root / folder
    questions, keys = [], []
    for qid, text, kind, repo, path, fact in QUESTIONS:
        as_of = {"app": app_as_of, "infra": infra_as_of}
        questions.append({"id": qid, "question": text, "kind": kind, "as_of": as_of, "scope": []})
        keys.append(
            {
                "id": qid,
                "answer_key": f"See {path}.",
                "required_facts": [fact],
                "valid_sources": [{"uri": f"{repo}/{path}"}],  # sha256 left for seal
            }
        )
    jsonl(suite / "questions.jsonl", questions)
    jsonl(suite / "keys.jsonl", keys)
    if team.people:
        export = root / "exports" / f"{team.suite}.csv"
        export.parent.mkdir()
        export.write_text(EXPORT)
        for repo, files in (("app", APP), ("infra", INFRA)):
            for name, text in files.items():
                target = root / "exports" / "attachments" / repo / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
    for arm in arms:
        labels = [
            {"id": qid, "rater": rater, "correct": vote, "unsupported": []}
            for rater in ("ana", "ravi")
            for (qid, *_), vote in zip(QUESTIONS, team.votes[arm], strict=True)
        ]
        jsonl(suite / "labels" / f"{arm}.jsonl", labels)
    project.commit(f"a team's project: init, params.yaml, the suite {team.suite}")
    return project, dvc_yaml
