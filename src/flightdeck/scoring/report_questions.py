"""The report's per-question table: which questions each arm got right, by whose votes, citing what.

A sceptic's first question after the verdict is "which questions?". The table answers it
without opening ``results/``: one row per question in suite order, each arm's majority with
the votes behind it and its citations' classes, and, for each comparison, which of the two
arms was right (the rows the "C right, B wrong" counts are made of). It sits in a
``<details>`` block so the report stays short to scroll.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flightdeck.scoring.outcomes import ScoreResult
    from flightdeck.scoring.rules import Comparison

Row = dict[str, Any]  # one record of `results/<suite>/<arm>.jsonl` (scoring.results)

FIRST_WORDS = 8  # how much of the question the table quotes
FIRST_CHARS = 60
MAX_ROWS = 500  # questions listed; results/ has them all
CLASS_ORDER = ("valid", "fabricated", "stale", "unsupported")


def question_table(result: ScoreResult) -> list[str]:
    """The ``<details>`` block; empty when the suite has no question.

    Past ``MAX_ROWS`` questions only the first ``MAX_ROWS`` are listed (a 100,000-question
    suite would make a report of tens of megabytes); the summary line says so.
    """
    from flightdeck.scoring.results import result_rows

    arms = list(result.arms.values())
    if not arms or not arms[0].n:
        return []
    shown = min(result.n, MAX_ROWS)
    count = f"{shown} rows" if shown == result.n else f"the first {shown} of {result.n} questions"
    out = [
        "<details>",
        f"<summary>Each question: each arm's majority, the votes behind it and its "
        f"citations' classes ({count})</summary>",
        "",
    ]
    if shown < result.n:
        out += [f"`results/{result.suite}/` has every question.", ""]
    for c in result.comparisons:
        out += [
            f'The column "correctness: {c.candidate} vs {c.baseline}" says which of C '
            f"({c.candidate}, the candidate) and B ({c.baseline}, the baseline) the raters "
            'found correct; its "C right, B wrong" and "B right, C wrong" rows are the '
            "questions the comparison's counts are made of.",
            "",
        ]
    head = ["id", "kind", "question"]
    for s in arms:
        head += [f"{s.arm}: majority (votes)", f"{s.arm}: citations"]
    head += [f"correctness: {c.candidate} vs {c.baseline}" for c in result.comparisons]
    out += ["| " + " | ".join(_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    # Each arm's rows leave its frame once, and only the rows listed.
    rows = {s.arm: list(result_rows(s.table.head(shown))) for s in arms}
    for i, first in enumerate(rows[arms[0].arm]):
        row = [first["id"], first["kind"], _first_words(result.questions.get(first["id"], ""))]
        for s in arms:
            r = rows[s.arm][i]
            row += [_majority(r), _citations(r)]
        row += [_who_is_right(c, rows, i) for c in result.comparisons]
        out.append("| " + " | ".join(_cell(x) for x in row) + " |")
    out += ["", "</details>", ""]
    return out


def _first_words(text: str) -> str:
    words = text.split()
    quoted = " ".join(words[:FIRST_WORDS])
    if len(quoted) > FIRST_CHARS:
        quoted = quoted[: FIRST_CHARS - 1].rstrip()
    return quoted + ("…" if quoted != " ".join(words) else "")


def _majority(r: Row) -> str:
    if not r["answered"]:
        return "not answered"
    votes: dict[str, bool] = r["votes"]
    yes = sum(votes.values())
    tie = bool(votes) and 2 * yes == len(votes)
    word = "correct" if r["correct"] else ("incorrect, a tie" if tie else "incorrect")
    listed = ", ".join(f"{rater} {'✓' if v else '✗'}" for rater, v in votes.items())
    return f"{word} ({listed})" if listed else word


def _citations(r: Row) -> str:
    if not r["answered"]:
        return "—"
    if not r["citations"]:
        return "uncited"
    counts = Counter(str(c["class"]) for c in r["citations"])
    return ", ".join(f"{counts[c]} {c}" for c in CLASS_ORDER if counts[c])


def _who_is_right(c: Comparison, rows: dict[str, list[Row]], i: int) -> str:
    cand, base = rows[c.candidate][i]["correct"], rows[c.baseline][i]["correct"]
    if cand and base:
        return "both right"
    if cand:
        return "C right, B wrong"
    return "B right, C wrong" if base else "both wrong"


def _cell(text: str) -> str:
    """Text safe inside a markdown table inside HTML: no pipes, tags or line breaks."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|")
