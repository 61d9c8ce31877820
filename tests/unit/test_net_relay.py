"""The network relay as a process: an ordinary user's sandbox gets its ports, and its status.

These start ``python -m flightdeck.arms.net_relay`` around a real bwrap directly (the runner's
tests are in ``tests/cli/test_network_allow.py``). Run as root, the relay runs here as
``nobody`` through util-linux's ``setpriv``, so the unprivileged path is the one tested.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.processes import live_command_lines

import flightdeck
from flightdeck.arms import net_allow, net_relay
from flightdeck.errors import InputError

NOBODY = 65534


@pytest.fixture
def etc() -> Iterator[Path]:
    """The relay's folder, where an ordinary user may write (pytest's own is root's, 0700)."""
    top = Path(tempfile.mkdtemp(prefix="flightdeck-relay-test-", dir="/var/tmp"))
    os.chmod(top, 0o755)
    folder = top / "net"
    folder.mkdir()
    if os.getuid() == 0:
        os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        shutil.rmtree(top, ignore_errors=True)


def ordinary_user() -> list[str]:
    """The prefix that runs a command as an ordinary user: none when we are one already."""
    if os.getuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to drop root for this test")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def readable_package(top: Path) -> str:
    """A copy of flightdeck that ``nobody`` can import: the checkout may sit in a 0700 folder."""
    copy = top / "pkg"
    if not copy.exists():
        shutil.copytree(
            Path(flightdeck.__file__).parent,
            copy / "flightdeck",
            ignore=shutil.ignore_patterns("*.pyc"),
        )
        for folder in [copy, *copy.rglob("*")]:
            folder.chmod(0o755 if folder.is_dir() else 0o644)
    return str(copy)


def relay(etc: Path, allow: list[str], code: str) -> subprocess.CompletedProcess[str]:
    targets = net_allow.parse_targets(allow)
    argv = [*ordinary_user(), *net_relay.relay_argv(targets, etc)[:1]]
    argv += net_relay.relay_argv(targets, etc)[1:]
    parent = argv.index("--parent")
    del argv[parent : parent + 2]  # setpriv execs, so the relay's parent is this process
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    argv += [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--unshare-all", "--share-net", "--cap-drop", "ALL", "--die-with-parent"]
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # nobody may run
    if ordinary_user():
        argv[len(ordinary_user())] = (
            python  # the checkout's interpreter may sit in root's 0700 home
        )
    argv += [*net_relay.etc_binds(etc), "--", python, "-c", code]
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": readable_package(etc.parent)}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


PROBE = """
import errno, os, socket
print("uid", os.getuid())
try:
    socket.socket().bind(("127.0.0.1", 80))
    print("bind 80 ok")
except OSError as exc:
    print("bind 80", errno.errorcode[exc.errno])
with socket.create_connection(("127.0.0.1", 443), timeout=10) as sock:
    print("connect 443 ok", repr(sock.recv(10)))
"""


def test_an_ordinary_user_s_sandbox_reaches_an_allowed_port_below_1024(etc: Path) -> None:
    done = relay(etc, ["127.0.0.1:443"], PROBE)
    assert done.returncode == 0, done.stderr
    uid = NOBODY if os.getuid() == 0 else os.getuid()
    assert done.stdout.splitlines() == [
        f"uid {uid}",
        "bind 80 EACCES",  # the harness may not bind a low port itself
        "connect 443 ok b''",  # the relay's listener took it; nothing serves 443 on the host
    ]
    assert net_relay.relay_failure(etc) == (
        "could not reach the allowed network target 127.0.0.1:443 (Connection refused)"
    )


@pytest.mark.parametrize(
    ("code", "status"),
    [
        pytest.param("raise SystemExit(3)", 3, id="exit-3"),
        pytest.param("pass", 0, id="exit-0"),
        pytest.param(
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
            128 + signal.SIGKILL,
            id="killed",
        ),
    ],
)
def test_the_relay_exits_with_bwrap_s_status(etc: Path, code: str, status: int) -> None:
    done = relay(etc, ["127.0.0.1:8000"], code)
    assert done.returncode == status, done.stderr
    assert net_relay.relay_failure(etc) is None


def test_the_relay_s_command_dies_with_a_killed_relay(etc: Path) -> None:
    """The command the relay becomes dies with the relay even when nothing in it asks to (a
    relay SIGKILL'd before bwrap's own --die-with-parent took hold left its sandbox running)."""
    marker = f"# {etc}"
    code = f"import time; time.sleep(120)  {marker}"
    targets = net_allow.parse_targets(["127.0.0.1:8000"])
    argv = [*net_relay.relay_argv(targets, etc), sys.executable, "-c", code]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    relay_process = subprocess.Popen(argv, env=env)

    def commands() -> list[int]:
        lines = live_command_lines().items()
        return [pid for pid, c in lines if c.split(b"\0")[1:3] == [b"-c", code.encode()]]

    deadline = time.monotonic() + 60  # a bound on a hang, not a timing assertion
    try:
        while not commands():
            assert relay_process.poll() is None, "the relay ended before its command ran"
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.05)
    finally:
        relay_process.kill()
        relay_process.wait()
    deadline = time.monotonic() + 10
    while commands():
        assert time.monotonic() < deadline, "the relay's command outlived the relay"
        time.sleep(0.05)


def test_a_namespace_that_cannot_be_made_is_one_line_in_the_log(etc: Path) -> None:
    """Where no user namespace may be made (here: inside a bwrap with --disable-userns), the
    relay says why in its log and exits 125 before its command runs."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    marker = etc / "ran"
    etc = etc.parent / "own"  # this user's, for the relay keeps this user's uid here
    etc.mkdir()
    argv = [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--bind", str(etc), str(etc), "--unshare-user", "--disable-userns", "--"]
    argv += net_relay.relay_argv(net_allow.parse_targets(["127.0.0.1:80"]), etc)
    parent = argv.index("--parent")
    del argv[parent : parent + 2]
    argv += ["touch", str(marker)]
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 125, done.stderr
    assert not marker.exists()
    assert net_relay.relay_failure(etc) == (
        "could not make the sandbox's network namespace: unshare: no user namespace may be made "
        "here (user.max_user_namespaces)"
    )
    reason = net_relay.with_relay_failure("exit status 125", etc)
    assert reason.endswith("(user.max_user_namespaces); exit status 125")


def test_the_run_is_refused_before_any_trial_where_the_relay_cannot_start() -> None:
    """The relay is tried once around the arm's bwrap; one that cannot run is a one-line error."""
    false = shutil.which("false")
    assert false is not None
    with pytest.raises(InputError, match=r"^--network-allow: the network allow-list cannot run "
                       r"here: exit status 1; allow user namespaces"):  # fmt: skip
        net_relay.require_relay(false)
