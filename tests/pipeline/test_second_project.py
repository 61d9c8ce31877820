"""A second project made by `flightdeck init`, driven by params.yaml alone (#15).

Another suite, other arm names, two repositories (git bundles): the team writes params.yaml,
its suite (keys without sha256, which seal computes), a person's `;`-separated export and the
raters' labels, and never touches dvc.yaml. A real `dvc repro` takes it to a report.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.gitrepo import make_bundle, make_git_repo
from tests.pipeline.project import BIN, Pipeline, ran_stages, tool_env

SUITE = "team-gold-v1"
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
    (
        "t1",
        "Why do we use SQS for queues?",
        "decision-why",
        "app",
        "docs/adr/0007-queues.md",
        "SQS",
    ),
    ("t2", "How do we release the app?", "how-to", "app", "docs/runbooks/release.md", "make ship"),
    ("t3", "Who owns the terraform code?", "who-owns", "infra", "OWNERS", "@grace"),
    (
        "t4",
        "What caused the DNS outage?",
        "blocker",
        "infra",
        "docs/incidents/2026-03-dns.md",
        "TTL",
    ),
]


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


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    home = tmp_path_factory.mktemp("home")
    sources = tmp_path_factory.mktemp("sources")
    root = tmp_path_factory.mktemp("team")
    project = Pipeline(root, home)
    project.git("init", "--quiet", "--initial-branch=main")
    (root / ".gitignore").write_text("node_modules/\n")

    pin = "git+https://github.com/acme/flightdeck@0123456789abcdef0123456789abcdef01234567"
    init = flightdeck(root, home, "init", "--suite", SUITE, "--install", pin)
    assert init.returncode == 0, init.stderr
    dvc_yaml = (root / "dvc.yaml").read_bytes()

    app_as_of, _ = make_git_repo(sources / "app", [APP, {"README.md": "# app v2\n"}])
    (infra_as_of,) = make_git_repo(sources / "infra", [INFRA])
    (root / "vendor").mkdir()
    make_bundle(sources / "app", root / "vendor" / "app.bundle")
    make_bundle(sources / "infra", root / "vendor" / "infra.bundle")

    # params.yaml is the only pipeline file the team edits
    params = yaml.safe_load((root / "params.yaml").read_text())
    params.update(
        repos={"app": "vendor/app.bundle", "infra": "vendor/infra.bundle"},
        harnesses={"lexical": "python -m flightdeck experiment agent repo-search"},
        people={
            "chat-export": {
                "from": f"exports/{SUITE}.csv",
                "by": "Grace Hopper",
                "model": "Team Chat (model-x)",
                "date": "2026-11-20",
                "snapshot": "exports/attachments",
            }
        },
        arms=["lexical", "chat-export"],
        baseline="lexical",
        candidate="chat-export",
        pinned="lexical",
        resamples=2000,
    )
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))

    new = flightdeck(
        root,
        home,
        "knowledge",
        "new",
        f"suites/{SUITE}",
        "--as-of",
        f"app={app_as_of[:8]}",
        "--as-of",
        "infra=main",
    )
    assert new.returncode == 0, new.stderr
    suite = root / "suites" / SUITE
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

    # the person's export: semicolons, as a European spreadsheet writes it
    export = root / "exports" / f"{SUITE}.csv"
    export.parent.mkdir()
    export.write_text(
        "id;answer;citations\n"
        't1;"SQS, for at-least-once delivery";app/docs/adr/0007-queues.md\n'
        "t2;Run make ship;app/docs/runbooks/release.md\n"
        "t3;@grace owns terraform;infra/OWNERS\n"
        "t4;No idea;\n"
    )
    for repo, files in (("app", APP), ("infra", INFRA)):
        for name, text in files.items():
            target = root / "exports" / "attachments" / repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    for arm, votes in (
        ("lexical", [True, False, False, True]),
        ("chat-export", [True] * 3 + [False]),
    ):
        labels = [
            {"id": qid, "rater": rater, "correct": vote, "unsupported": []}
            for rater in ("ana", "ravi")
            for (qid, *_), vote in zip(QUESTIONS, votes, strict=True)
        ]
        jsonl(suite / "labels" / f"{arm}.jsonl", labels)

    project.commit("a team's project: init, params.yaml, the suite")
    project.first_run = project.dvc("repro")
    project.commit("dvc repro")
    assert (root / "dvc.yaml").read_bytes() == dvc_yaml  # never edited
    return project


def test_repro_runs_every_stage_of_the_params(team: Pipeline) -> None:
    assert team.first_run is not None
    stages = ran_stages(team.first_run.stdout)
    assert sorted(stages) == sorted(
        [
            "seal",
            "repo@app",
            "repo@infra",
            "run@lexical",
            "import@chat-export",
            "canary-scan@lexical",
            "canary-scan-import@chat-export",
            "score",
        ]
    )
    assert stages[-1] == "score"


def test_the_report_compares_the_params_arms(team: Pipeline) -> None:
    metrics = team.read_json(f"metrics/{SUITE}.json")
    assert isinstance(metrics, dict)
    assert set(metrics["arms"]) == {"lexical", "chat-export"}
    assert metrics["arms"]["chat-export"]["correctness"]["value"] == 0.75
    assert metrics["arms"]["lexical"]["correctness"]["value"] == 0.5
    assert metrics["arms"]["chat-export"]["citations"]["valid"] == 3
    assert set(metrics["comparisons"]) == {"chat-export_vs_lexical"}
    report = (team.root / "reports" / f"{SUITE}.md").read_text()
    assert report.startswith(f"# Knowledge evals: {SUITE}")
    keys = (team.root / "suites" / SUITE / "keys.jsonl").read_text().splitlines()
    assert all(len(json.loads(k)["valid_sources"][0]["sha256"]) == 64 for k in keys)


def test_show_and_gate_read_the_params(team: Pipeline) -> None:
    show = flightdeck(team.root, team.home, "knowledge", "show")
    assert show.returncode == 0, show.stderr
    lines = show.stdout.splitlines()
    assert lines[0] == (
        f"{SUITE}: chat-export is +25.0 points on correctness and -25.0 on citation validity "
        "against lexical: not shown to be 15 points better on correctness; worse on citation "
        "validity."
    )
    assert any(line.startswith("chat-export ") and "75.0%" in line for line in lines)
    gate = flightdeck(team.root, team.home, "knowledge", "gate", f"suites/{SUITE}")
    assert gate.returncode in (0, 1), gate.stderr
    assert "chat-export - lexical" in gate.stdout


def test_a_second_repro_is_up_to_date(team: Pipeline, tmp_path: Path) -> None:
    import shutil

    copy = Pipeline(tmp_path / "team", team.home)
    shutil.copytree(team.root, copy.root, symlinks=True)
    proc = copy.dvc("repro")
    assert ran_stages(proc.stdout) == []
    assert copy.git("status", "--porcelain") == ""
