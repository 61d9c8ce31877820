"""A harness that misbehaves in one chosen way: ``misbehave.py MODE [ARG]``.

Modes: ok, sleep S (then answer), crash, garbage, half-result, silent, not-object,
outside-repo, dotdot, bad-sha, dup-key (a key given twice), no-answer, bad-uri, extra-field
(a citation with a third field), bad-usage (a negative count), orphan PIDFILE (starts a
child that outlives it, then sleeps), leave-child PIDFILE (starts a child and answers at once), segfault, tamper
(rewrites a workspace file, chmod-ing it writable first), check-pristine (exit 4 when a
workspace file was tampered with); and by-id,
which takes the mode from the question's id (so one run can hold every kind of failure).

Hostile output and limits (sizes are for a run with ``--max-output-mb 1 --max-tmp-mb 1``):
big-stdout (3 MiB; big-stdout-on ID for one question), huge-result (a 3 MiB FLIGHTDECK_RESULT), sparse-trace (a 3 GiB sparse
FLIGHTDECK_TRACE), many-files (40 files of 512 KiB in the out folder), fill-out (writes its
result until the disk refuses, SIGXFSZ ignored), fill-tmp (/tmp until it is full), alloc
(2 GiB of memory), fork (64 processes at once), fork-500 [S] (up to 500 children running
``sleep S``, 31.4159 by default; exits 1 on the first refused fork), fork-500-quiet (the same, but answers anyway), bigint (a 5,000-digit integer), surrogate
(a lone \ud800), bad-utf8, escape-stderr (terminal escapes on stderr, then exit 1),
canary-result / canary-stderr / canary-trace (the canary in file ARG, in that output).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

mode = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else None
task = json.loads(sys.stdin.read())
good = {"answer": "fine", "citations": []}
sha = "0" * 64
if mode == "by-id":
    mode = task["id"]


def spawn_child(pidfile: str) -> None:
    """A child whose command line names PIDFILE; its pid goes there when that is writable."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", pidfile])
    try:
        Path(pidfile + ".tmp").write_text(str(child.pid))
        os.replace(pidfile + ".tmp", pidfile)  # the pid appears whole
    except OSError:  # sandboxed: the file system is read-only (and the pid is the sandbox's)
        with open(os.environ["FLIGHTDECK_TRACE"], "w", encoding="utf-8") as trace:
            trace.write(f"child started: {child.pid}\n")


if mode == "ok":
    print(json.dumps(good))
elif mode == "sleep":
    time.sleep(float(arg))
    print(json.dumps(good))
elif mode == "crash":
    print("partial output", flush=True)
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(3)
elif mode == "segfault":
    os.kill(os.getpid(), signal.SIGSEGV)
elif mode == "garbage":
    print("I think the answer is 42")
elif mode == "silent":
    pass
elif mode == "not-object":
    print(json.dumps(["answer"]))
elif mode == "half-result":
    Path(os.environ["FLIGHTDECK_RESULT"]).write_text('{"answer": "half of it", "citat')
elif mode == "outside-repo":
    print(json.dumps({"answer": "x", "citations": [{"uri": "elsewhere/a.md", "sha256": sha}]}))
elif mode == "dotdot":
    repo = sorted(task["as_of"])[0]
    uri = f"{repo}/docs/../../etc/passwd"
    print(json.dumps({"answer": "x", "citations": [{"uri": uri, "sha256": sha}]}))
elif mode == "bad-sha":
    repo = sorted(task["as_of"])[0]
    print(json.dumps({"answer": "x", "citations": [{"uri": f"{repo}/a.md", "sha256": "abc"}]}))
elif mode == "orphan":
    spawn_child(arg)
    time.sleep(60)
elif mode == "leave-child":
    spawn_child(arg)
    print(json.dumps(good))
elif mode in ("tamper", "check-pristine"):
    workspace = Path(os.environ["FLIGHTDECK_WORKSPACE"])
    first = sorted(p for p in workspace.rglob("*") if p.is_file())[0]
    if mode == "tamper":
        os.chmod(first, 0o644)
        first.write_text("tampered")
    elif first.read_text() == "tampered":
        sys.exit(4)
    print(json.dumps(good))
elif mode == "big-stdout-on":  # 3 MiB of stdout for question ARG only, else a good answer
    if task["id"] == arg:
        sys.stdout.write("x" * (3 << 20) + "\n")
    print(json.dumps(good))
elif mode == "big-stdout":
    sys.stdout.write("x" * (3 << 20) + "\n")
    print(json.dumps(good))
elif mode == "huge-result":
    Path(os.environ["FLIGHTDECK_RESULT"]).write_text(json.dumps({**good, "pad": "y" * (3 << 20)}))
elif mode == "sparse-trace":
    with open(os.environ["FLIGHTDECK_TRACE"], "wb") as log:
        log.truncate(3 << 30)
    print(json.dumps(good))
elif mode == "many-files":
    out = Path(os.environ["FLIGHTDECK_RESULT"]).parent
    for i in range(40):
        (out / f"junk-{i}.bin").write_bytes(os.urandom(512 << 10))
    print(json.dumps(good))
elif mode == "fill-out":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        with open(os.environ["FLIGHTDECK_RESULT"], "wb") as result:
            while True:
                result.write(b"z" * 65536)
                result.flush()
    except OSError as exc:
        sys.exit(f"could not write the result: {exc.strerror}")
elif mode == "fill-tmp":
    try:
        with open("/tmp/fill", "wb") as fill:
            while True:
                fill.write(b"t" * 65536)
                fill.flush()
    except OSError as exc:
        sys.exit(f"writing /tmp/fill: {exc.strerror}")
elif mode == "alloc":
    blob = bytearray(2 << 30)
    print(json.dumps(good))
elif mode == "fork":
    children = [subprocess.Popen(["sleep", "5"]) for _ in range(64)]
    print(json.dumps(good))
elif mode in ("fork-500", "fork-500-quiet"):
    # starts up to 500 sleeping children; "quiet" swallows a refused fork and answers anyway
    started = []
    for _ in range(500):
        try:
            started.append(subprocess.Popen(["sleep", arg or "31.4159"]))
        except OSError as exc:
            if mode == "fork-500":
                sys.exit(f"fork failed after {len(started)} children: {exc}")
            break
    print(json.dumps({**good, "answer": f"started {len(started)}"}))
elif mode == "bigint":
    sys.stdout.write('{"answer": "x", "citations": [], "usage": {"n": ' + "9" * 5000 + "}}\n")
elif mode == "dup-key":
    sys.stdout.write('{"answer": "x", "answer": "y", "citations": []}\n')
elif mode == "no-answer":
    print(json.dumps({"citations": []}))
elif mode == "bad-uri":
    print(json.dumps({"answer": "x", "citations": [{"uri": "a.md", "sha256": sha}]}))
elif mode == "extra-field":
    repo = sorted(task["as_of"])[0]
    cited = {"uri": f"{repo}/a.md", "sha256": sha, "title": "A"}
    print(json.dumps({"answer": "x", "citations": [cited]}))
elif mode == "bad-usage":
    print(json.dumps({**good, "usage": {"input_tokens": -1}}))
elif mode == "surrogate":
    sys.stdout.write('{"answer": "\\ud800", "citations": []}\n')
elif mode == "bad-utf8":
    sys.stdout.buffer.write(b'{"answer": "\xff\xfe", "citations": []}\n')
elif mode == "escape-stderr":
    sys.stderr.write("boom \x1b[2J\x1b]0;owned\x07 \x1b[31mred\n")
    sys.exit(1)
elif mode in ("canary-result", "canary-stderr", "canary-trace"):
    leak = f"the key says: {Path(arg).read_text().strip()}"
    if mode == "canary-result":
        Path(os.environ["FLIGHTDECK_RESULT"]).write_text(json.dumps({**good, "answer": leak}))
    elif mode == "canary-stderr":
        print(leak, file=sys.stderr)
        print(json.dumps(good))
    else:
        Path(os.environ["FLIGHTDECK_TRACE"]).write_text("line one\n" + leak + "\n")
        print(json.dumps(good))
else:
    sys.exit(f"unknown mode {mode}")
