"""What the network allow-list costs: a sandbox's start, and bytes through the relay.

``.venv/bin/python -m benchmarks.bench_net_relay [--starts N] [--mib M]``:

- **start**: a trivial sandbox (bwrap around ``true``, as :func:`net_relay.relay_works` starts
  it) started N times in a row, with the relay in front (one target) and without it (the
  network off), interleaved; the median of each and the difference per trial;
- **throughput**: a server on this machine's loopback sends M MiB; a client reads them all,
  once inside the sandbox through the relay and once on the host straight from the server
  (the reference), best of three each; MiB/s and the ratio.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from flightdeck.arms import net_allow, net_relay

CHUNK = b"x" * (1 << 20)
READER = (
    "import socket, sys, time\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\n"
    "t = time.perf_counter(); n = 0\n"
    "while b := s.recv(1 << 20): n += len(b)\n"
    "print(n, time.perf_counter() - t)\n"
)


def _sandbox(bwrap: str, etc: Path, command: list[str], port: int | None) -> list[str]:
    argv = [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all"]
    argv += ["--cap-drop", "ALL", "--die-with-parent"]
    if port is None:
        return [*argv, "--", *command]
    relay = net_relay.relay_argv([net_allow.Target("127.0.0.1", port)], etc)
    return [*relay, *argv, "--share-net", *net_relay.etc_binds(etc), "--", *command]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def starts(bwrap: str, count: int) -> dict[bool, tuple[float, float]]:
    """Median wall seconds and mean CPU seconds (user + system, every process) to start and
    finish a trivial sandbox, with the relay (True) and without (False)."""
    wall: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, float] = {True: 0.0, False: 0.0}
    with tempfile.TemporaryDirectory() as folder:
        for i in range(count * 2):
            relay = i % 2 == 0
            argv = _sandbox(bwrap, Path(folder) / f"n{i}", ["true"], 9 if relay else None)
            began, used = time.perf_counter(), _cpu()
            subprocess.run(argv, check=True)
            wall[relay].append(time.perf_counter() - began)
            cpu[relay] += _cpu() - used
    return {k: (statistics.median(wall[k]), cpu[k] / count) for k in (True, False)}


def _serve(mib: int) -> tuple[socket.socket, threading.Thread]:
    server = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                for _ in range(mib):
                    conn.sendall(CHUNK)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return server, thread


def throughput(bwrap: str, mib: int) -> tuple[float, float]:
    """MiB/s read through the relay inside a sandbox, and straight on the host."""
    server, _ = _serve(mib)
    port = server.getsockname()[1]
    python = [sys.executable, "-c", READER, str(port)]
    best = {True: 0.0, False: 0.0}
    try:
        with tempfile.TemporaryDirectory() as folder:
            for i in range(6):
                relay = i % 2 == 0
                argv = _sandbox(bwrap, Path(folder) / f"t{i}", python, port) if relay else python
                out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
                size, seconds = out.split()
                assert int(size) == mib << 20, out
                best[relay] = max(best[relay], mib / float(seconds))
    finally:
        server.close()
    return best[True], best[False]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--mib", type=int, default=512)
    args = parser.parse_args()
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        sys.exit("bwrap is not installed")
    found = starts(bwrap, args.starts)
    (wall_on, cpu_on), (wall_off, cpu_off) = found[True], found[False]
    print(
        f"start: {wall_on * 1000:.0f} ms wall / {cpu_on * 1000:.0f} ms CPU with the relay, "
        f"{wall_off * 1000:.0f} ms / {cpu_off * 1000:.0f} ms without (median wall, mean CPU "
        f"of {args.starts} each): +{(cpu_on - cpu_off) * 1000:.0f} ms CPU a trial"
    )
    relayed, direct = throughput(bwrap, args.mib)
    print(
        f"throughput: {relayed:.0f} MiB/s through the relay, {direct:.0f} MiB/s straight "
        f"(best of 3, {args.mib} MiB): {relayed / direct:.2f}x"
    )


if __name__ == "__main__":
    main()
