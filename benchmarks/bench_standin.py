"""The built-in repo-search arm on the held-out public corpus (issue 24), run as a user runs it.

Copies ``benchmarks/heldout-public/suite`` into a temporary project (params.yaml naming the
three bundles), seals the copy, and runs the arm with the real command::

    flightdeck experiment run suites/heldout-public-v1 --arm repo-search \\
        --harness "python -m flightdeck experiment agent repo-search" --jobs 2

Then it reads the answers file and reports, against the frozen keys:

- answers holding every required fact: a fact is held when its normalised text (NFKC,
  casefold, whitespace runs as one space) is a substring of the normalised answer; count,
  share and its Wilson 95% interval, overall and by kind;
- the share of citations that are valid sources (the uri without its ``#L`` span equals a
  valid source's uri);
- whether every cited span lies inside its file: ``#La-Lb`` with 1 <= a <= b <= the file's
  line count at the question's ``as_of`` (read from the bundle);
- the wall time of the whole ``experiment run`` process (every trial, workspaces included).

``--corpus DIR`` runs another frozen corpus laid out the same way (``suite/``, ``repos/*.bundle``),
e.g. ``--corpus benchmarks/heldout-public-v2``; its suite is named after the folder
(``heldout-public-v2``), the default corpus' stays ``heldout-public-v1``.

``--src DIR`` runs another flightdeck's sources (``PYTHONPATH=DIR`` for the run and its
harness, e.g. ``--src /work/main/src``); the scoring here always uses this tree.

Run: ``.venv/bin/python -m benchmarks.bench_standin [--json] [--corpus DIR] [--src DIR]
[--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

from flightdeck.scoring.stats import wilson_interval

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "heldout-public"
SUITE = "heldout-public-v1"
ARM = "repo-search"
SPAN = re.compile(r"^L(\d+)(?:-L(\d+))?$")


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def suite_name(corpus: Path) -> str:
    """The suite's name in the temporary project: v1's for the default corpus, else the folder's."""
    return SUITE if corpus.resolve() == CORPUS.resolve() else corpus.resolve().name


def make_project(project: Path, corpus: Path = CORPUS) -> Path:
    """A flightdeck project holding a sealed copy of the corpus; returns the suite folder."""
    suite = project / "suites" / suite_name(corpus)
    suite.mkdir(parents=True)
    for name in ("questions.jsonl", "keys.jsonl"):
        shutil.copyfile(corpus / "suite" / name, suite / name)
    repos = {b.stem: str(b.resolve()) for b in sorted((corpus / "repos").glob("*.bundle"))}
    lines = ["repos:", *(f"  {name}: {path}" for name, path in repos.items())]
    (project / "params.yaml").write_text("\n".join(lines) + "\n")
    return suite


def _flightdeck(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flightdeck", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


class LineCounts:
    """Line counts of files at a commit, read from bare clones of the bundles as needed."""

    def __init__(self, folder: Path, corpus: Path = CORPUS) -> None:
        self.folder = folder
        self.corpus = corpus
        self.cache: dict[tuple[str, str, str], int | None] = {}

    def get(self, repo: str, commit: str, path: str) -> int | None:
        """Lines of ``path`` at ``commit`` in ``repo``; None when it is not there."""
        key = (repo, commit, path)
        if key not in self.cache:
            clone = self.folder / repo
            bundle = self.corpus / "repos" / f"{repo}.bundle"
            if not clone.exists() and bundle.exists():
                subprocess.run(
                    ["git", "clone", "-q", "--bare", str(bundle), str(clone)], check=True
                )
            shown = subprocess.run(
                ["git", f"--git-dir={clone}", "show", f"{commit}:{path}"],
                capture_output=True,
                check=False,
            )
            self.cache[key] = len(shown.stdout.splitlines()) if shown.returncode == 0 else None
        return self.cache[key]


def measure(answers: list[dict[str, Any]], project: Path, corpus: Path = CORPUS) -> dict[str, Any]:
    """Facts held, citation validity and spans of ``answers`` against the corpus's keys."""
    questions = {q["id"]: q for q in _jsonl(corpus / "suite" / "questions.jsonl")}
    keys = {k["id"]: k for k in _jsonl(corpus / "suite" / "keys.jsonl")}
    by_id = {a["id"]: a for a in answers}
    lines = LineCounts(project / "clones", corpus)
    held_ids: list[str] = []
    per_kind: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0])
    cited = valid = spans = spans_inside = 0
    outside: list[str] = []
    rows = []
    for qid, key in keys.items():
        question = questions[qid]
        answer = by_id.get(qid)
        text = normalise(answer["answer"]) if answer else ""
        missing = [f for f in key["required_facts"] if normalise(f) not in text]
        kind = question["kind"]
        per_kind[kind][1] += 1
        if answer and not missing:
            held_ids.append(qid)
            per_kind[kind][0] += 1
        allowed = {s["uri"].split("#")[0] for s in key["valid_sources"]}
        uris = [c["uri"] for c in answer["citations"]] if answer else []
        for uri in uris:
            cited += 1
            base, _, span = uri.partition("#")
            valid += base in allowed
            if not span:
                continue
            spans += 1
            repo, _, path = base.partition("/")
            match = SPAN.match(span)
            total = lines.get(repo, question["as_of"].get(repo, ""), path)
            first = int(match.group(1)) if match else 0
            last = int(match.group(2) or first) if match else 0
            if match and total is not None and 1 <= first <= last <= total:
                spans_inside += 1
            else:
                outside.append(f"{qid}: {uri} (file has {total} lines)")
        rows.append({"id": qid, "kind": kind, "answered": answer is not None, "missing": missing})
    n, k = len(keys), len(held_ids)
    share = wilson_interval(k, n)
    return {
        "questions": n,
        "answered": sum(1 for qid in keys if qid in by_id),
        "facts_held": {"count": k, "share": share.value, "wilson95": [share.lo, share.hi]},
        "facts_held_by_kind": {
            kind: {"count": c, "of": t} for kind, (c, t) in sorted(per_kind.items())
        },
        "citations": {
            "count": cited,
            "valid": valid,
            "share_valid": valid / cited if cited else None,
        },
        "spans": {"count": spans, "inside_file": spans_inside, "all_inside": spans == spans_inside},
        "spans_outside": outside,
        "per_question": rows,
    }


def run(src: Path | None, jobs: int, keep: Path | None, corpus: Path = CORPUS) -> dict[str, Any]:
    name = suite_name(corpus)
    with tempfile.TemporaryDirectory(prefix="bench-standin-") as tmp:
        project = keep if keep is not None else Path(tmp)
        project.mkdir(parents=True, exist_ok=True)
        suite = make_project(project, corpus)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        flags: list[str] = []
        if src is not None:
            # another engineer's tree: read it, write no __pycache__ into it
            env.update({"PYTHONPATH": str(src.resolve()), "PYTHONDONTWRITEBYTECODE": "1"})
            flags = ["--pass-env", "PYTHONPATH", "--pass-env", "PYTHONDONTWRITEBYTECODE"]
        sealed = _flightdeck(
            project, env, "knowledge", "seal", f"suites/{name}", "--holdouts", "holdouts"
        )
        if sealed.returncode != 0:
            raise SystemExit(f"seal failed ({sealed.returncode}): {sealed.stderr.strip()}")
        harness = f"{sys.executable} -m flightdeck experiment agent repo-search"
        start = time.perf_counter()
        done = _flightdeck(
            project,
            env,
            "experiment", "run", f"suites/{name}", "--arm", ARM,
            "--harness", harness, "--jobs", str(jobs), *flags,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise SystemExit(f"experiment run failed ({done.returncode}): {done.stderr.strip()}")
        answers_file = suite / "answers" / f"{ARM}.jsonl"
        answers = _jsonl(answers_file) if answers_file.exists() else []
        result = measure(answers, project, corpus)
        result.update(
            {
                "wall_seconds": round(wall, 2),
                "jobs": jobs,
                "run_exit": done.returncode,
                "src": str(src.resolve()) if src else str(ROOT / "src"),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "corpus": str(corpus.resolve()),
                "command": f"flightdeck experiment run suites/{name} --arm {ARM} "
                f"--harness '{harness}' --jobs {jobs}",
            }
        )
        return result


def _render(result: dict[str, Any]) -> str:
    facts, cites, spans = result["facts_held"], result["citations"], result["spans"]
    lo, hi = facts["wilson95"]
    out = [
        f"corpus: {result['corpus']}",
        f"src: {result['src']}",
        f"answered {result['answered']} of {result['questions']} "
        f"(experiment run exit {result['run_exit']})",
        f"every required fact held: {facts['count']} of {result['questions']} "
        f"({facts['share']:.0%}, Wilson 95% {lo:.0%}-{hi:.0%})",
        "  by kind: "
        + ", ".join(f"{k} {v['count']}/{v['of']}" for k, v in result["facts_held_by_kind"].items()),
        f"citations that are valid sources: {cites['valid']} of {cites['count']}"
        + (f" ({cites['share_valid']:.0%})" if cites["count"] else ""),
        f"cited spans inside their file: {spans['inside_file']} of {spans['count']}"
        + ("" if spans["all_inside"] else f"; outside: {'; '.join(result['spans_outside'])}"),
        f"wall time, all trials (--jobs {result['jobs']}): {result['wall_seconds']:.2f} s "
        f"(load average {result['load_average'][0]})",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--corpus", type=Path, default=CORPUS, help="the frozen corpus folder (suite/, repos/)"
    )
    parser.add_argument("--src", type=Path, default=None, help="flightdeck sources to run")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="build the project here, keep it")
    args = parser.parse_args(argv)
    for part in ("suite/questions.jsonl", "suite/keys.jsonl", "repos"):
        if not (args.corpus / part).exists():
            parser.error(f"--corpus {args.corpus}: no {part} there; name a corpus folder")
    result = run(args.src, args.jobs, args.keep, args.corpus)
    print(json.dumps(result, indent=2) if args.json else _render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
