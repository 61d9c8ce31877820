"""The LLM arm's cost beyond its model (#21 item 3), against a model that answers at once.

The model is the tests' stand-in (``tests/standin_model.py``): an OpenAI-compatible server on
127.0.0.1, in this process, that answers each request at once with a scripted tool call (grep
the question's longest word, read around the first hit, submit it: about three requests a
question). The arm is ``flightdeck experiment agent llm --model openai-api/local/stand-in``
through the real ``flightdeck experiment run`` with the default bubblewrap sandbox and
``--jobs 2``, on

- the demo suite (16 questions, a copy of this checkout's demo project), and
- a synthetic suite of 40 questions over 40 documents,

each two ways: batched (the default: one harness process, one inspect eval, for up to 64
questions) and one process per question (``--no-batch``: the reference, how every trial ran
before). For each it prints

- the wall time of the whole ``experiment run``, per question;
- the median per-trial overhead beyond the model's own time: a process per question, the
  trial's seconds (as the runner measured them) minus its model seconds (inspect's model
  events); batched, its sample's seconds minus its model seconds, plus its share of the
  batch process's start (interpreter, imports, setup: divided by the batch's questions);
- the median split of a trial, from the ``timing:`` line each trial's trace holds: startup
  (interpreter and flightdeck's CLI), import (inspect_ai), setup (options, tools, task),
  wait (batched: from the eval's call to the sample's start, queueing included), model,
  tools, log and write (the inspect log and the result), eval_start (a process per question:
  the eval's time beyond its one sample) and sample_rest (inspect's loop in the sample);
- the ratio of the two ways in the same run.

Run from the project root (the numbers go to README "Performance" and benchmarks/README.md)::

    .venv/bin/python -m benchmarks.bench_llm_arm                 # both suites, both ways
    .venv/bin/python -m benchmarks.bench_llm_arm --suite demo    # one suite
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.synthetic import load_line, synthetic_suite
from tests.demo_checkout import demo_checkout, read_jsonl, user_env
from tests.standin_model import StandInServer

HARNESS = ["flightdeck", "experiment", "agent", "llm", "--model", "openai-api/local/stand-in"]
TOPICS = ("deploy", "rollback", "billing", "gateway", "oncall", "backups", "retention", "quota")


def synthetic_project(root: Path, n: int = 40) -> tuple[Path, str]:
    """A project of ``n`` questions, each about one of ``n`` documents, at one commit."""
    files = {
        f"docs/{TOPICS[i % len(TOPICS)]}-{i:02d}.md": (
            f"# {TOPICS[i % len(TOPICS)].title()} note {i}\n\n"
            f"The procedure{i:02d} for {TOPICS[i % len(TOPICS)]} is step {i} of the runbook.\n"
            "Ask the owning team before changing it.\n"
        )
        for i in range(n)
    }
    questions = [(f"q{i:02d}", f"What is procedure{i:02d}?") for i in range(n)]
    synthetic_suite(root, f"synthetic-{n}", files=files, questions=questions)
    (root / "params.yaml").write_text("repos:\n  sdlc: repos/sdlc\nharnesses: {}\narms: []\n")
    return root, f"suites/synthetic-{n}"


def timings(traces: Path) -> list[dict[str, Any]]:
    """Each trial's ``timing:`` line, from its trace."""
    found = []
    for trace in sorted(traces.glob("*.log")):
        for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("timing: "):
                found.append(json.loads(line.removeprefix("timing: ")))
                break
    return found


def one_run(root: Path, suite: str, arm: str, server: StandInServer, *extra: str) -> dict[str, Any]:
    harness = shlex.join([*HARNESS, *extra])
    env = user_env(LOCAL_BASE_URL=server.base_url, LOCAL_API_KEY="none")
    argv = ["flightdeck", "experiment", "run", suite, "--arm", arm, "--harness", harness]
    argv += ["--jobs", "2", "--timeout", "600"]
    requests = len(server.requests)
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"experiment run failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    name = Path(suite).name
    scratch = root / ".flightdeck" / "scratch" / name
    ledger = read_jsonl(scratch / "runs" / f"{arm}.jsonl")
    trials = timings(scratch / "traces" / arm)
    n = len(ledger)
    assert len(trials) == n, (len(trials), n)
    batched = "samples" in trials[0]
    if batched:
        overhead = [
            t["sample_seconds"]
            - t["model_seconds"]
            + (t.get("startup_seconds", 0) + t["import_seconds"] + t["setup_seconds"])
            / t["samples"]
            for t in trials
        ]
    else:
        seconds = {e["id"]: e["seconds"] for e in ledger}
        ids = sorted(seconds)
        overhead = [seconds[i] - t["model_seconds"] for i, t in zip(ids, trials, strict=True)]
    split_keys = ("startup", "import", "setup", "wait", "model", "tool", "log", "write")
    split = {k: statistics.median(t.get(f"{k}_seconds", 0.0) for t in trials) for k in split_keys}
    split["eval_start"] = statistics.median(  # a process per question: eval's own start
        t.get("eval_seconds", t["sample_seconds"]) - t["sample_seconds"] for t in trials
    )
    split["sample_rest"] = statistics.median(
        t["sample_seconds"] - t["model_seconds"] - t["tool_seconds"] for t in trials
    )
    return {
        "questions": n,
        "requests_per_question": (len(server.requests) - requests) / n,
        "wall": wall,
        "wall_per_question": wall / n,
        "median_overhead": statistics.median(overhead),
        "split": split,
        "processes": 1 if batched else n,
    }


def show(label: str, r: dict[str, Any]) -> None:
    split = ", ".join(f"{k} {v:.3f}" for k, v in r["split"].items())
    print(
        f"{label}: {r['questions']} questions, {r['requests_per_question']:.1f} requests each; "
        f"wall {r['wall']:.1f} s ({r['wall_per_question']:.2f} s a question); median "
        f"per-trial overhead beyond the model {r['median_overhead']:.2f} s\n"
        f"    median split (s): {split}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=["demo", "synthetic", "both"], default="both")
    args = parser.parse_args()
    print(load_line("start"))
    with tempfile.TemporaryDirectory() as tmp, StandInServer() as server:
        places = []
        if args.suite in ("demo", "both"):
            places.append(("demo", demo_checkout(Path(tmp) / "demo"), "suites/knowledge-demo-v1"))
        if args.suite in ("synthetic", "both"):
            root, suite = synthetic_project(Path(tmp) / "synthetic")
            places.append(("synthetic-40", root, suite))
        for label, root, suite in places:
            batched = one_run(root, suite, "llm-batched", server)
            alone = one_run(root, suite, "llm-alone", server, "--no-batch")
            show(f"{label}, batched", batched)
            show(f"{label}, a process per question", alone)
            ratio = alone["wall"] / batched["wall"]
            print(f"    batched against a process per question: {ratio:.2f}x faster (wall)")
    print(load_line("the end"))


if __name__ == "__main__":
    main()
