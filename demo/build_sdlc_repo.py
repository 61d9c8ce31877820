"""Build the demo team repository "sdlc" with the same commit ids on every run, on any machine.

The demo suite (suites/knowledge-demo-v1) asks questions about this repository. It is the
repository of a small team that runs a model gateway, a pull-request review bot, a job queue
and nightly evaluations; its history tells a story in decision records, a changelog,
CODEOWNERS, runbooks and a weekly status page:

    2024-01  the repository starts; ADR-0001 puts every LLM call behind one gateway
    2024-02  ADR-0002 keeps gold sets private; the review bot pilot is blocked (SEC-142)
    2024-03  ADR-0003 moves the job queue from Redis to Postgres; the cutover waits on
             DBA-77; review bot ownership moves to Dana; 0.4.0 retires the Redis runbook
    2024-04  ADR-0004: the review bot only comments; GA waits on LEGAL-58, evals on OPS-311
    2024-05  release 0.5.0, tagged v0.5.0: the suite's ``as_of`` commit
    2024-06  AFTER as_of: keys move to Vault, the blockers clear, the gateway changes hands.
             The runbook, status page, CODEOWNERS and changelog that the keys cite change,
             so an arm that reads the newest files cites stale content.

Every author, committer, date, message and byte is fixed here, and the user's and the
system's git config are ignored, so the commit ids depend only on this file. The bundle's
bytes may differ between git versions; the commit ids do not (tests/pipeline checks them).

Usage::

    python demo/build_sdlc_repo.py                   # writes demo/sdlc.bundle, prints the ids
    python demo/build_sdlc_repo.py --json            # the ids as JSON
    python demo/build_sdlc_repo.py --out /tmp/x.bundle --attachments /tmp/att

``--attachments DIR`` also exports the documents the person running the baseline-projects
arm attached to their chat project (laid out as ``sdlc/<path>``): the files of v0.5.0,
except the status page and the key-rotation runbook, which they exported later from main.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEOPLE = {
    "priya": ("Priya Raman", "priya.raman@example.com"),
    "marcus": ("Marcus Feld", "marcus.feld@example.com"),
    "dana": ("Dana Okafor", "dana.okafor@example.com"),
    "li": ("Li Wei", "li.wei@example.com"),
}
AS_OF_TAG = "v0.5.0"
# Files the baseline-projects person attached from main after as_of (a stale export).
LATE_ATTACHMENTS = ("docs/status.md", "docs/runbooks/rotate-api-keys.md")
ATTACHED = (  # what the person attached to the chat project
    "README.md",
    "CHANGELOG.md",
    "CODEOWNERS",
    "docs/adr/0001-model-gateway.md",
    "docs/adr/0002-private-eval-data.md",
    "docs/adr/0003-queue-on-postgres.md",
    "docs/adr/0004-reviewbot-comment-only.md",
    "docs/runbooks/add-a-model.md",
    "docs/runbooks/postgres-queue-failover.md",
    "docs/runbooks/queue-migration.md",
    "docs/runbooks/rotate-api-keys.md",
    "docs/runbooks/old/redis-failover.md",
    "docs/status.md",
)


@dataclass(frozen=True)
class Commit:
    who: str
    date: str  # ISO 8601 with offset: what GIT_AUTHOR_DATE and GIT_COMMITTER_DATE get
    message: str
    files: dict[str, str | None] = field(default_factory=dict)  # None deletes the file
    tag: str | None = None


def _text(s: str) -> str:
    """Strip the leading newline of a triple-quoted block; keep one trailing newline."""
    return s.lstrip("\n").rstrip() + "\n"


README = _text("""
# sdlc

Tooling for the team's AI-assisted software lifecycle: the model gateway that every LLM
call goes through, the review bot that comments on pull requests, the job queue they share,
and the nightly evaluation jobs.

## Layout

- `src/gateway/`: the model gateway (provider keys, per-team quotas, cost accounting)
- `src/reviewbot/`: the pull-request review bot
- `src/queue/`: the job queue used by the review bot and the evals
- `src/evals/`: the nightly evaluation jobs
- `docs/adr/`: architecture decision records, one file per decision, never edited after
  acceptance (a new decision supersedes an old one)
- `docs/runbooks/`: what on-call does, step by step
- `docs/status.md`: what is blocked and on what, updated every Monday

## Getting started

    make dev        # creates .venv and installs the tools
    make test

Ask in #ai-sdlc when something here is wrong.
""")

CODEOWNERS_1 = _text("""
# Owners are requested for review on every pull request that touches their paths.
# The last matching pattern wins.
*                       @priya-raman
/src/gateway/           @marcus-feld
/src/reviewbot/         @marcus-feld
/docs/adr/              @priya-raman @marcus-feld
""")

CODEOWNERS_2 = _text("""
# Owners are requested for review on every pull request that touches their paths.
# The last matching pattern wins.
*                       @priya-raman
/src/gateway/           @marcus-feld
/src/reviewbot/         @dana-okafor
/src/queue/             @marcus-feld
/docs/adr/              @priya-raman @marcus-feld
/docs/runbooks/         @sdlc/oncall
""")

CODEOWNERS_3 = _text("""
# Owners are requested for review on every pull request that touches their paths.
# The last matching pattern wins.
*                       @priya-raman
/src/gateway/           @marcus-feld
/src/reviewbot/         @dana-okafor
/src/queue/             @marcus-feld
/src/evals/             @li-wei
/docs/adr/              @priya-raman @marcus-feld
/docs/runbooks/         @sdlc/oncall
""")

CODEOWNERS_4 = _text("""
# Owners are requested for review on every pull request that touches their paths.
# The last matching pattern wins.
*                       @priya-raman
/src/gateway/           @li-wei
/src/reviewbot/         @dana-okafor @sam-ortiz
/src/queue/             @marcus-feld
/src/evals/             @li-wei
/docs/adr/              @priya-raman @marcus-feld
/docs/runbooks/         @sdlc/oncall
""")

ADR_0001 = _text("""
# ADR-0001: Every LLM call goes through one model gateway

- Status: accepted
- Date: 2024-01-15
- Deciders: Marcus Feld, Priya Raman

## Context

Three services call model providers directly, each with its own API key in its own secret
store. In December nobody could say which team had spent the EUR 4,200 on the provider's
invoice, and rotating a leaked key took two days because nobody knew every place it was
configured.

## Decision

All LLM calls go through `src/gateway/`, an HTTP service that holds the provider keys,
enforces per-team quotas and records the cost of every call with the calling team's name.
Services get a gateway token, never a provider key.

## Consequences

- Per-team cost accounting comes from the gateway's call log.
- Provider keys are rotated in one place (docs/runbooks/rotate-api-keys.md).
- The gateway is a single point of failure, so it runs as two replicas.
""")

ADR_0002 = _text("""
# ADR-0002: Evaluation gold sets live in the private data repository

- Status: accepted
- Date: 2024-02-05
- Deciders: Priya Raman, Dana Okafor

## Context

Our evaluation questions quote internal decisions, incident reviews and customer names.
This repository is mirrored to the company-wide code search, and what is there can end up in
a vendor's search index or in a model's training data. A gold set that the system under test
has already seen measures memory, not ability.

## Decision

Gold sets (questions, answer keys, labels) live in the private data repository
`ai-sdlc-data`, which only the team can read. This repository holds the code that runs them
and a small public demo set.

## Consequences

- Questions may reference private decisions.
- Answer keys are sealed, with a canary in each, and traces are scanned for the canaries
  before anything is scored.
- New team members need read access to `ai-sdlc-data` (ask Priya).
""")

ADR_0003 = _text("""
# ADR-0003: Move the job queue from Redis to Postgres

- Status: accepted
- Date: 2024-03-04
- Deciders: Marcus Feld, Dana Okafor, Priya Raman

## Context

The job queue (review bot runs, nightly evals) lives in Redis lists. On 2024-02-08 and on
2024-02-22 a Redis failover lost the jobs that were in flight: 212 review bot runs the first
time, a whole night of evals the second. We already run Postgres (pg-main) for the gateway's
call log, with point-in-time recovery and a failover that we test every quarter.

## Decision

Jobs become rows of a `jobs` table on pg-main. A worker claims a job with
`SELECT ... FOR UPDATE SKIP LOCKED`, so two workers never take the same job, and the job of a
worker that crashes goes back to the queue when its transaction ends.

## Consequences

- Jobs survive a failover: they are committed rows.
- One fewer stateful system to run: Redis goes away once the migration is done.
- Throughput is lower (about 300 jobs/s measured), far above our peak of 20 jobs/s.
- The migration plan is docs/runbooks/queue-migration.md.
""")

ADR_0004 = _text("""
# ADR-0004: The review bot comments and never pushes

- Status: accepted
- Date: 2024-04-15
- Deciders: Dana Okafor, Priya Raman

## Context

During the pilot the review bot pushed fix-up commits to pull requests; people reverted 9
of its 31 pushes. Security review SEC-142 would not approve a token that can push to
protected repositories for a bot whose output is generated by a model.

## Decision

The review bot's token has `contents: read` and `pull_requests: write` only. It posts review
comments, and proposes changes as GitHub suggestion blocks that a person applies.

## Consequences

- SEC-142 was approved on 2024-04-12 for this comment-only scope; the pilot resumed.
- The bot cannot fix anything itself, so its comments must be specific enough to apply.
- `push_fixups` is removed from `src/reviewbot/bot.py`.
""")

CHANGELOG_1 = _text("""
# Changelog

## Unreleased

- Repository created: README, CODEOWNERS, this changelog.
""")

CHANGELOG_2 = _text("""
# Changelog

## Unreleased

- Gateway: every LLM call goes through `src/gateway/` (ADR-0001).
- Gateway: key rotation runbook (docs/runbooks/rotate-api-keys.md).
- Review bot: pilot on the payments repository, comments and fix-up pushes.
- Repository created: README, CODEOWNERS, this changelog.
""")

CHANGELOG_3 = _text("""
# Changelog

## Unreleased

- Ownership: the review bot moves from Marcus Feld to Dana Okafor, so that Marcus can lead
  the queue migration (ADR-0003); runbooks are now reviewed by @sdlc/oncall.
- Gateway: every LLM call goes through `src/gateway/` (ADR-0001).
- Gateway: key rotation runbook (docs/runbooks/rotate-api-keys.md).
- Review bot: pilot on the payments repository, comments and fix-up pushes.
- Repository created: README, CODEOWNERS, this changelog.
""")

_CHANGELOG_040 = """
## 0.4.0 - 2024-03-27

- Queue: jobs are rows of the `jobs` table on pg-main, claimed with SKIP LOCKED (ADR-0003).
  Redis is no longer used.
- Runbooks: redis-failover.md is retired to docs/runbooks/old/; fail over the queue with
  docs/runbooks/postgres-queue-failover.md.
- Ownership: the review bot moves from Marcus Feld to Dana Okafor, so that Marcus can lead
  the queue migration (ADR-0003); runbooks are now reviewed by @sdlc/oncall.
- Gateway: every LLM call goes through `src/gateway/` (ADR-0001).
- Gateway: key rotation runbook (docs/runbooks/rotate-api-keys.md).
- Review bot: pilot on the payments repository, comments and fix-up pushes.
"""

CHANGELOG_4 = _text(
    """
# Changelog

## Unreleased
"""
    + _CHANGELOG_040
)

_CHANGELOG_050 = """
## 0.5.0 - 2024-05-06

- Review bot: comment-only; proposed changes are suggestion blocks, it never pushes
  (ADR-0004).
- Gateway: claude-3-opus is available to the evals team.
- Gateway: a per-team daily spend limit, EUR 50 unless `daily_limit_eur` is set in
  `src/gateway/models.yaml`.
- Evals: the nightly job moves to `src/evals/`, owned by Li Wei.
"""

CHANGELOG_5 = _text(
    """
# Changelog

## Unreleased
"""
    + _CHANGELOG_050
    + _CHANGELOG_040
)

CHANGELOG_6 = _text(
    """
# Changelog

## Unreleased

- Gateway: provider keys are kept in Vault; the rotation runbook changes accordingly.
- Ownership: the gateway moves from Marcus Feld to Li Wei; Sam Ortiz joins the review bot.
- Review bot: generally available on every repository (LEGAL-58 approved 2024-05-28).
"""
    + _CHANGELOG_050
    + _CHANGELOG_040
)

ROTATE_KEYS_1 = _text("""
# Rotate the provider API keys

Who: whoever is on call. Takes about 15 minutes. Do it every 90 days, and at once when a
key may have leaked.

1. Create a new key in the provider console (Settings, API keys) named
   `gateway-prod-<yyyy-mm>`.
2. Install it: `make rotate-keys ENV=prod KEY_FILE=/path/to/new.key`. This writes the key
   to the gateway's secret and restarts the two replicas one after the other.
3. Check that `make gateway-smoke ENV=prod` passes.
4. Revoke the old key in the provider console after 24 hours: jobs that started before the
   restart still hold it.
5. Note the rotation in #ai-sdlc.
""")

ROTATE_KEYS_2 = _text("""
# Rotate the provider API keys

Who: whoever is on call. Takes about 10 minutes. Do it every 90 days, and at once when a
key may have leaked.

Since June 2024 the provider keys are kept in Vault, not in the gateway's secret.

1. Create a new key in the provider console (Settings, API keys) named
   `gateway-prod-<yyyy-mm>`.
2. Store it: `vault kv put secret/gateway/prod provider_key=@/path/to/new.key`. The gateway
   reads the new key within a minute; no restart is needed.
3. Check that `make gateway-smoke ENV=prod` passes.
4. Revoke the old key in the provider console after 1 hour.
5. Note the rotation in #ai-sdlc.
""")

REDIS_FAILOVER = _text("""
# Fail over the job queue (Redis)

1. Check which node is the master: `redis-cli -p 26379 SENTINEL get-master-addr-by-name
   sdlc-queue`.
2. Fail over: `redis-cli -p 26379 SENTINEL failover sdlc-queue`.
3. Restart the workers: `make workers-restart ENV=prod`. Jobs that were in flight may be
   lost; re-enqueue them from the call log.
""")

REDIS_FAILOVER_OLD = _text(
    """
> Retired on 2024-03-27: the queue no longer uses Redis (ADR-0003).
> Use docs/runbooks/postgres-queue-failover.md.

"""
    + REDIS_FAILOVER
)

QUEUE_MIGRATION = _text("""
# Migrate the job queue from Redis to Postgres

Plan for ADR-0003. Owner: Marcus Feld.

Before the cutover: DBA-77, the DBA team raises `max_connections` on pg-main from 200 to 400,
since each worker holds a connection while it runs a job.

1. Create the table: `make queue-migrate ENV=prod` (adds `jobs` with its indexes).
2. Dual-write for one week: `QUEUE_BACKENDS=redis,postgres` in the workers' environment.
   Workers claim from Redis only.
3. Compare: `make queue-compare` must show the same jobs in both for seven days.
4. Cut over: `QUEUE_BACKENDS=postgres`, restart the workers, then stop Redis.
""")

PG_FAILOVER = _text("""
# Fail over the job queue (Postgres)

The queue is the `jobs` table on the pg-main cluster (ADR-0003), so a failover of pg-main is
a failover of the queue.

1. Announce in #ai-sdlc: "queue failover starting".
2. Drain the workers: `make queue-drain ENV=prod`. They finish their current job and stop
   claiming new ones.
3. Switch the primary: `patronictl -c /etc/patroni.yml switchover pg-main --candidate
   pg-main-2`.
4. Check the new primary: `make queue-health ENV=prod` shows `role=primary` and no stuck
   jobs.
5. Resume the workers: `make queue-resume ENV=prod`.

Jobs in flight are not lost: a claim is a transaction, and an aborted transaction puts the
job back in the queue.
""")

ADD_A_MODEL = _text("""
# Make a new model available through the gateway

1. Add the model to `src/gateway/models.yaml`: its provider, `max_tokens`, and the teams
   allowed to call it.
2. Reload staging and try it: `make gateway-reload ENV=staging`, then
   `make gateway-smoke ENV=staging MODEL=<name>`.
3. Open a pull request; the gateway's owner in CODEOWNERS reviews it.
4. After the merge: `make gateway-reload ENV=prod`.

Models are never added by changing code: `src/gateway/config.py` reads models.yaml.
""")

STATUS_1 = _text("""
# Status

Updated every Monday by whoever is on call. Newest first in each section.

Last update: 2024-02-19 (Dana Okafor)

## Blocked

- **Review bot pilot on the payments repository**: blocked on SEC-142, the security review
  of the bot's repository token, which today can push. Owner: Dana Okafor.

## In progress

- Job queue: Redis failovers lost in-flight jobs twice in February; investigating. Owner:
  Marcus Feld.

## Done

- Model gateway live for all three services (January).
""")

STATUS_2 = _text("""
# Status

Updated every Monday by whoever is on call. Newest first in each section.

Last update: 2024-03-11 (Marcus Feld)

## Blocked

- **Queue cutover to Postgres**: blocked on DBA-77, raising `max_connections` on pg-main
  from 200 to 400 for the workers. Owner: Marcus Feld.
- **Review bot pilot on the payments repository**: blocked on SEC-142, the security review
  of the bot's repository token, which today can push. Owner: Dana Okafor.

## In progress

- Queue migration (ADR-0003): dual-writing since 2024-03-06.

## Done

- Model gateway live for all three services (January).
""")

STATUS_3 = _text("""
# Status

Updated every Monday by whoever is on call. Newest first in each section.

Last update: 2024-04-01 (Marcus Feld)

## Blocked

- **Review bot pilot on the payments repository**: blocked on SEC-142, the security review
  of the bot's repository token, which today can push. Owner: Dana Okafor.

## In progress

- Nothing else.

## Done

- Queue cutover to Postgres (2024-03-27), once DBA-77 had raised `max_connections` on
  pg-main to 400. Redis is stopped.
- Model gateway live for all three services (January).
""")

STATUS_4 = _text("""
# Status

Updated every Monday by whoever is on call. Newest first in each section.

Last update: 2024-05-06 (Priya Raman)

## Blocked

- **Review bot general availability**: blocked on LEGAL-58, legal's approval of sending
  customer code to the model provider under the new data processing agreement. Expected
  mid-May. Owner: Dana Okafor.
- **Nightly evals on claude-3-sonnet**: blocked on OPS-311, a quota increase. The evals
  team's provider quota is 40k tokens per minute and the nightly run needs 200k. Owner:
  Li Wei.

## In progress

- Review bot pilot on the payments repository, comment-only (ADR-0004).

## Done

- SEC-142 approved for the comment-only scope (2024-04-12).
- Queue cutover to Postgres (2024-03-27), once DBA-77 had raised `max_connections` on
  pg-main to 400. Redis is stopped.
- Model gateway live for all three services (January).
""")

STATUS_5 = _text("""
# Status

Updated every Monday by whoever is on call. Newest first in each section.

Last update: 2024-06-10 (Marcus Feld)

## Blocked

- **Gateway replicas on the new nodes**: blocked on INFRA-902, the new node pool's network
  policy. Owner: Li Wei.

## In progress

- Provider keys move to Vault (rotation runbook updated).

## Done

- Nightly evals on claude-3-sonnet: OPS-311 raised the quota to 250k tokens per minute
  (2024-05-21).
- Review bot generally available: LEGAL-58 approved (2024-05-28).
- SEC-142 approved for the comment-only scope (2024-04-12).
- Queue cutover to Postgres (2024-03-27), once DBA-77 had raised `max_connections` on
  pg-main to 400. Redis is stopped.
- Model gateway live for all three services (January).
""")

GATEWAY_CONFIG = _text('''
"""Gateway settings: which models exist and which teams may call them."""

from dataclasses import dataclass
from pathlib import Path

import yaml

MODELS_FILE = Path(__file__).with_name("models.yaml")
DEFAULT_DAILY_LIMIT_EUR = 50.0


@dataclass(frozen=True)
class Model:
    name: str
    provider: str
    max_tokens: int
    teams: tuple[str, ...]
    daily_limit_eur: float = DEFAULT_DAILY_LIMIT_EUR


def load_models(path: Path = MODELS_FILE) -> dict[str, Model]:
    """Read models.yaml: adding a model is a config change, never a code change."""
    data = yaml.safe_load(path.read_text())
    return {
        name: Model(
            name,
            spec["provider"],
            spec["max_tokens"],
            tuple(spec["teams"]),
            spec.get("daily_limit_eur", DEFAULT_DAILY_LIMIT_EUR),
        )
        for name, spec in data["models"].items()
    }
''')

MODELS_1 = _text("""
# Adding a model: see docs/runbooks/add-a-model.md.
models:
  claude-3-haiku:
    provider: anthropic
    max_tokens: 4096
    teams: [reviewbot, evals]
  claude-3-sonnet:
    provider: anthropic
    max_tokens: 4096
    teams: [evals]
""")

MODELS_2 = MODELS_1 + _text("""
  claude-3-opus:
    provider: anthropic
    max_tokens: 4096
    teams: [evals]
    daily_limit_eur: 200
""")

CALLLOG = _text('''
"""The call log: one row per model call, with the calling team and its cost."""

import datetime as dt

INSERT = (
    "INSERT INTO calls (at, team, model, input_tokens, output_tokens, cost_eur) "
    "VALUES (%s, %s, %s, %s, %s, %s)"
)


def record(cursor, team: str, model: str, usage: dict, price: dict) -> None:
    cost = (
        usage["input_tokens"] * price["input_eur"] + usage["output_tokens"] * price["output_eur"]
    ) / 1_000_000
    cursor.execute(
        INSERT,
        (dt.datetime.now(dt.UTC), team, model, usage["input_tokens"], usage["output_tokens"], cost),
    )
''')

REVIEWBOT_1 = _text('''
"""The review bot: reads a pull request's diff, asks the gateway, posts a review."""

from reviewbot.github import GitHub
from reviewbot.prompt import review_prompt


def review(pr, gateway, github: GitHub, push_fixups: bool = True) -> None:
    answer = gateway.complete(model="claude-3-haiku", prompt=review_prompt(pr.diff))
    github.post_review(pr, answer.comments)
    if push_fixups and answer.fixups:
        github.push_commit(pr.head_branch, answer.fixups, message="reviewbot: fix-ups")
''')

REVIEWBOT_2 = _text('''
"""The review bot: reads a pull request's diff, asks the gateway, posts a review.

Comment-only (ADR-0004): proposed changes become suggestion blocks that a person applies.
"""

from reviewbot.github import GitHub
from reviewbot.prompt import review_prompt


def review(pr, gateway, github: GitHub) -> None:
    answer = gateway.complete(model="claude-3-haiku", prompt=review_prompt(pr.diff))
    comments = list(answer.comments)
    comments += [fix.as_suggestion() for fix in answer.fixups]
    github.post_review(pr, comments)
''')

QUEUE_PG = _text('''
"""The job queue on Postgres (ADR-0003): a job is a row; claiming is a transaction."""

CLAIM = """
UPDATE jobs SET state = 'running', claimed_by = %(worker)s, claimed_at = now()
WHERE id = (
    SELECT id FROM jobs
    WHERE state = 'queued' AND kind = ANY(%(kinds)s)
    ORDER BY priority DESC, id
    FOR UPDATE SKIP LOCKED
    LIMIT 1
)
RETURNING id, kind, payload
"""


def claim(conn, worker: str, kinds: list[str]):
    """Claim one queued job, or return None; two workers never get the same job."""
    with conn.cursor() as cur:
        cur.execute(CLAIM, {"worker": worker, "kinds": kinds})
        return cur.fetchone()
''')

EVALS_NIGHTLY = _text('''
"""The nightly evaluation job: runs every suite in ai-sdlc-data against the gateway."""

import os

MODEL = os.environ.get("EVALS_MODEL", "claude-3-haiku")  # sonnet waits on OPS-311


def main(queue) -> None:
    for suite in ("review-comments-v3", "changelog-summaries-v1"):
        queue.enqueue("eval", {"suite": suite, "model": MODEL})
''')


HISTORY: tuple[Commit, ...] = (
    Commit(
        "priya",
        "2024-01-08T09:12:00+01:00",
        "Start the sdlc repository: README, CODEOWNERS, changelog",
        {"README.md": README, "CODEOWNERS": CODEOWNERS_1, "CHANGELOG.md": CHANGELOG_1},
    ),
    Commit(
        "marcus",
        "2024-01-15T14:30:00+01:00",
        "ADR-0001: every LLM call goes through one model gateway\n\n"
        "We could not attribute December's provider invoice to teams, and rotating a\n"
        "leaked key took two days.",
        {"docs/adr/0001-model-gateway.md": ADR_0001},
    ),
    Commit(
        "marcus",
        "2024-01-22T11:05:00+01:00",
        "Gateway: model config, call log and the key rotation runbook",
        {
            "src/gateway/config.py": GATEWAY_CONFIG,
            "src/gateway/models.yaml": MODELS_1,
            "src/gateway/calllog.py": CALLLOG,
            "docs/runbooks/rotate-api-keys.md": ROTATE_KEYS_1,
        },
    ),
    Commit(
        "priya",
        "2024-02-05T10:00:00+01:00",
        "ADR-0002: gold sets live in the private data repository",
        {"docs/adr/0002-private-eval-data.md": ADR_0002},
    ),
    Commit(
        "dana",
        "2024-02-19T16:45:00+01:00",
        "Review bot pilot, status page, Redis failover runbook",
        {
            "src/reviewbot/bot.py": REVIEWBOT_1,
            "docs/status.md": STATUS_1,
            "docs/runbooks/redis-failover.md": REDIS_FAILOVER,
            "CHANGELOG.md": CHANGELOG_2,
        },
    ),
    Commit(
        "marcus",
        "2024-03-04T09:40:00+01:00",
        "ADR-0003: move the job queue from Redis to Postgres\n\n"
        "Two failovers in February lost in-flight jobs. Migration plan in\n"
        "docs/runbooks/queue-migration.md.",
        {
            "docs/adr/0003-queue-on-postgres.md": ADR_0003,
            "docs/runbooks/queue-migration.md": QUEUE_MIGRATION,
            "src/queue/postgres.py": QUEUE_PG,
        },
    ),
    Commit(
        "marcus",
        "2024-03-11T09:15:00+01:00",
        "Status: the queue cutover waits on DBA-77",
        {"docs/status.md": STATUS_2},
    ),
    Commit(
        "priya",
        "2024-03-18T13:20:00+01:00",
        "CODEOWNERS: review bot to Dana, queue to Marcus, runbooks to on-call",
        {"CODEOWNERS": CODEOWNERS_2, "CHANGELOG.md": CHANGELOG_3},
    ),
    Commit(
        "marcus",
        "2024-03-27T18:02:00+01:00",
        "Release 0.4.0: the queue runs on Postgres; retire the Redis runbook",
        {
            "docs/runbooks/redis-failover.md": None,
            "docs/runbooks/old/redis-failover.md": REDIS_FAILOVER_OLD,
            "docs/runbooks/postgres-queue-failover.md": PG_FAILOVER,
            "CHANGELOG.md": CHANGELOG_4,
        },
    ),
    Commit(
        "marcus",
        "2024-04-01T09:30:00+02:00",
        "Status: queue cutover done",
        {"docs/status.md": STATUS_3},
    ),
    Commit(
        "dana",
        "2024-04-15T15:10:00+02:00",
        "ADR-0004: the review bot comments and never pushes (SEC-142)",
        {"docs/adr/0004-reviewbot-comment-only.md": ADR_0004, "src/reviewbot/bot.py": REVIEWBOT_2},
    ),
    Commit(
        "li",
        "2024-04-29T10:25:00+02:00",
        "Gateway: claude-3-opus for evals; nightly evals move to src/evals",
        {
            "src/gateway/models.yaml": MODELS_2,
            "docs/runbooks/add-a-model.md": ADD_A_MODEL,
            "src/evals/nightly.py": EVALS_NIGHTLY,
            "CODEOWNERS": CODEOWNERS_3,
        },
    ),
    Commit(
        "priya",
        "2024-05-06T17:00:00+02:00",
        "Release 0.5.0",
        {"CHANGELOG.md": CHANGELOG_5, "docs/status.md": STATUS_4},
        tag=AS_OF_TAG,
    ),
    # After as_of: edits files that the keys cite.
    Commit(
        "marcus",
        "2024-06-10T11:45:00+02:00",
        "Keys move to Vault; gateway to Li Wei; status update",
        {
            "docs/runbooks/rotate-api-keys.md": ROTATE_KEYS_2,
            "docs/status.md": STATUS_5,
            "CODEOWNERS": CODEOWNERS_4,
            "CHANGELOG.md": CHANGELOG_6,
        },
    ),
)


def _env(commit: Commit | None = None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in ("EMAIL",)
    }
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    if commit is not None:
        name, email = PEOPLE[commit.who]
        env.update(
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=email,
            GIT_AUTHOR_DATE=commit.date,
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL=email,
            GIT_COMMITTER_DATE=commit.date,
        )
    return env


def _git(repo: Path, *args: str, commit: Commit | None = None) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.autocrlf=false", "-c", "core.fileMode=true", *args],
        env=_env(commit),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"error: git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def build(repo: Path) -> dict[str, str]:
    """Create the repository at ``repo`` (must not exist); return ``{"as_of", "head"}`` ids."""
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--initial-branch=main")
    ids: dict[str, str] = {}
    for commit in HISTORY:
        for name, content in commit.files.items():
            target = repo / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8"))
            target.chmod(0o644)
        _git(repo, "add", "--all", "--", ".")
        _git(
            repo,
            "commit",
            "--quiet",
            "--no-gpg-sign",
            "--no-verify",
            "--cleanup=strip",
            "-m",
            commit.message,
            commit=commit,
        )
        if commit.tag:
            _git(repo, "tag", commit.tag, commit=commit)
            ids["as_of"] = _git(repo, "rev-parse", "HEAD")
    ids["head"] = _git(repo, "rev-parse", "HEAD")
    return ids


def export_attachments(repo: Path, target: Path) -> None:
    """Write the files the baseline-projects person attached, as ``sdlc/<path>``."""
    if target.exists():
        shutil.rmtree(target)
    for path in ATTACHED:
        rev = "main" if path in LATE_ATTACHMENTS else AS_OF_TAG
        blob = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "blob", f"{rev}:{path}"],
            env=_env(),
            capture_output=True,
            check=True,
        ).stdout
        out = target / "sdlc" / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "sdlc.bundle", help="bundle to write")
    parser.add_argument("--attachments", type=Path, help="also export the person's attachments")
    parser.add_argument("--json", action="store_true", help="print the commit ids as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sdlc-") as tmp:
        repo = Path(tmp) / "sdlc"
        ids = build(repo)
        partial = args.out.with_name(f".{args.out.name}.tmp")
        _git(repo, "bundle", "create", "--quiet", str(partial.resolve()), "--all")
        os.replace(partial, args.out)
        if args.attachments:
            export_attachments(repo, args.attachments)
    if args.json:
        print(json.dumps(ids, indent=2, sort_keys=True))
    else:
        print(f"wrote {args.out}: as_of ({AS_OF_TAG}) {ids['as_of']}, main {ids['head']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
