"""The report splits "fabricated" (#21): a real file that is not a valid source, no such file.

Both stay fabricated as the product page defines it (the uri matches no valid source), so
`citations.fabricated` is unchanged; the split is counted beside it and the report says it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.builders import FILES_AS_OF, BuiltProject, labels_for, sha

from flightdeck.params import load_params
from flightdeck.project.results import score
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

CITED = {
    "q1": ["sdlc/docs/adr/0001-database.md", "sdlc/CODEOWNERS"],  # valid; real file, not q1's
    "q2": ["sdlc/docs/runbooks/missing.md"],  # no such file at as_of
    "q3": ["https://wiki.example/owners"],  # opaque
    "q4": ["infra/README.md", "sdlc/docs/adr/0001-database.md#L1-L2"],  # not in as_of; real
}


@pytest.fixture
def scored_project(project: BuiltProject) -> BuiltProject:
    repos = RepoSet({"sdlc": project.repo}, project.root / "cache")
    seal(project.folder, repos=repos, holdouts=project.root / "holdouts")
    records = [
        {"id": qid, "answer": f"answer {qid}", "citations": [cite(u) for u in uris]}
        for qid, uris in CITED.items()
    ]
    project.write_answers("arm", records)
    project.write_labels("arm", labels_for(records, {"ana": [True] * 4, "ravi": [True] * 4}))
    return project


def cite(uri: str) -> dict[str, str]:
    """A citation of ``uri``: hashed from as_of when it is a file there, else any hash."""
    path = uri.removeprefix("sdlc/").split("#")[0]
    return {"uri": uri, "sha256": sha(FILES_AS_OF[path]) if path in FILES_AS_OF else "0" * 64}


def citations_of(root: Path) -> dict[str, int]:
    metrics = json.loads((root / "metrics" / "demo-v1.json").read_text())
    got: dict[str, int] = metrics["arms"]["arm"]["citations"]
    return got


def test_fabricated_is_split_by_what_is_at_as_of(scored_project: BuiltProject) -> None:
    root = scored_project.root
    score(scored_project.suite, ["arm"], params=load_params(root / "params.yaml"))
    assert citations_of(root) == {
        "valid": 1,
        "fabricated": 5,  # the product page's count, unchanged
        "stale": 0,
        "unsupported": 0,
        "fabricated_not_a_source": 2,  # CODEOWNERS for q1, the ADR for q4
        "fabricated_no_such_file": 2,  # missing.md, and infra/ which q4 does not pin
        "fabricated_opaque": 1,
        "fabricated_not_checked": 0,
    }
    report = (root / "reports" / "demo-v1.md").read_text()
    assert (
        "- arm: 5 fabricated citations: 2 not a valid source (file exists at as_of), "
        "2 no such file, 1 not a repository file (an opaque uri)."
    ) in report


def test_without_the_repository_they_are_not_looked_up(scored_project: BuiltProject) -> None:
    root = scored_project.root
    (root / "params.yaml").write_text("resamples: 500\nholdouts: holdouts\n")
    score(scored_project.suite, ["arm"], params=load_params(root / "params.yaml"))
    got = citations_of(root)
    assert got["fabricated"] == 5
    assert (got["fabricated_not_checked"], got["fabricated_no_such_file"]) == (3, 1)
    assert got["fabricated_opaque"] == 1
    report = (root / "reports" / "demo-v1.md").read_text()
    assert "3 not looked up (repository not at hand)" in report
