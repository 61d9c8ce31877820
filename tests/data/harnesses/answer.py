"""A well-behaved harness: cites the first file of its workspace and logs what it was given.

Options: ``--result-file`` writes the result to FLIGHTDECK_RESULT instead of stdout;
``--sleep S`` waits first; ``--fail-if-exists DIR`` exits 1 when DIR/<id> exists (to make
chosen questions fail until the file is removed); ``--hold-if-exists DIR``, when DIR/<id>
exists, writes "holding <id>" to FLIGHTDECK_TRACE and sleeps there until it is killed (so a
test can act mid-run without racing the clock; its command line names DIR, so a test finds
it in /proc even inside the sandbox's pid namespace). The trace holds the task, the
FLIGHTDECK_* variables and, for every workspace file, its path and its text, so a test can
check what the harness could see.
"""

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--result-file", action="store_true")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--fail-if-exists", default=None)
parser.add_argument("--hold-if-exists", default=None)
args = parser.parse_args()

stdin_task = sys.stdin.read()
task = json.loads(os.environ["FLIGHTDECK_TASK"])
assert json.loads(stdin_task) == task, "stdin and FLIGHTDECK_TASK differ"
if args.sleep:
    time.sleep(args.sleep)
if args.hold_if_exists and (Path(args.hold_if_exists) / task["id"]).exists():
    with open(os.environ["FLIGHTDECK_TRACE"], "w", encoding="utf-8") as held:
        held.write(f"holding {task['id']}\n")  # the one file a sandboxed harness may write
    time.sleep(600)
    sys.exit("held for 600 s and never killed")
if args.fail_if_exists and (Path(args.fail_if_exists) / task["id"]).exists():
    print(f"told to fail on {task['id']}", file=sys.stderr)
    sys.exit(1)

workspace = Path(os.environ["FLIGHTDECK_WORKSPACE"])
files = sorted(p for p in workspace.rglob("*") if p.is_file())
with open(os.environ["FLIGHTDECK_TRACE"], "w", encoding="utf-8") as trace:
    trace.write("task: " + stdin_task + "\n")
    for name in sorted(os.environ):
        if name.startswith("FLIGHTDECK_"):
            trace.write(f"env {name}={os.environ[name]}\n")
    for path in files:
        trace.write(f"file {path.relative_to(workspace).as_posix()}\n")
        trace.write(path.read_bytes().decode("utf-8", "replace") + "\n")

citations = []
if files:
    first = files[0]
    uri = first.relative_to(workspace).as_posix() + "#L1-L1"
    citations.append({"uri": uri, "sha256": hashlib.sha256(first.read_bytes()).hexdigest()})
result = json.dumps({"answer": f"answer to {task['id']}", "citations": citations})
if args.result_file:
    Path(os.environ["FLIGHTDECK_RESULT"]).write_text(result)
    print("progress: done (the result is in FLIGHTDECK_RESULT)")
else:
    print("thinking...")
    print(result)
