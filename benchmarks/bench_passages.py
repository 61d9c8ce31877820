"""Does the repo-search arm quote the facts a question needs? A held-out corpus (issue 13).

``benchmarks/heldout/``: a platform team's repository as it would be at one commit (ADRs, one
superseded by another; runbooks; CODEOWNERS; a service catalogue in YAML; a status page with
three weeks of history; a changelog; some code) and 24 questions with the facts a correct
answer must state, written from the documents before the arm was run on them and not
changed after. A fact counts as present when it appears in the answer, compared NFKC-
normalised, casefolded and with runs of white space as one space. Both passage modes answer
every question; the figure is the share of answers holding every required fact, with its
Wilson 95% interval, and the share whose first citation is one of the question's sources.

    .venv/bin/python -m benchmarks.bench_passages [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
import unicodedata
from pathlib import Path

from flightdeck.arms.agents.repo_search import search
from flightdeck.scoring.stats import wilson_interval

HERE = Path(__file__).parent / "heldout"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold())


def evaluate(mode: str) -> dict[str, object]:
    questions = [json.loads(line) for line in (HERE / "questions.jsonl").read_text().splitlines()]
    workspace = HERE / "workspace"
    rows = []
    started = time.perf_counter()
    for q in questions:
        result = search(workspace, q["question"], passages=mode)
        answer = _norm(result.answer)
        missing = [f for f in q["required_facts"] if _norm(f) not in answer]
        first = result.citations[0][0].split("#")[0] if result.citations else None
        rows.append(
            {
                "id": q["id"],
                "kind": q["kind"],
                "all_facts": not missing,
                "missing": missing,
                "first_citation_right": first in q["sources"],
                "answer_chars": len(result.answer),
            }
        )
    seconds = time.perf_counter() - started
    n = len(rows)
    k = sum(r["all_facts"] for r in rows)
    interval = wilson_interval(k, n, confidence=0.95)
    return {
        "mode": mode,
        "questions": n,
        "all_facts": k,
        "all_facts_share": round(k / n, 3),
        "wilson_95": [round(interval.lo, 3), round(interval.hi, 3)],
        "first_citation_right": sum(r["first_citation_right"] for r in rows),
        "median_answer_chars": sorted(r["answer_chars"] for r in rows)[n // 2],
        "seconds": round(seconds, 2),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print every row as JSON")
    args = parser.parse_args()
    results = [evaluate(mode) for mode in ("window", "section")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        "| passages | every required fact present | Wilson 95% | first citation right "
        "| median answer |"
    )
    print("|---|---|---|---|---|")
    for r in results:
        lo, hi = r["wilson_95"]  # type: ignore[misc]
        print(
            f"| {r['mode']} | {r['all_facts']} of {r['questions']} ({r['all_facts_share']:.0%}) "
            f"| {lo:.0%}-{hi:.0%} | {r['first_citation_right']} of {r['questions']} "
            f"| {r['median_answer_chars']} chars |"
        )
    for r in results:
        for row in r["rows"]:  # type: ignore[union-attr]
            if row["missing"]:
                print(f"{r['mode']} {row['id']} ({row['kind']}): missing {row['missing']}")


if __name__ == "__main__":
    main()
