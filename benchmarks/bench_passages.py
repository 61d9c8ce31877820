"""Does the repo-search arm quote the facts a question needs, and cite what it quotes? (13, 24)

A corpus is a folder with ``questions.jsonl`` (``id``, ``kind``, ``question``,
``required_facts``, ``sources``: the files a right answer rests on, as ``<repo>/<path>``;
optional ``workspace``: the question's workspace folder, relative to the corpus) and a
``workspace/`` folder for the questions that name none. The default corpus is
``benchmarks/heldout/``: a platform team's repository as it would be at one commit (ADRs,
one superseded by another; runbooks; CODEOWNERS; a service catalogue in YAML; a status page;
a changelog; some code) and 24 questions written from the documents before the arm was run
on them. Both passage modes answer every question, each given the question's kind as
``experiment run`` gives it to the harness (``--no-kind``: read from the question's words).

Per mode it reports:

- **every required fact**: the answers holding every required fact, compared NFKC-normalised,
  casefolded and with runs of white space as one space; with its Wilson 95% interval;
- **citations valid**: the citations whose file is one of the question's sources (the spec's
  "fabricated" test; the hashes are the workspace's own, so none is stale here);
- **citations quoted**: the citations whose cited lines are all in the answer, verbatim
  (read from the workspace file, joined by newlines, a substring of the answer): a citation
  that points past what the answer quotes is not the answer's source;
- the first citation right, the median answer length and the time.

    .venv/bin/python -m benchmarks.bench_passages [--corpus DIR] [--no-kind] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
import unicodedata
from pathlib import Path
from typing import Any

from flightdeck.arms.agents.repo_search import SearchResult, search
from flightdeck.scoring.stats import wilson_interval

HERE = Path(__file__).parent / "heldout"
_SPAN = re.compile(r"^(?P<path>.+)#L(?P<a>\d+)-L(?P<b>\d+)$")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold())


def quoted(workspace: Path, uri: str, answer: str) -> bool:
    """Whether every line the citation spans is in the answer, verbatim and in order."""
    match = _SPAN.match(uri)
    if match is None:
        return False
    path = workspace / match["path"]
    if not path.is_file():
        return False
    lines = path.read_bytes().decode("utf-8", "replace").split("\n")
    a, b = int(match["a"]), int(match["b"])
    if not 1 <= a <= b <= len(lines):
        return False
    return "\n".join(lines[a - 1 : b]).strip("\n") in answer


def _row(q: dict[str, Any], workspace: Path, result: SearchResult) -> dict[str, Any]:
    answer = _norm(result.answer)
    missing = [f for f in q["required_facts"] if _norm(f) not in answer]
    uris = [uri for uri, _ in result.citations]
    valid = [uri.split("#")[0] in q["sources"] for uri in uris]
    return {
        "id": q["id"],
        "kind": q["kind"],
        "all_facts": not missing,
        "missing": missing,
        "citations": len(uris),
        "valid": sum(valid),
        "quoted": sum(quoted(workspace, uri, result.answer) for uri in uris),
        "first_citation_right": bool(valid and valid[0]),
        "answer_chars": len(result.answer),
    }


def evaluate(mode: str, corpus: Path = HERE, *, use_kind: bool = True) -> dict[str, Any]:
    lines = (corpus / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    rows = []
    started = time.perf_counter()
    for q in questions:
        workspace = corpus / q.get("workspace", "workspace")
        kind = q["kind"] if use_kind else None
        result = search(workspace, q["question"], passages=mode, kind=kind)
        rows.append(_row(q, workspace, result))
    seconds = time.perf_counter() - started
    n = len(rows)
    k = sum(r["all_facts"] for r in rows)
    interval = wilson_interval(k, n, confidence=0.95)
    cites = sum(r["citations"] for r in rows)
    by_kind: dict[str, list[int]] = {}
    for r in rows:
        by_kind.setdefault(r["kind"], [0, 0])
        by_kind[r["kind"]][0] += r["all_facts"]
        by_kind[r["kind"]][1] += 1
    return {
        "mode": mode,
        "questions": n,
        "all_facts": k,
        "all_facts_share": round(k / n, 3),
        "wilson_95": [round(interval.lo, 3), round(interval.hi, 3)],
        "citations": cites,
        "citations_valid": sum(r["valid"] for r in rows),
        "citations_quoted": sum(r["quoted"] for r in rows),
        "first_citation_right": sum(r["first_citation_right"] for r in rows),
        "median_answer_chars": sorted(r["answer_chars"] for r in rows)[n // 2],
        "by_kind": by_kind,
        "seconds": round(seconds, 2),
        "rows": rows,
    }


def _share(k: int, n: int) -> str:
    return f"{k} of {n} ({k / n:.0%})" if n else "0 of 0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE, help="a corpus folder")
    parser.add_argument("--no-kind", action="store_true", help="read kinds from the words")
    parser.add_argument("--json", action="store_true", help="print every row as JSON")
    args = parser.parse_args()
    results = [
        evaluate(mode, args.corpus, use_kind=not args.no_kind) for mode in ("window", "section")
    ]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        "| passages | every required fact present | Wilson 95% | citations valid "
        "| citations quoted | first citation right | median answer | time |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        lo, hi = r["wilson_95"]
        print(
            f"| {r['mode']} | {_share(r['all_facts'], r['questions'])} | {lo:.0%}-{hi:.0%} "
            f"| {_share(r['citations_valid'], r['citations'])} "
            f"| {_share(r['citations_quoted'], r['citations'])} "
            f"| {r['first_citation_right']} of {r['questions']} "
            f"| {r['median_answer_chars']} chars | {r['seconds']:.1f} s |"
        )
    for r in results:
        kinds = ", ".join(f"{kind} {k}/{n}" for kind, (k, n) in sorted(r["by_kind"].items()))
        print(f"{r['mode']} by kind: {kinds}")
    for r in results:
        for row in r["rows"]:
            if row["missing"]:
                print(f"{r['mode']} {row['id']} ({row['kind']}): missing {row['missing']}")


if __name__ == "__main__":
    main()
