"""References between documents, however they are written, resolved to workspace paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.standin_repo import check_citations, workspace

from flightdeck.arms.agents.references import References
from flightdeck.arms.agents.repo_search import search

PATHS = [
    "infra/docs/decisions/0003-use-consul.md",
    "infra/docs/decisions/0011-use-etcd.md",
    "infra/docs/decisions/adr-012-use-vault.md",
    "infra/docs/guide/index.rst",
    "infra/docs/guide/upgrade.rst",
    "infra/docs/ops/runbook.adoc",
    "infra/README.md",
    "other/README.md",
]


@pytest.mark.parametrize(
    ("path", "line", "expected"),
    [
        pytest.param(PATHS[0], "Superseded by [ADR 11](0011-use-etcd.md)", [1], id="relative"),
        pytest.param(PATHS[0], "see [x](/docs/decisions/0011-use-etcd.md#status)", [1], id="root"),
        pytest.param(
            PATHS[0],
            "Superseded by https://github.com/acme/infra/blob/main/README.md and "
            "[ADR-11](https://gitlab.com/acme/infra/-/blob/v2/docs/decisions/0011-use-etcd.md)",
            [1],
            id="forge-urls",
        ),
        pytest.param(PATHS[0], "Status: superseded by ADR-0011", [1], id="number"),
        pytest.param(PATHS[0], "Replaced by ADR 12 and RFC 99", [2], id="number-prefixed-file"),
        pytest.param(PATHS[3], "Moved to :doc:`the upgrade guide <upgrade>`", [4], id="rst-doc"),
        pytest.param(
            PATHS[5], "See xref:../../README.md[the readme] and <<x.adoc>>", [6], id="adoc"
        ),
        pytest.param(
            PATHS[0], "Superseded by [a page](https://example.com/a.md)", [], id="elsewhere"
        ),
        pytest.param(PATHS[0], "Superseded by [ADR 3](0003-use-consul.md)", [], id="itself"),
    ],
)
def test_references_resolve_to_workspace_paths(path: str, line: str, expected: list[int]) -> None:
    refs = References({p: n for n, p in enumerate(PATHS)})
    assert refs.files(path, line) == expected


OLD = """\
# Use Consul for service discovery

Status: Superseded by ADR-0011 (etcd), 2024-06.

## Context

We needed service discovery for the VMs.

## Decision

Run a three-node Consul cluster.
"""

NEW = """\
# Use etcd for service discovery

Status: Accepted. This record supersedes ADR-0003.

## Context

Consul's licence changed to the BSL, and the clusters already run etcd for Kubernetes.

## Decision

Service discovery moves to the Kubernetes API backed by etcd; the Consul cluster is shut
down by the end of Q3.
"""


def test_a_superseded_record_named_by_number_is_followed_to_its_successor(
    tmp_path: Path,
) -> None:
    """No link: "Superseded by ADR-0011" names the file 0011-... beside it."""
    root = workspace(
        tmp_path,
        "infra",
        {"docs/decisions/0003-use-consul.md": OLD, "docs/decisions/0011-use-etcd.md": NEW},
    )
    result = search(root, "Do we still run Consul for service discovery?", kind="what-changed")
    assert "Consul's licence changed to the BSL" in result.answer
    cited = check_citations(root, result)
    assert "infra/docs/decisions/0011-use-etcd.md" in cited
