"""How the repo-search arm reads a question: its kind, and where that kind's answers live.

A team asks five kinds of question (the suite's ``kind``: decision-why, blocker,
what-changed, how-to, who-owns), and each kind's answer sits in its own kind of document:

- **who-owns**: ownership files (CODEOWNERS, OWNERS, OWNERS_ALIASES, MAINTAINERS, a
  service catalogue such as ``catalog-info.yaml``) and sections headed owners/maintainers;
- **what-changed**: changelogs and release notes (CHANGELOG, CHANGES, HISTORY, NEWS,
  RELEASE-NOTES, a ``releases/`` folder) and decision records, whose status says what
  superseded them;
- **blocker**: status pages, known-issues and open-problem sections (status, blocked,
  known issues, open questions, risks, limitations, next steps);
- **decision-why**: decision records (``adr/``, ``decisions/``, ``rfcs/``, ``proposals/``)
  and their context/decision/consequences sections;
- **how-to**: runbooks, playbooks, guides and troubleshooting pages.

The kind is the task's when it names one of these, else read from the question's words
(:func:`kind_of`). :func:`prior` turns it into a weight on a passage from its file's path
and its heading path, which multiplies the passage's BM25 score: the words still decide
which passage of which file, the kind which kind of document wins a near tie. Nothing here
names a repository or a question: only file-naming conventions and section names in common
use.
"""

from __future__ import annotations

import re

KINDS = ("decision-why", "blocker", "what-changed", "how-to", "who-owns")

_ASKS = (  # the first that matches a question decides its kind; how-to is the default
    (
        "who-owns",
        r"\bwho\b|\bwhich (team|group|person|people)\b|\bowner|\bowns\b|\bmaintainers?\b"
        r"|\bmaintained by\b",
    ),
    (
        "blocker",
        r"\bblock|\bwaiting\b|\bwait(s|ing)? (on|for)\b|\bholding (back|up)\b|\bstuck\b"
        r"|\bprevent|\bwhat stops\b|\bcan ?not\b|\bcan'?t\b|\bnot yet\b|\bdepends? on\b"
        r"|\bpending\b",
    ),
    (
        "what-changed",
        r"\bchang|\bwhat('s| is)? new\b|\bsince\b|\badded\b|\bremoved\b|\breplac|\bsupersed"
        r"|\bdeprecat|\brelease[sd]?\b|\bversion\b|\bv?\d+\.\d+|\bstill (current|valid)\b"
        r"|\bnow\b|\bhappened\b",
    ),
    ("decision-why", r"\bwhy\b|\breason|\brationale|\bdecid|\bdecision|\bchose|\bpick"),
)

# File classes by path (lowercase, "/"-separated); a path may be in several.
_FILES = {
    "ownership": re.compile(
        r"(^|/)(codeowners|owners|owners_aliases|maintainers(\.md|\.txt|\.rst)?"
        r"|catalog-info\.ya?ml|[^/]*catalog(ue)?[^/]*\.(ya?ml|json))$"
    ),
    "changelog": re.compile(
        r"(^|/)(changelog|changes|history|news|release[-_]?notes|releasenotes)[^/]*$"
        r"|(^|/)(releases|release[-_]notes|changelogs?|changes)/"
    ),
    "decision": re.compile(
        r"(^|/)(adrs?|decisions?|[a-z-]*decision[-_]records?|rfcs?|proposals?|enhancements"
        r"|keps?|design)/|(^|/)(adr|rfc)[-_]?\d+[^/]*$"
    ),
    "status": re.compile(
        r"(^|/)[^/]*(status|known[-_]issues|blockers?|roadmap|risks?|todo|open[-_]issues)"
        r"[^/]*\.(md|markdown|txt|rst|ya?ml)$"
    ),
    "runbook": re.compile(
        r"(^|/)(runbooks?|playbooks?|how-?to|guides?|sre[-_a-z]*|operations|ops"
        r"|troubleshoot[a-z]*)/|(^|/)[^/]*(runbook|playbook|troubleshoot)[^/]*$"
    ),
}
_CODE = re.compile(r"\.(go|py|rb|java|kt|js|ts|tsx|jsx|rs|c|h|cc|cpp|cs|php|sh|tf|tpl|lua)$")

# Per kind: the weight of each file class, and the heading words that mark its sections.
_FILE_WEIGHTS = {
    "who-owns": {"ownership": 2.5},
    "what-changed": {"changelog": 1.8, "decision": 1.3},
    "blocker": {"status": 1.8, "decision": 1.1},
    "decision-why": {"decision": 1.8},
    "how-to": {"runbook": 1.5},
}
SECTION_WORDS = {
    "who-owns": {
        "owner",
        "owners",
        "ownership",
        "maintainers",
        "maintainer",
        "team",
        "teams",
        "contacts",
        "contact",
        "approvers",
        "reviewers",
        "support",
    },
    "what-changed": {
        "changed",
        "changes",
        "changelog",
        "added",
        "removed",
        "fixed",
        "deprecated",
        "breaking",
        "security",
        "update",
        "updated",
        "status",
        "superseded",
        "unreleased",
        "release",
        "releases",
        "decision",
        "migration",
        "upgrade",
        "upgrading",
        "amended",
        "consequences",
        "outcome",
        "results",
        "impact",
    },
    "blocker": {
        "status",
        "blocked",
        "blocker",
        "blockers",
        "known",
        "issues",
        "open",
        "problems",
        "questions",
        "risks",
        "limitations",
        "todo",
        "waiting",
        "pending",
        "next",
        "caveats",
        "dependencies",
        "outstanding",
    },
    "decision-why": {
        "context",
        "decision",
        "consequences",
        "rationale",
        "reasoning",
        "motivation",
        "why",
        "background",
        "problem",
        "alternatives",
        "options",
        "considered",
        "proposal",
        "proposed",
        "goals",
        "summary",
        "benefits",
        "drivers",
    },
    "how-to": {
        "steps",
        "how",
        "procedure",
        "runbook",
        "usage",
        "instructions",
        "resolution",
        "fix",
        "troubleshooting",
        "mitigation",
        "remediation",
        "recovery",
        "rollback",
        "solution",
        "solutions",
        "prerequisites",
        "before",
        "caution",
        "warning",
        "important",
    },
}
_SECTION_WEIGHT = {
    "blocker": 1.4,
    "decision-why": 1.3,
    "what-changed": 1.3,
    "who-owns": 1.3,
    "how-to": 1.2,
}
CODE_WEIGHT = 0.8  # source files answer fewer of a team's questions than its documents


def kind_of(question: str, given: object = None) -> str:
    """The question's kind: ``given`` when it is one of :data:`KINDS`, else from its words."""
    if isinstance(given, str) and given in KINDS:
        return given
    text = question.casefold()
    for kind, pattern in _ASKS:
        if re.search(pattern, text):
            return kind
    return "how-to"


def file_classes(path: str) -> frozenset[str]:
    """The classes of :data:`_FILES` a workspace path (``<repo>/<path>``) is in."""
    lowered = path.lower()
    return frozenset(name for name, pattern in _FILES.items() if pattern.search(lowered))


def file_weight(kind: str, path: str) -> float:
    """How much the question's kind favours a file: its best class's weight, code less."""
    weights = _FILE_WEIGHTS.get(kind, {})
    lowered = path.lower()
    best = max((w for c, w in weights.items() if _FILES[c].search(lowered)), default=1.0)
    if best == 1.0 and _CODE.search(path.lower()) and kind != "how-to":
        return CODE_WEIGHT
    return best


def section_weight(kind: str, heading_words: set[str]) -> float:
    """How much the kind favours a section whose heading path has ``heading_words``."""
    return _SECTION_WEIGHT.get(kind, 1.0) if heading_words & SECTION_WORDS.get(kind, set()) else 1.0


def is_record_section(kind: str, heading_words: set[str]) -> bool:
    """Whether a section's own heading names one the kind's answer is quoted from."""
    return bool(heading_words & SECTION_WORDS.get(kind, set()))
