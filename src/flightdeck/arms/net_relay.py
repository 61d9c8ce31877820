"""The relay that gives a sandbox its network allow-list: one process per trial, on the host.

``python -m flightdeck.arms.net_relay --allow HOST:PORT ... --etc DIR -- bwrap ...`` (what
:func:`relay_argv` spells, and :func:`flightdeck.arms.sandbox.bwrap_argv` puts before bwrap):

1. writes the sandbox's ``hosts`` and ``nsswitch.conf`` into ``DIR``
   (:mod:`flightdeck.arms.net_allow`), which bwrap binds over ``/etc``;
2. forks a child that makes a new user and network namespace (``unshare(2)``; it owns both,
   so it may bring ``lo`` up, add an address to it and bind a port below 1024, which the
   harness, in bubblewrap's nested user namespace, may not), listens on each target's
   address inside, hands the listening sockets to the relay over a socket pair
   (``SCM_RIGHTS``) and becomes ``bwrap --share-net ...``: the sandbox gets that namespace,
   in which nothing but these listeners leads out;
3. accepts on those sockets from the host's namespace and connects each connection to its
   own target only, then copies bytes both ways unchanged (a ``CONNECT`` line or another
   ``Host:`` header is payload to the target, never an instruction to the relay);
4. exits with bwrap's status when bwrap exits (``128 + N`` for a signal ``N``, as bwrap
   does); it dies with the runner (``PR_SET_PDEATHSIG``) and takes bwrap along
   (``--die-with-parent``), so no relay outlives its trial, even a SIGKILL'd one.

A target the relay cannot reach, or a namespace it cannot make, is one line in ``DIR/log``;
the trial's reason starts with it (:func:`relay_failure`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from flightdeck.arms import net_allow
from flightdeck.errors import InputError

CONNECT_TIMEOUT = 30.0  # seconds to reach a target before the connection is dropped
RELAY_PROCESSES = 2  # the relay and its one resolver thread, in a trial's pids cgroup
LOG = "log"
_MAX_LOG_LINES = 50
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_PR_SET_PDEATHSIG = 1
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _SIOCSIFADDR, _SIOCSIFNETMASK = 0x8913, 0x8914, 0x8916, 0x891C
_IFF_UP = 0x1


def relay_argv(targets: Sequence[net_allow.Target], etc: Path) -> list[str]:
    """The relay's command line, to be followed by bwrap's (with ``--share-net``)."""
    argv = [sys.executable, "-m", "flightdeck.arms.net_relay", "--parent", str(os.getpid())]
    for target in targets:
        argv += ["--allow", str(target)]
    return [*argv, "--etc", str(etc), "--"]


def own_processes(targets: Sequence[net_allow.Target]) -> int:
    """What the relay adds to a trial's processes: :data:`RELAY_PROCESSES`, or 0 without it."""
    return RELAY_PROCESSES if targets else 0


def etc_binds(etc: Path) -> list[str]:
    """bwrap's binds of the relay's ``hosts`` and ``nsswitch.conf`` over the sandbox's."""
    return [
        *("--ro-bind", str(etc / "hosts"), "/etc/hosts"),
        *("--ro-bind", str(etc / "nsswitch.conf"), "/etc/nsswitch.conf"),
    ]


def relay_failure(etc: Path) -> str | None:
    """The first thing the relay could not do in a trial, as the start of its reason."""
    try:
        with open(etc / LOG, encoding="utf-8", errors="replace") as handle:
            first = handle.readline().strip()
    except OSError:
        return None
    return first or None


@functools.cache
def relay_works(bwrap: str) -> str | None:
    """Start the relay around a trivial sandbox once; None when it works, else why not."""
    with tempfile.TemporaryDirectory(prefix="flightdeck-relay-") as folder:
        etc = Path(folder) / "net"
        argv = relay_argv([net_allow.Target("127.0.0.1", 9)], etc)
        argv += [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        argv += ["--unshare-all", "--share-net", "--cap-drop", "ALL", "--die-with-parent"]
        argv += [*etc_binds(etc), "--", "true"]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"it did not start ({exc})"
        if proc.returncode == 0:
            return None
        told = relay_failure(etc)
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return told or (lines[-1] if lines else f"exit status {proc.returncode}")


def require_relay(bwrap: str) -> None:
    """:class:`InputError` with a fix when the relay cannot run here (tried once)."""
    why = relay_works(bwrap)
    if why is not None:
        raise InputError(
            "--network-allow",
            None,
            f"the network allow-list cannot run here: {why}; allow user namespaces for this "
            "user (sysctl kernel.unprivileged_userns_clone=1), or use --network",
        )


def with_relay_failure(reason: str, etc: Path) -> str:
    """A failed trial's reason, after what the relay could not do in it, if anything."""
    first = relay_failure(etc)
    return reason if first is None else f"{first}; {reason}"


def _log(etc: Path, line: str) -> None:
    path = etc / LOG
    with contextlib.suppress(OSError):
        if path.is_file() and path.stat().st_size > _MAX_LOG_LINES * 200:
            return
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line.replace("\n", " ")[:200] + "\n")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def _own_namespaces() -> None:
    """A new user and network namespace for this process, mapped to its own uid and gid."""
    uid, gid = os.getuid(), os.getgid()
    if _libc().unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        why = {
            errno.EPERM: "user namespaces are not permitted for this user",
            errno.ENOSPC: "no user namespace may be made here (user.max_user_namespaces)",
        }.get(err, os.strerror(err))
        raise OSError(err, f"unshare: {why}")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _ifreq(name: str, tail: bytes = b"") -> bytes:
    return struct.pack("16s", name.encode()) + tail.ljust(24, b"\0")


def _configure_lo(addresses: Sequence[str]) -> None:
    """``lo`` up, and each IPv4 address outside 127/8 on it (``lo:N``, netmask /32)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        flags = struct.unpack_from("H", fcntl.ioctl(sock, _SIOCGIFFLAGS, _ifreq("lo")), 16)[0]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, _ifreq("lo", struct.pack("H", flags | _IFF_UP)))
        for i, address in enumerate(addresses, start=1):
            packed = socket.inet_aton(address)
            addr = struct.pack("HH4s", socket.AF_INET, 0, packed)
            mask = struct.pack("HH4s", socket.AF_INET, 0, b"\xff\xff\xff\xff")
            fcntl.ioctl(sock, _SIOCSIFADDR, _ifreq(f"lo:{i}", addr))
            fcntl.ioctl(sock, _SIOCSIFNETMASK, _ifreq(f"lo:{i}", mask))


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    sock.bind((address, port))
    sock.listen(128)
    return sock


def _listeners(
    targets: Sequence[net_allow.Target],
) -> list[tuple[socket.socket, net_allow.Target]]:
    """A listening socket inside for each target's address (``::1`` for localhost if any)."""
    found = []
    for target in targets:
        for address in net_allow.listen_addresses(target, targets):
            try:
                found.append((_listen(address, target.port), target))
            except OSError:
                if target.host == "localhost" and address == "::1":
                    continue  # no IPv6 here: localhost is 127.0.0.1 alone
                raise
    return found


def _child(
    channel: socket.socket, targets: Sequence[net_allow.Target], argv: list[str], relay: int
) -> None:
    """In the fork: make the namespace, listen, hand the sockets over, become bwrap."""
    try:
        # dies with the relay from here on (the signal survives exec), so a relay killed
        # before bwrap's own --die-with-parent takes hold leaves no sandbox running
        _check(_libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
        if os.getppid() != relay:
            os._exit(128 + signal.SIGKILL)  # the relay is gone already
        _own_namespaces()
        others = {t.host for t in targets if not t.is_name and ":" not in t.host}
        _configure_lo(sorted(h for h in others if not h.startswith("127.")))
        found = _listeners(targets)
        which = ",".join(str(targets.index(target)) for _, target in found)
        socket.send_fds(channel, [f"ok {which}".encode()], [sock.fileno() for sock, _ in found])
        channel.close()
        os.execvp(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001 - any failure is told to the relay
        with contextlib.suppress(OSError):
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            channel.sendall(f"could not make the sandbox's network namespace: {why}".encode())
    os._exit(125)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until end of file, then half-close ``writer``."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.transport.abort()


async def _serve_one(
    target: net_allow.Target, etc: Path, inner: asyncio.StreamReader, out: asyncio.StreamWriter
) -> None:
    """One connection from the sandbox: to its target (resolved on the host), and back."""
    try:
        upstream = await asyncio.wait_for(
            asyncio.open_connection(target.host, target.port), CONNECT_TIMEOUT
        )
    except (OSError, TimeoutError) as exc:
        if isinstance(exc, TimeoutError):
            why = f"no answer in {CONNECT_TIMEOUT:g} s"
        else:
            why = os.strerror(exc.errno) if exc.errno else str(exc)
        _log(etc, f"could not reach the allowed network target {target} ({why})")
        out.transport.abort()
        return
    up_reader, up_writer = upstream
    try:
        await asyncio.gather(_pipe(inner, up_writer), _pipe(up_reader, out))
    finally:
        for writer in (up_writer, out):
            writer.close()


async def _relay(found: list[tuple[socket.socket, net_allow.Target]], etc: Path, child: int) -> int:
    """Serve the listeners until the child (bwrap) exits; its exit status, bwrap's way."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=RELAY_PROCESSES - 1))  # names
    done: asyncio.Future[int] = loop.create_future()

    def reap() -> None:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child and not done.done():
            code = os.waitstatus_to_exitcode(status)
            done.set_result(code if code >= 0 else 128 - code)

    loop.add_signal_handler(signal.SIGCHLD, reap)
    reap()
    servers = []
    for sock, target in found:
        serve = functools.partial(_serve_one, target, etc)
        servers.append(await asyncio.start_server(serve, sock=sock))
    code = await done
    for server in servers:
        server.close()
    return code


def main(args: Sequence[str]) -> int:
    """Run the relay; ``args`` are ``[--parent PID] --allow T ... --etc DIR -- COMMAND...``."""
    split = list(args).index("--")
    options, argv = list(args[:split]), list(args[split + 1 :])
    pairs = dict.fromkeys(("--parent", "--etc"), "")
    allowed = []
    for name, value in zip(options[::2], options[1::2], strict=True):
        if name == "--allow":
            allowed.append(value)
        else:
            pairs[name] = value
    if pairs["--parent"]:
        _check(_libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
        if os.getppid() != int(pairs["--parent"]):
            return 128 + signal.SIGKILL  # the runner is gone already
    etc = Path(pairs["--etc"])
    targets = net_allow.parse_targets(allowed)
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "hosts").write_text(net_allow.hosts_file(targets), encoding="utf-8")
    (etc / "nsswitch.conf").write_text(net_allow.nsswitch_file(), encoding="utf-8")
    parent_end, child_end = socket.socketpair()
    relay = os.getpid()
    child = os.fork()
    if child == 0:
        parent_end.close()
        _child(child_end, targets, argv, relay)
    child_end.close()
    message, fds, _, _ = socket.recv_fds(parent_end, 4096, 1024)
    parent_end.close()
    if not message.startswith(b"ok "):
        _log(etc, message.decode("utf-8", "replace") or "the sandbox's network did not start")
        os.waitpid(child, 0)
        return 125
    which = [targets[int(i)] for i in message[3:].decode().split(",") if i]
    found = [(socket.socket(fileno=fd), target) for fd, target in zip(fds, which, strict=True)]
    return asyncio.run(_relay(found, etc, child))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
