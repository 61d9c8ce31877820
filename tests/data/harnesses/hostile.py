"""A harness that tries what a sandbox must stop, then answers with what happened.

``hostile.py --read PATH ... --connect HOST:PORT --env NAME``: reads each PATH (the suite's
keys, a repository's .git, the holdouts manifest, by absolute path), writes into its
workspace (an existing file, a new file, a chmod), remounts the workspace writable, opens a
TCP connection, reads the environment variable NAME; ``--link-trace PATH`` leaves its
FLIGHTDECK_TRACE as a symlink to PATH (for the runner, outside, to follow); ``--walk DIR``
counts the files under DIR (ENOENT when DIR is not there); ``--unix PATH`` connects to a unix
socket file, ``--abstract NAME`` to an abstract unix socket; ``--write PATH`` creates a file.
The answer is a JSON object: for each attempt, "ok" or the error (errno name). It always
answers, so the trial records it.
"""

import argparse
import ctypes
import errno
import json
import os
import socket
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--read", action="append", default=[])
parser.add_argument("--connect", default=None)
parser.add_argument("--env", action="append", default=[])
parser.add_argument("--link-trace", default=None)
parser.add_argument("--walk", action="append", default=[])
parser.add_argument("--unix", action="append", default=[])
parser.add_argument("--abstract", action="append", default=[])
parser.add_argument("--write", action="append", default=[])
parser.add_argument("--open-write", action="append", default=[])
parser.add_argument("--plan", default=None)
args = parser.parse_args()
if args.plan:  # more attempts, by path: a path named on the command line may be bound in
    for key, values in json.loads(Path(args.plan).read_text()).items():
        getattr(args, key).extend(values)
sys.stdin.read()


def attempt(action):  # type: ignore[no-untyped-def]
    try:
        value = action()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))
    return "ok" if value is None else f"ok: {value}"


workspace = Path(os.environ["FLIGHTDECK_WORKSPACE"])
first = sorted(p for p in workspace.rglob("*") if p.is_file())[0]
outcomes = {}
for path in args.read:
    outcomes[f"read {path}"] = attempt(lambda p=path: len(Path(p).read_bytes()) and None)


def walk(folder: str) -> int:
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, folder)
    return sum(len(files) for _, _, files in os.walk(folder))


def connect_unix(address: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(address)


for folder in args.walk:
    outcomes[f"walk {folder}"] = attempt(lambda f=folder: walk(f))
for address in args.unix:
    outcomes[f"unix {address}"] = attempt(lambda a=address: connect_unix(a))
for name in args.abstract:
    outcomes[f"abstract {name}"] = attempt(lambda n=name: connect_unix("\0" + n))
for target in args.write:
    outcomes[f"write {target}"] = attempt(lambda t=target: Path(t).write_text("x") and None)
for target in args.open_write:
    outcomes[f"open-write {target}"] = attempt(lambda t=target: os.close(os.open(t, os.O_WRONLY)))
outcomes["write workspace file"] = attempt(lambda: first.open("ab").close())
outcomes["create workspace file"] = attempt(
    lambda: (workspace / "new.txt").write_text("x") and None
)
outcomes["chmod workspace file"] = attempt(lambda: os.chmod(first, 0o666))


def remount() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    ms_remount, ms_bind = 32, 4096
    if libc.mount(None, str(workspace).encode(), None, ms_remount | ms_bind, None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


outcomes["remount workspace writable"] = attempt(remount)
if args.connect:
    host, port = args.connect.rsplit(":", 1)
    outcomes["connect"] = attempt(
        lambda: socket.create_connection((host, int(port)), timeout=5).close()
    )
for name in args.env:
    outcomes[f"env {name}"] = "ok: " + os.environ[name] if name in os.environ else "unset"
if args.link_trace:
    outcomes["link trace"] = attempt(
        lambda: os.symlink(args.link_trace, os.environ["FLIGHTDECK_TRACE"])
    )
outcomes["uid"] = f"ok: {os.getuid()}"
print(json.dumps({"answer": json.dumps(outcomes, sort_keys=True), "citations": []}))
