"""The repo-search arm on material unlike the repositories it was developed on.

Each test builds a small real git repository (fixed author and dates, tests/gitrepo.py),
materialises its tree at the commit as a trial's workspace (``<repo>/<path>``, read from git
with ``git archive``) and asks the arm one question, checking what its answer quotes and
cites. None of the documents follows the conventions of the development corpora: records
without ADR numbers outside an ``adr/`` folder, release notes under another name, dated
status entries, reStructuredText and AsciiDoc runbooks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.standin_repo import check_citations, workspace

from flightdeck.arms.agents import kinds
from flightdeck.arms.agents.bm25 import terms_of
from flightdeck.arms.agents.repo_search import search

FILLER = "Nothing else of note happened in this release.\n"

RELEASES = f"""\
# Platform releases

## [Unreleased]

- Nothing yet.

## [2.1.0] - 2024-04-02

### Changed

- The ingress controller moved from nginx to Envoy Gateway.

### Removed

- The legacy metrics endpoint on port 9102.

## [2.0.0] - 2024-02-12

### Changed

- The ingress controller gained rate limits.
- {FILLER}
## [1.9.0] - 2023-12-01

### Changed

- The ingress controller logs in JSON.
"""


def test_release_notes_by_another_name_answer_for_the_version_asked(tmp_path: Path) -> None:
    """Three version headings make release notes (the file is not named CHANGELOG); the
    question's version picks its section, and the other releases are not quoted."""
    root = workspace(
        tmp_path,
        "platform",
        {
            "docs/platform-versions.md": RELEASES,
            "docs/ingress.md": "# Ingress\n\nThe ingress controller changed hands in 2.1: "
            "see the ingress controller guide for what changed and how the ingress works.\n",
        },
    )
    result = search(root, "What changed in platform release v2.1?", kind="what-changed")
    assert "Envoy Gateway" in result.answer
    assert "port 9102" in result.answer
    assert "gained rate limits" not in result.answer  # 2.0.0's section: not asked
    assert "platform/docs/platform-versions.md" in check_citations(root, result)


WEEKS = "".join(
    f"## 2023-{month:02d}-{day:02d}\n\nThe cutover is on track; the replication copy is at "
    f"{month * 7 + day}%.\nThe team reviewed the runbook and the rollback plan.\n\n"
    for month in (12, 11, 10, 9)
    for day in (25, 11)
)
STATUS = f"""\
# Data migration status

Newest first.

## 2024-04-08

The cutover is done; the old cluster is read-only.

## 2024-03-18

The cutover is blocked on the firewall change FW-311 for the replication link.

## 2024-01-22

The cutover is blocked on a capacity review of the new cluster's disks.

{WEEKS}"""


def test_a_dated_status_page_answers_for_the_month_asked(tmp_path: Path) -> None:
    root = workspace(tmp_path, "data", {"docs/migration/status.md": STATUS})
    result = search(root, "What was the cutover blocked on in March 2024?", kind="blocker")
    assert "FW-311" in result.answer
    assert "capacity review" not in result.answer  # January's entry: not asked
    assert check_citations(root, result)[0] == "data/docs/migration/status.md"


RECORD = """\
# Keep sessions in Postgres, not Memcached

## Status

Accepted, May 2024.

## Context

Memcached evictions logged users out during the spring sale: 3,100 support tickets in a week.

## Decision

Store sessions in the sessions table of the main Postgres cluster.

## Consequences

Logins survive a cache restart; the cluster gains 40 writes per second.
"""


def test_a_record_without_a_number_or_an_adr_folder_is_read_as_a_decision(
    tmp_path: Path,
) -> None:
    """Its headings (status, context, decision, consequences) make it a decision record."""
    root = workspace(
        tmp_path,
        "web",
        {
            "docs/architecture/sessions.md": RECORD,
            "docs/caching.md": "# Caching\n\nWe use Memcached for page fragments and "
            "Postgres for the rest: sessions, carts and orders.\n",
        },
    )
    result = search(
        root, "Why did we move sessions from Memcached to Postgres?", kind="decision-why"
    )
    record = "web/docs/architecture/sessions.md"
    titles = [line for line in RECORD.split("\n") if line.startswith("#")]
    assert kinds.content_classes(titles) == {"decision"}
    assert kinds.file_weight("decision-why", record, frozenset({"decision"})) > kinds.file_weight(
        "decision-why", record
    )
    assert "3,100 support tickets" in result.answer
    assert "survive a cache restart" in result.answer
    assert check_citations(root, result)[0] == record


RST_RUNBOOK = """\
=====================
Restoring the replica
=====================

Before you start
================

Tell the on-call channel before you touch the replica host, and check
that the primary is healthy: a restore of the replica from the base backup
while the primary is failing over makes both of them unusable for an hour.
Read the whole runbook first.

Restore the base backup
=======================

The replica is restored from the newest base backup in the backup bucket.
The restore of the replica takes about forty minutes for the main cluster;
the base backup must be younger than a day, or restore the replica from the
next one after it lands.

Stop the service with ``systemctl stop pg-replica`` and run
``pgbackrest --stanza=main restore --delta``, then start it again with
``systemctl start pg-replica``. Lag falls under 30 seconds within the hour,
and the dashboard turns green.
"""

ADOC_RUNBOOK = """\
= Rotating the signing key

== Steps

. Generate the key with `make signing-key`.
. Upload it with `vault kv put secret/signing key=@key.pem`.

== Rollback

Restore the previous version with `vault kv rollback -version=1 secret/signing`.
"""


def test_rst_and_asciidoc_runbooks_are_quoted_by_their_sections(tmp_path: Path) -> None:
    root = workspace(
        tmp_path,
        "ops",
        {"runbooks/replica.rst": RST_RUNBOOK, "runbooks/signing-key.adoc": ADOC_RUNBOOK},
    )
    result = search(root, "How do I restore the replica from the base backup?", kind="how-to")
    assert "pgbackrest --stanza=main restore --delta" in result.answer
    assert check_citations(root, result)[0] == "ops/runbooks/replica.rst"
    result = search(root, "How do I roll back the signing key rotation?", kind="how-to")
    assert "vault kv rollback -version=1 secret/signing" in result.answer
    assert check_citations(root, result)[0] == "ops/runbooks/signing-key.adoc"


STEPS = "".join(
    f"{n}. Check node group {n} of the fleet with `kubectl get nodes -l group={n}`; it must\n"
    "   report every node Ready before you go on, or the drain stalls.\n\n"
    for n in range(1, 25)
)
LONG_RUNBOOK = f"""\
# Rotating the fleet's nodes

## Procedure

{STEPS}25. Finish with `make fleet-rotate-finish CLUSTER=<name>`; it uncordons the last group.

## Related

The capacity dashboard.
"""


def test_a_long_runbook_section_is_quoted_past_its_first_screen(tmp_path: Path) -> None:
    """The procedure is longer than a passage (60 lines): its last step is in the next piece."""
    root = workspace(tmp_path, "fleet", {"docs/rotate-nodes.md": LONG_RUNBOOK})
    result = search(root, "What is the procedure for rotating the fleet's nodes?", kind="how-to")
    assert "make fleet-rotate-finish CLUSTER=<name>" in result.answer
    assert "1. Check node group 1 of the fleet" in result.answer
    assert set(check_citations(root, result)) == {"fleet/docs/rotate-nodes.md"}


FILLER_LINES = "".join(
    f"The style checker reads rule file number {n} from the styles folder at start-up.\n"
    for n in range(1, 21)
)
LINT_README = f"""\
# Handbook

## Checking the prose

Run the prose checker on your machine before you push:

    make prose-check

{FILLER_LINES}
### When the checker rejects a product name

Add the product name to `styles/vocab/accept.txt`, one word a line, in order.
{FILLER_LINES}"""


def test_a_long_section_is_quoted_where_it_answers_both_parts_of_a_question(
    tmp_path: Path,
) -> None:
    """Too long to quote whole: the quote keeps the line that matches most and starts as early
    as its room allows, so the first part's answer above it is kept too."""
    root = workspace(tmp_path, "docs", {"README.md": LINT_README})
    result = search(
        root,
        "How do I run the prose checker, and what if the checker rejects a product name?",
        kind="how-to",
    )
    assert "make prose-check" in result.answer
    assert "styles/vocab/accept.txt" in result.answer
    check_citations(root, result)


@pytest.mark.parametrize(
    ("question", "term"),
    [
        pytest.param("Why do we run more than one cluster?", "multi", id="phrase-to-prefix"),
        pytest.param("How do I upgrade k8s?", "kubernet", id="abbreviation"),
        pytest.param("Where are the Kubernetes docs?", "document", id="docs"),
        pytest.param("Who owns the database repo?", "repositori", id="repo"),
    ],
)
def test_a_question_also_asks_in_the_words_written_for_it(question: str, term: str) -> None:
    assert term in terms_of(question)


def test_a_multi_cluster_record_answers_a_question_about_more_than_one_cluster(
    tmp_path: Path,
) -> None:
    root = workspace(
        tmp_path,
        "platform",
        {
            "docs/adr/007-multi-cluster.md": "# Multi-cluster\n\n## Decision\n\nRun separate "
            "clusters per environment so an upgrade can be tried on a non-production one.\n",
            "docs/adr/003-one-cluster-for-apps.md": "# One cluster for the apps\n\n## Decision"
            "\n\nThe apps run in one cluster, with one namespace per app.\n",
        },
    )
    result = search(root, "Why do we run more than one cluster?", kind="decision-why")
    assert check_citations(root, result)[0] == "platform/docs/adr/007-multi-cluster.md"


@pytest.mark.parametrize(
    "name", ["OWNERS.md", "MAINTAINERS.txt", ".github/CODEOWNERS", "docs/ownership.md"]
)
def test_ownership_files_by_any_of_their_names(tmp_path: Path, name: str) -> None:
    root = workspace(
        tmp_path,
        "svc",
        {
            name: "# billing\n\n- billing service: @payments-team (Ana Silva)\n",
            "docs/billing.md": "# Billing\n\nThe billing service sends invoices and owns the "
            "ledger export; the billing service team answers billing questions.\n",
        },
    )
    result = search(root, "Who owns the billing service?", kind="who-owns")
    assert "@payments-team" in result.answer
    assert check_citations(root, result)[0] == f"svc/{name}"


def test_a_long_codeowners_also_gives_the_owners_of_everything_else(tmp_path: Path) -> None:
    """Over 60 lines: the rule that matches is quoted, and the catch-all rule with it."""
    rules = "".join(f"/services/svc-{n:03d}/ @acme/team-{n % 7}\n" for n in range(90))
    owners = f"# Default owners\n* @acme/platform-leads\n\n# Services\n{rules}"
    root = workspace(tmp_path, "mono", {".github/CODEOWNERS": owners, "README.md": "# Mono\n"})
    result = search(root, "Who reviews changes to services/svc-080?", kind="who-owns")
    assert "/services/svc-080/ @acme/team-3" in result.answer
    assert "* @acme/platform-leads" in result.answer
    assert set(check_citations(root, result)) == {"mono/.github/CODEOWNERS"}


def test_a_dated_list_too_long_to_quote_is_quoted_from_the_date_asked(tmp_path: Path) -> None:
    entries = "".join(
        f"- {year}-{month:02d}-{day:02d}: the search cluster upgrade is on track; replicas "
        f"{month * 3 + day} of the index are in sync and nothing waits.\n"
        for year in (2023, 2022, 2021)
        for month in range(12, 0, -1)
        for day in (24, 17, 10, 3)
    )
    log = (
        "# Search upgrade log\n\n- 2024-01-09: the search cluster upgrade is done.\n"
        + entries.replace(
            "- 2022-04-17: the search cluster upgrade is on track",
            "- 2022-04-17: the search cluster upgrade is held by SEC-88, the security review",
        )
    )
    root = workspace(tmp_path, "search", {"docs/upgrade-log.md": log})
    result = search(root, "What did the search upgrade wait on in April 2022?", kind="blocker")
    assert "SEC-88" in result.answer
    check_citations(root, result)


def test_release_notes_one_file_a_version_answer_for_the_version_asked(tmp_path: Path) -> None:
    notes = {
        f"releases/v{version}.md": f"# Highlights\n\nThe agent's upload path changed: {text}.\n"
        for version, text in (
            ("1.4.0", "uploads are batched per minute"),
            ("1.5.0", "uploads retry with backoff"),
            ("2.5.0", "uploads go to the regional endpoint"),
            ("1.15.0", "uploads are signed"),
        )
    }
    root = workspace(tmp_path, "agent", notes)
    result = search(root, "What changed about uploads in 1.5?", kind="what-changed")
    assert "retry with backoff" in result.answer
    assert "batched per minute" not in result.answer
    assert "regional endpoint" not in result.answer  # 2.5, not 1.5
    assert "signed" not in result.answer  # 1.15
    assert check_citations(root, result) == ["agent/releases/v1.5.0.md"]
