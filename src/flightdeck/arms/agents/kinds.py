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
        r"(^|/)((code)?owners|owners_aliases|maintainers|ownership|stewards|teams?)"
        r"(\.(md|markdown|txt|rst|adoc|ya?ml|json))?$"
        r"|(^|/)(catalog-info\.ya?ml|[^/]*catalog(ue)?[^/]*\.(ya?ml|json))$"
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
        "requirements",
        "outline",
        "know",
        "notes",
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


def file_weight(kind: str, path: str, content: frozenset[str] = frozenset()) -> float:
    """How much the question's kind favours a file: its best class's weight, code less.

    ``content`` holds the classes its headings show (:func:`content_classes`), beside those
    its path shows.
    """
    weights = _FILE_WEIGHTS.get(kind, {})
    lowered = path.lower()
    best = max(
        (w for c, w in weights.items() if c in content or _FILES[c].search(lowered)),
        default=1.0,
    )
    if best == 1.0 and _CODE.search(path.lower()) and kind != "how-to":
        return CODE_WEIGHT
    return best


# What a document's headings say it is, whatever its name: a decision record has at least
# two of a record's sections (Nygard's status/context/decision/consequences, MADR's
# "Considered Options" and "Decision Outcome"); a changelog has three headings that name a
# release (a version or "Unreleased"). Dated headings alone do not make one: incident logs
# and status pages have them too. Runbooks and status pages are left to their names: a
# procedure's headings are too common in other documents to single one out.
_DECISION_WORDS = {
    "status",
    "context",
    "decision",
    "consequences",
    "considered",
    "outcome",
    "drivers",
    "alternatives",
    "rationale",
}
_RELEASE_HEADING = re.compile(r"\bv?\d+\.\d+|\bunreleased\b", re.IGNORECASE)


def content_classes(titles: list[str]) -> frozenset[str]:
    """The classes of :data:`_FILES` a document's heading lines (``titles``) show."""
    found = set()
    said = [set(re.findall(r"[a-z]+", t.lower())) for t in titles]
    if sum(bool(words & _DECISION_WORDS) for words in said) >= 2:
        found.add("decision")
    if sum(bool(_RELEASE_HEADING.search(t)) for t in titles) >= 3:
        found.add("changelog")
    return frozenset(found)


_MONTHS = {
    m: n
    for n, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for m in names
}
_VERSION = re.compile(r"(?<![\w.])(?:v|release[-_ ]?)?(\d{1,4}(?:\.\d{1,4}){1,3})(?![\w.]*\d)")
_ISO_DATE = re.compile(r"\b((?:19|20)\d{2})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?\b")
_MONTH_YEAR = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+)?([a-z]{3,9})\.?,?\s+(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?"
    r"((?:19|20)\d{2})\b",
    re.IGNORECASE,
)

Mention = tuple[str, tuple[int, ...]]
UNRELEASED: Mention = ("v", (-1,))  # "Unreleased": the next version, not one of the others
_UNRELEASED = re.compile(r"\bunreleased\b", re.IGNORECASE)
_SINCE = re.compile(r"\b(?:since|after|newer than|later than)\s+(?:the\s+)?", re.IGNORECASE)


def mentions(text: str) -> frozenset[Mention]:
    """The versions (``("v", (0, 14))``) and months or days (``("d", (2024, 3))``) a text names.

    A version's trailing zeros are dropped (``v0.14.0`` is ``0.14``); "release-0.14" and
    "v0.14" name it too. Dates are ISO (``2024-03-27``, ``2024-03``) or a month's name with a
    year ("March 2024", "27 March 2024", "Mar 27, 2024"). "Unreleased" is :data:`UNRELEASED`.
    """
    found: set[Mention] = set()
    since = {m.end() for m in _SINCE.finditer(text)}  # where "since" / "after" ends
    for match in _ISO_DATE.finditer(text):
        year, month, day = match.groups()
        if 1 <= int(month) <= 12:
            tag = "d>" if match.start() in since else "d"
            found.add((tag, (int(year), int(month), *((int(day),) if day else ()))))
    dated = {m.span() for m in _ISO_DATE.finditer(text)}
    for match in _VERSION.finditer(text):
        if any(a <= match.start(1) < b for a, b in dated):
            continue
        parts = [int(p) for p in match[1].split(".")]
        while len(parts) > 2 and parts[-1] == 0:
            parts.pop()
        found.add(("v>" if match.start() in since else "v", tuple(parts)))
    if _UNRELEASED.search(text):
        found.add(UNRELEASED)
    for match in _MONTH_YEAR.finditer(text):
        day_before, name, day_after, year = match.groups()
        month = _MONTHS.get(name.lower())
        if month is not None:
            day = day_before or day_after
            tag = "d>" if match.start() in since else "d"
            found.add((tag, (int(year), month, *((int(day),) if day else ()))))
    return frozenset(found)


def names_the_same(asked: frozenset[Mention], said: frozenset[Mention]) -> bool:
    """Whether a heading names a version or date the question asks about (or one inside it).

    "0.14" asked finds "0.14" and "0.14.2"; "March 2024" finds "2024-03-27". A version or
    date asked "since" (``"v>"``, ``"d>"``: "since 3.8", "after March 2024") also finds the
    later ones, and "Unreleased".
    """
    for tag, value in asked:
        later = tag.endswith(">")
        for s_tag, s_value in said:
            if s_tag != tag[0]:
                continue
            if s_value[: len(value)] == value:
                return True
            if later and (s_value == (-1,) or s_value > value):
                return True
    return False


def section_weight(kind: str, heading_words: set[str]) -> float:
    """How much the kind favours a section whose heading path has ``heading_words``."""
    return _SECTION_WEIGHT.get(kind, 1.0) if heading_words & SECTION_WORDS.get(kind, set()) else 1.0


def is_record_section(kind: str, heading_words: set[str]) -> bool:
    """Whether a section's own heading names one the kind's answer is quoted from."""
    return bool(heading_words & SECTION_WORDS.get(kind, set()))
