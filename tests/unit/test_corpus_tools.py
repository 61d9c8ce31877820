"""benchmarks/corpus_tools.py: one tool for every held-out corpus folder (#23).

The commit ids below were printed by the per-corpus ``build_repos.py`` scripts this tool
replaced (v1's and v2's, at 3b6011b), run on the same synthetic upstream: the shared tool
with each corpus's ``corpus.json`` makes the same bundles, byte for byte in their commits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.corpus_tools import Corpus, build, main
from tests.gitrepo import make_git_repo

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = [
    {
        "README.md": "# Hello\n",
        "src/main.go": "package main\n",
        "CODEOWNERS": "* @team\n",
        "docs/page.html.md.erb": "<%= x %>\n",
        "LICENSE": "MIT\n",
        "MAINTAINERS": "ada\n",
        "OWNERS_ALIASES": "x\n",
    },
    {"README.md": "# Hello again\n", "docs/adr/0001.md": "# Use Postgres\n", "src/main.go": None},
]
V1_KEEPS = ["CODEOWNERS", "LICENSE", "OWNERS_ALIASES", "README.md", "docs/page.html.md.erb"]


def _synthetic(tmp_path: Path, corpus: str) -> tuple[Corpus, list[str]]:
    """The corpus folder's corpus.json with one repository: the synthetic upstream."""
    upstream = make_git_repo(tmp_path / "up", UPSTREAM)
    assert upstream == [  # the upstream itself, as the old scripts were run on it
        "df164287ebfeccbfe7992c0fb0e7c18524ffc59b",
        "3d66cdcf706558ea5d8a36b4d24b0b79ffab9e95",
    ]
    data = json.loads((ROOT / "benchmarks" / corpus / "corpus.json").read_text())
    data["repositories"] = [
        {
            "name": "syn",
            "github": "owner/syn",
            "licence": "MIT",
            "snapshots": [
                {"tag": "first", "upstream_commit": upstream[0]},
                {"tag": "second", "upstream_commit": upstream[1]},
            ],
        }
    ]
    folder = tmp_path / corpus
    folder.mkdir()
    (folder / "corpus.json").write_text(json.dumps(data))
    return Corpus.read(folder), upstream


def _files(bundle: Path, tag: str, tmp_path: Path) -> list[str]:
    clone = tmp_path / f"clone-{tag}"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(clone)], check=True)
    listed = subprocess.run(
        ["git", f"--git-dir={clone}", "ls-tree", "-r", "--name-only", tag],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.splitlines()


@pytest.mark.parametrize(
    ("corpus", "commits", "kept"),
    [
        pytest.param(
            "heldout-public",
            [
                "c9e6d586bdb3b4a5c758b7879a70a96f0c5251a2",
                "d4cde24b2936af4590aa727812fb99575d89dc59",
            ],
            V1_KEEPS,
            id="v1",
        ),
        pytest.param(
            "heldout-public-v2",
            [
                "20164bea1b59cb22cc3aaefe89aeeeaf9e85b7ec",
                "71f2fbb3c48332d73982766c5bd64436310f3dbd",
            ],
            sorted([*V1_KEEPS, "MAINTAINERS"]),
            id="v2",
        ),
    ],
)
def test_build_makes_the_commits_the_old_script_of_the_corpus_made(
    tmp_path: Path, corpus: str, commits: list[str], kept: list[str]
) -> None:
    read, _ = _synthetic(tmp_path, corpus)
    made = build(read, read.repositories[0], tmp_path / "up" / ".git", tmp_path / "out")
    assert [commit for _, commit in made] == commits
    bundle = tmp_path / "out" / "syn.bundle"
    assert _files(bundle, "first", tmp_path) == kept
    assert "docs/adr/0001.md" in _files(bundle, "second", tmp_path)
    assert "src/main.go" not in _files(bundle, "second", tmp_path)


@pytest.mark.parametrize(
    ("corpus", "last"),
    [
        pytest.param("heldout-public", "46 keys, 0 problems", id="v1"),
        pytest.param("heldout-public-v2", "45 keys, 0 problems", id="v2"),
    ],
)
def test_check_facts_passes_on_each_frozen_corpus(corpus: str, last: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.corpus_tools", "check-facts", f"benchmarks/{corpus}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == last


def test_a_folder_that_is_not_a_corpus_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit, match="2"):
        main(["check-facts", str(tmp_path)])
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"corpus_tools.py: error: {tmp_path}: no suite/questions.jsonl there; name a corpus folder"
    )
