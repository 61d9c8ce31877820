"""The second held-out public corpus (issue 24): its keys hold, and the checker of keys can fail.

The corpus is frozen (benchmarks/heldout-public-v2/README.md): these tests never change it,
they check that every required fact is in one of its valid sources at the question's
``as_of`` (``benchmarks/corpus_tools.py check-facts``), that ``flightdeck knowledge check`` passes on it, and that
the suite keeps the shape the README states. A copy with one fact changed shows the
checker is not a test that cannot fail. ``bench_standin --corpus`` builds a project from it
that ``knowledge seal`` accepts (the arm itself runs in the benchmark, not here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "heldout-public-v2"
KINDS = {"decision-why", "blocker", "what-changed", "how-to", "who-owns"}
REPOS = {"tdr-docs": 18, "rke2": 15, "terraform-aws-eks": 12}
CHECK_FACTS = [sys.executable, "-m", "benchmarks.corpus_tools", "check-facts"]


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, check=False)


def test_every_required_fact_is_in_a_valid_source_at_as_of() -> None:
    done = _run(CHECK_FACTS + [str(CORPUS)], CORPUS.parents[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "45 keys, 0 problems"


def test_knowledge_check_passes_on_the_suite() -> None:
    done = _run([sys.executable, "-m", "flightdeck", "knowledge", "check", "suite"], CORPUS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every seal check passes" in done.stdout


def test_the_suite_has_the_shape_its_readme_states() -> None:
    questions = _jsonl(CORPUS / "suite" / "questions.jsonl")
    keys = _jsonl(CORPUS / "suite" / "keys.jsonl")
    assert [q["id"] for q in questions] == [k["id"] for k in keys]
    assert len({q["id"] for q in questions}) == 45
    kinds = Counter(str(q["kind"]) for q in questions)
    assert set(kinds) == KINDS
    assert min(kinds.values()) >= 5
    repos = Counter(next(iter(q["as_of"])) for q in questions)  # type: ignore[call-overload]
    assert repos == REPOS
    assert all("canary" not in k for k in keys), "the frozen suite is unsealed; runs seal a copy"


def test_every_as_of_is_a_bundle_commit_by_the_fixed_author(tmp_path: Path) -> None:
    pinned: dict[str, set[str]] = {}
    for question in _jsonl(CORPUS / "suite" / "questions.jsonl"):
        for repo, commit in question["as_of"].items():  # type: ignore[attr-defined]
            pinned.setdefault(repo, set()).add(commit)
    for repo, commits in pinned.items():
        clone = tmp_path / repo
        bundle = CORPUS / "repos" / f"{repo}.bundle"
        assert (
            _run(["git", "clone", "-q", "--bare", str(bundle), str(clone)], tmp_path).returncode
            == 0
        )
        for commit in commits:
            shown = _run(
                ["git", f"--git-dir={clone}", "log", "-1", "--format=%an", commit], tmp_path
            )
            assert shown.stdout.strip() == "flightdeck heldout corpus v2", (
                repo,
                commit,
                shown.stderr,
            )


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        pytest.param(
            "a fact no document of the corpus states",
            "v2-01: fact 'a fact no document of the corpus states' is in none of its valid sources",
            id="fact-absent",
        ),
        pytest.param(
            "Restricted   NETWORKS",
            None,
            id="case-and-spaces-normalised",
        ),
    ],
)
def test_check_facts_names_a_fact_missing_from_its_sources(
    tmp_path: Path, fact: str, expected: str | None
) -> None:
    copy = tmp_path / "corpus"
    (copy / "suite").mkdir(parents=True)
    shutil.copytree(CORPUS / "repos", copy / "repos")
    shutil.copyfile(CORPUS / "suite" / "questions.jsonl", copy / "suite" / "questions.jsonl")
    keys = _jsonl(CORPUS / "suite" / "keys.jsonl")
    keys[0]["required_facts"] = [fact]
    (copy / "suite" / "keys.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys))
    done = _run(CHECK_FACTS + [str(copy)], CORPUS.parents[1])
    if expected is None:
        assert done.returncode == 0, done.stdout
    else:
        assert done.returncode == 1
        assert done.stdout.splitlines() == [expected, "45 keys, 1 problems"]


def test_bench_standin_builds_a_sealable_project_from_the_v2_corpus(tmp_path: Path) -> None:
    from benchmarks import bench_standin

    suite = bench_standin.make_project(tmp_path, CORPUS)
    assert suite == tmp_path / "suites" / "heldout-public-v2"
    assert bench_standin.suite_name(bench_standin.CORPUS) == "heldout-public-v1"
    params = (tmp_path / "params.yaml").read_text().splitlines()
    assert params == [
        "repos:",
        *(f"  {name}: {CORPUS.resolve() / 'repos' / name}.bundle" for name in sorted(REPOS)),
    ]
    sealed = _run(
        [sys.executable, "-m", "flightdeck", "knowledge", "seal", "suites/heldout-public-v2"]
        + ["--holdouts", "holdouts"],
        tmp_path,
    )
    assert sealed.returncode == 0, sealed.stdout + sealed.stderr
    assert len(_jsonl(suite / "keys.jsonl")) == 45


def test_bench_standin_refuses_a_folder_that_is_not_a_corpus(tmp_path: Path) -> None:
    done = _run(
        [sys.executable, "-m", "benchmarks.bench_standin", "--corpus", str(tmp_path)],
        CORPUS.parents[1],
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"bench_standin.py: error: --corpus {tmp_path}: no suite/questions.jsonl there;"
        " name a corpus folder"
    )
