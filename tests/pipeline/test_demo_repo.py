"""The shipped demo repository is what demo/build_sdlc_repo.py builds, on any machine.

The bundle's bytes may differ between git versions, so the commit ids are compared: the ids
of every ref and the whole history. The person's attachments are rebuilt and compared too.
"""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.pipeline.project import ROOT, SUITE, git

BUILD = ROOT / "demo" / "build_sdlc_repo.py"
BUNDLE = ROOT / "demo" / "sdlc.bundle"


def _heads(bundle: Path) -> dict[str, str]:
    out = git(bundle.parent, "bundle", "list-heads", str(bundle))
    return {ref: oid for oid, ref in (line.split() for line in out.splitlines())}


def _history(bundle: Path, into: Path) -> list[str]:
    git(into.parent, "clone", "--quiet", "--mirror", str(bundle), str(into))
    return git(into, "rev-list", "--all", "--topo-order").split()


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    tmp = tmp_path_factory.mktemp("demo")
    bundle, attachments = tmp / "sdlc.bundle", tmp / "attachments"
    proc = subprocess.run(
        [sys.executable, str(BUILD), "--out", str(bundle), "--attachments", str(attachments)]
        + ["--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return bundle, json.loads(proc.stdout), attachments


def test_rebuilt_bundle_has_the_shipped_commit_ids(rebuilt, tmp_path: Path) -> None:
    bundle, ids, _ = rebuilt
    assert _heads(bundle) == _heads(BUNDLE)
    assert _history(bundle, tmp_path / "a.git") == _history(BUNDLE, tmp_path / "b.git")
    assert _heads(BUNDLE)["refs/tags/v0.5.0"] == ids["as_of"]
    assert _heads(BUNDLE)["refs/heads/main"] == ids["head"]


def test_questions_pin_the_as_of_commit_and_main_is_later(rebuilt) -> None:
    _, ids, _ = rebuilt
    lines = (SUITE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    pinned = {json.loads(line)["as_of"]["sdlc"] for line in lines}
    assert pinned == {ids["as_of"]}
    assert ids["head"] != ids["as_of"]


def test_a_commit_after_as_of_edits_files_the_keys_cite(rebuilt, tmp_path: Path) -> None:
    bundle, ids, _ = rebuilt
    repo = tmp_path / "r.git"
    _history(bundle, repo)
    changed = set(git(repo, "diff", "--name-only", ids["as_of"], ids["head"]).split())
    cited = set()
    for line in (SUITE / "keys.jsonl").read_text(encoding="utf-8").splitlines():
        for source in json.loads(line)["valid_sources"]:
            cited.add(source["uri"].split("/", 1)[1].split("#")[0])
    assert {"docs/status.md", "docs/runbooks/rotate-api-keys.md", "CODEOWNERS"} <= changed & cited


def test_rebuilt_attachments_match_the_shipped_ones(rebuilt) -> None:
    _, _, attachments = rebuilt
    shipped = ROOT / "demo" / "projects-attachments"
    comparison = filecmp.dircmp(attachments, shipped)
    assert _same_tree(comparison), "rebuild demo/projects-attachments with build_sdlc_repo.py"


def _same_tree(cmp: filecmp.dircmp[str]) -> bool:
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_same_tree(s) for s in cmp.subdirs.values())
