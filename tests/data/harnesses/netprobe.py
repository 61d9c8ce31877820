"""A harness that probes its network, then answers with what it reached.

``netprobe.py --plan PLAN.json``: PLAN lists attempts by kind, each a list:

- ``get``: ``http://host:port/path`` fetched with urllib (the body's first 200 bytes);
- ``connect``: ``HOST:PORT`` (or ``[V6]:PORT``), a TCP connection opened and closed;
- ``resolve``: a host name, looked up with getaddrinfo;
- ``raw``: ``[HOST:PORT, TEXT]``, TEXT sent as is (a CONNECT line, a request naming another
  Host), then the reply read until the peer closes;
- ``echo``: ``[HOST:PORT, N]``, N random bytes sent and the reply compared with them;
- ``unix``: a unix socket file connected to (``@NAME``: an abstract one);
- ``files``: a file read (``/etc/hosts``).

The answer is a JSON object: for each attempt, ``ok: ...`` or the error (errno name, or the
resolver's message). It always answers, so the trial records it. ``--exit N`` exits N after
answering (a harness that fails once its endpoint is gone).
"""

import argparse
import errno
import hashlib
import json
import os
import socket
import sys
import urllib.request
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--plan", required=True)
parser.add_argument("--exit", type=int, default=0)
args = parser.parse_args()
plan = json.loads(Path(args.plan).read_text())
sys.stdin.read()


def address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def attempt(action):  # type: ignore[no-untyped-def]
    try:
        value = action()
    except socket.gaierror as exc:
        return f"gaierror: {exc.strerror}"
    except OSError as exc:
        reason = getattr(exc, "reason", None)  # urllib wraps the socket's error
        if isinstance(reason, OSError):
            exc = reason
        if isinstance(exc, socket.gaierror):
            return f"gaierror: {exc.strerror}"
        if exc.errno is None and isinstance(exc, TimeoutError):
            return "ETIMEDOUT"
        return errno.errorcode.get(exc.errno or 0, str(exc))
    return "ok" if value is None else f"ok: {value}"


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read(200).decode("utf-8", "replace")


def raw(target: str, text: str) -> str:
    with socket.create_connection(address(target), timeout=10) as sock:
        sock.sendall(text.encode())
        sock.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply.decode("utf-8", "replace")


def echo(target: str, size: int) -> str:
    sent = os.urandom(size)
    with socket.create_connection(address(target), timeout=10) as sock:
        sock.sendall(sent)
        sock.shutdown(socket.SHUT_WR)
        back = bytearray()
        while chunk := sock.recv(65536):
            back += chunk
    same = hashlib.sha256(back).digest() == hashlib.sha256(sent).digest()
    return f"{len(back)} bytes back, {'identical' if same else 'different'}"


def connect_unix(path: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect("\0" + path[1:] if path.startswith("@") else path)


outcomes = {}
for url in plan.get("get", []):
    outcomes[f"get {url}"] = attempt(lambda u=url: get(u))
for target in plan.get("connect", []):
    outcomes[f"connect {target}"] = attempt(
        lambda t=target: socket.create_connection(address(t), timeout=10).close()
    )
for name in plan.get("resolve", []):
    outcomes[f"resolve {name}"] = attempt(
        lambda n=name: sorted({a[4][0] for a in socket.getaddrinfo(n, 80)})
    )
for target, text in plan.get("raw", []):
    outcomes[f"raw {target}"] = attempt(lambda t=target, x=text: raw(t, x))
for target, size in plan.get("echo", []):
    outcomes[f"echo {target}"] = attempt(lambda t=target, n=size: echo(t, n))
for path in plan.get("unix", []):
    outcomes[f"unix {path}"] = attempt(lambda p=path: connect_unix(p))
for path in plan.get("files", []):
    outcomes[f"file {path}"] = attempt(lambda p=path: Path(p).read_text())
print(json.dumps({"answer": json.dumps(outcomes, sort_keys=True), "citations": []}))
sys.exit(args.exit)
