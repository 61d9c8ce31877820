"""`experiment run --network-allow`: real bwrap sandboxes, the real relay, hostile harnesses.

The servers run on this machine's loopback, outside every sandbox; the harness
(``tests/data/harnesses/netprobe.py``) tries them, other ports, other hosts, DNS and host
sockets from inside, and answers with what it reached, which the tests read back.
"""

from __future__ import annotations

import json
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject
from tests.processes import live_command_lines

from flightdeck.cli import cli
from flightdeck.suite.records import read_meta

HARNESSES = Path(__file__).parents[1] / "data" / "harnesses"


class Recorder:
    """An HTTP server on 127.0.0.1 that answers ``served <port> <path>`` and keeps each request
    line and Host header; ``echo=True`` makes it a raw TCP echo server instead."""

    def __init__(self, *, echo: bool = False) -> None:
        self.requests: list[tuple[str, str]] = []
        self.connections = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def setup(self) -> None:
                owner.connections += 1
                super().setup()

            def handle(self) -> None:
                if not echo:
                    super().handle()
                    return
                while data := self.request.recv(65536):
                    self.request.sendall(data)

            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                owner.requests.append((self.requestline, self.headers.get("Host", "")))
                body = f"served {owner.port} {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            do_CONNECT = do_GET  # noqa: N815 - a CONNECT line is a request like any other

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def allowed() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


@pytest.fixture
def forbidden() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


def probe(project: BuiltProject, plan: dict[str, Any], *extra: str) -> str:
    path = project.root / "plan.json"
    path.write_text(json.dumps(plan))
    return shlex.join([sys.executable, str(HARNESSES / "netprobe.py"), "--plan", str(path), *extra])


def run(runner: CliRunner, project: BuiltProject, command: str, *extra: str) -> Result:
    args = ["experiment", "run", str(project.suite), "--arm", "arm1", "--harness", command]
    return runner.invoke(cli, [*args, "--jobs", "1", *extra])


def answers(project: BuiltProject, arm: str = "arm1") -> list[dict[str, str]]:
    lines = (project.suite / "answers" / f"{arm}.jsonl").read_text().splitlines()
    return [json.loads(json.loads(line)["answer"]) for line in lines]


def sandbox_meta(project: BuiltProject, arm: str = "arm1") -> dict[str, Any]:
    return read_meta(project.suite / "answers" / f"{arm}.meta.json").fields["sandbox"]  # type: ignore[no-any-return]


def live_processes(*markers: str) -> list[str]:
    """Live processes whose command line holds every marker (zombies are not alive)."""
    lines = live_command_lines().values()
    return [c.decode(errors="replace") for c in lines if all(m.encode() in c for m in markers)]


def relays_naming(marker: str) -> list[str]:
    return live_processes("flightdeck.arms.net_relay", marker)


def harnesses_running(code: str) -> list[str]:
    """Live ``python -c CODE`` processes: the harness itself, not the commands naming it."""
    return [c for c in live_processes(code) if c.split("\0")[1:3] == ["-c", code]]


def wait_until_gone(running: Callable[[], list[str]]) -> None:
    deadline = time.monotonic() + 60  # a bound on a hang, not a timing assertion
    while running():
        assert time.monotonic() < deadline, f"still running: {running()}"
        time.sleep(0.05)


@pytest.fixture
def host_sockets(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A unix socket file and an abstract unix socket, both listening on the host."""
    path = tmp_path / "host.sock"
    named = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    named.bind(str(path))
    named.listen()
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"flightdeck-net-test-{id(abstract)}"
    abstract.bind("\0" + name)
    abstract.listen()
    try:
        yield str(path), "@" + name
    finally:
        named.close()
        abstract.close()


def test_an_allowed_loopback_server_is_reached_and_nothing_else(
    runner: CliRunner,
    project: BuiltProject,
    allowed: Recorder,
    forbidden: Recorder,
    host_sockets: tuple[str, str],
) -> None:
    target = f"127.0.0.1:{allowed.port}"
    unix_path, abstract = host_sockets
    plan = {
        "get": [f"http://{target}/doc", f"http://127.0.0.1:{forbidden.port}/"],
        "connect": [f"127.0.0.2:{allowed.port}", "192.0.2.1:443", "[::1]:" + str(allowed.port)],
        "resolve": ["example.com", "localhost"],
        "unix": [unix_path, abstract],
        "files": ["/etc/hosts"],
    }
    result = run(runner, project, probe(project, plan), "--network-allow", target)
    assert result.exit_code == 0, result.output
    for got in answers(project):
        assert got[f"get http://{target}/doc"] == f"ok: served {allowed.port} /doc"
        assert got[f"get http://127.0.0.1:{forbidden.port}/"] == "ECONNREFUSED"
        assert got[f"connect 127.0.0.2:{allowed.port}"] == "ECONNREFUSED"  # another address
        assert got["connect 192.0.2.1:443"] == "ENETUNREACH"  # another host: no route out
        assert got[f"connect [::1]:{allowed.port}"] in ("ECONNREFUSED", "EADDRNOTAVAIL")
        assert got["resolve example.com"].startswith("gaierror: ")  # no DNS for other names
        assert got["resolve localhost"] in ("ok: ['127.0.0.1', '::1']", "ok: ['127.0.0.1']")
        assert got[f"unix {unix_path}"] == "ENOENT"  # no host socket file exists inside
        assert got[f"unix {abstract}"] == "ECONNREFUSED"  # the host's belong to its netns
        assert got["file /etc/hosts"].startswith("ok: 127.0.0.1 localhost\n")
    assert forbidden.connections == 0
    assert [line for line, _ in allowed.requests] == ["GET /doc HTTP/1.1"] * len(answers(project))
    meta = sandbox_meta(project)
    assert (meta["network"], meta["network_allow"]) == (False, [target])
    assert meta["network_scope"].startswith("allow-list: its own network namespace")
    trace = (project.root / "traces" / "demo-v1" / "arm1" / "q1.log").read_text()
    assert f"sandbox: bwrap, network allow {target}, env none passed\n" in trace
    assert not relays_naming(str(project.root))


def test_the_relay_cannot_be_talked_into_another_target(
    runner: CliRunner, project: BuiltProject, allowed: Recorder, forbidden: Recorder
) -> None:
    target = f"127.0.0.1:{allowed.port}"
    other = f"127.0.0.1:{forbidden.port}"
    plan = {
        "raw": [
            [target, f"CONNECT {other} HTTP/1.1\r\nHost: {other}\r\n\r\n"],
            [target, f"GET http://{other}/secret HTTP/1.1\r\nHost: {other}\r\n\r\n"],
        ]
    }
    result = run(runner, project, probe(project, plan), "--network-allow", target)
    assert result.exit_code == 0, result.output
    got = answers(project)[0]
    assert got[f"raw {target}"].endswith(f"served {allowed.port} http://{other}/secret")
    assert forbidden.connections == 0  # the relay copies bytes; it reads no request
    assert (f"CONNECT {other} HTTP/1.1", other) in allowed.requests
    assert (f"GET http://{other}/secret HTTP/1.1", other) in allowed.requests


def test_bytes_pass_through_unchanged_both_ways(runner: CliRunner, project: BuiltProject) -> None:
    """Raw TCP, so a TLS session (its SNI, its certificate) is the client's and the server's."""
    echo = Recorder(echo=True)
    try:
        target = f"127.0.0.1:{echo.port}"
        plan = {"echo": [[target, 3 << 20]]}
        result = run(runner, project, probe(project, plan), "--network-allow", target)
    finally:
        echo.close()
    assert result.exit_code == 0, result.output
    assert answers(project)[0][f"echo {target}"] == f"ok: {3 << 20} bytes back, identical"


def test_localhost_and_a_port_below_1024_are_listened_on_inside(
    runner: CliRunner, project: BuiltProject, allowed: Recorder
) -> None:
    """``localhost:P`` is 127.0.0.1 and ::1 inside; a port below 1024 is bound in the relay's
    own namespace, as an ordinary user too (the harness itself could not bind it)."""
    plan = {"get": [f"http://localhost:{allowed.port}/x"], "connect": ["127.0.0.1:443"]}
    command = probe(project, plan)
    result = run(
        runner, project, command, "--network-allow", f"localhost:{allowed.port}",
        "--network-allow", "127.0.0.1:443",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    got = answers(project)[0]
    assert got[f"get http://localhost:{allowed.port}/x"] == f"ok: served {allowed.port} /x"
    assert got["connect 127.0.0.1:443"] == "ok"  # accepted inside; no server there on the host
    assert sandbox_meta(project)["network_allow"] == ["127.0.0.1:443", f"localhost:{allowed.port}"]


def _loopback_alias() -> str | None:
    """A name other than localhost that this host resolves to 127.0.0.1 (from /etc/hosts)."""
    for line in Path("/etc/hosts").read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if fields and fields[0] == "127.0.0.1":
            for name in fields[1:]:
                if name != "localhost" and "." not in name.strip("."):
                    return name
    return None


def test_a_host_name_gets_its_own_address_and_resolves_to_it_alone(
    runner: CliRunner, project: BuiltProject, allowed: Recorder
) -> None:
    name = _loopback_alias()
    if name is None:
        pytest.skip("this host's /etc/hosts names no other host at 127.0.0.1")
    target = f"{name}:{allowed.port}"
    plan = {"get": [f"http://{target}/by-name"], "resolve": [name]}
    result = run(runner, project, probe(project, plan), "--network-allow", target)
    assert result.exit_code == 0, result.output
    got = answers(project)[0]
    assert got[f"resolve {name}"] == "ok: ['127.1.0.1']"
    assert got[f"get http://{target}/by-name"] == f"ok: served {allowed.port} /by-name"
    assert ("GET /by-name HTTP/1.1", target) in allowed.requests  # the Host it was asked for


def _host_ipv4() -> str | None:
    """This host's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe_socket:
        try:
            probe_socket.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe_socket.getsockname()[0])
    return None if address.startswith("127.") else address


def test_an_ip_address_off_loopback_is_listened_on_at_the_same_address(
    runner: CliRunner, project: BuiltProject
) -> None:
    address = _host_ipv4()
    if address is None:
        pytest.skip("this host has no IPv4 address off loopback")
    server = socket.create_server((address, 0))
    port = server.getsockname()[1]
    accepted: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return  # closed
            with conn:
                accepted.append(conn.recv(100).decode())
                conn.sendall(b"hello from the host")

    threading.Thread(target=serve, daemon=True).start()
    try:
        plan = {"raw": [[f"{address}:{port}", "hi"]]}
        result = run(runner, project, probe(project, plan), "--network-allow", f"{address}:{port}")
    finally:
        server.shutdown(socket.SHUT_RDWR)
        server.close()
    assert result.exit_code == 0, result.output
    got = answers(project)
    assert [a[f"raw {address}:{port}"] for a in got] == ["ok: hello from the host"] * len(got)
    assert accepted == ["hi"] * len(got)


def test_an_unreachable_allowed_target_fails_the_trial_with_one_line(
    runner: CliRunner, project: BuiltProject
) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    command = probe(project, {"get": [f"http://127.0.0.1:{port}/"]}, "--exit", "1")
    result = run(runner, project, command, "--network-allow", f"127.0.0.1:{port}", "--json")
    assert result.exit_code == 1, result.output
    ledger = (project.root / "runs" / "demo-v1" / "arm1.jsonl").read_text().splitlines()
    reasons = {json.loads(line)["reason"] for line in ledger}
    assert reasons == {
        f"could not reach the allowed network target 127.0.0.1:{port} (Connection refused); "
        "exit status 1"
    }


@pytest.mark.slow
def test_no_relay_outlives_a_killed_trial_or_a_killed_runner(
    runner: CliRunner, project: BuiltProject, allowed: Recorder
) -> None:
    stubborn = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "sys.stdin.read(); time.sleep(120)"
    )
    command = shlex.join([sys.executable, "-c", stubborn])
    target = f"127.0.0.1:{allowed.port}"
    result = run(runner, project, command, "--network-allow", target, "--timeout", "1")
    assert result.exit_code == 1, result.output  # each trial timed out; SIGKILL after grace
    assert not relays_naming(str(project.root))  # each relay was waited for
    wait_until_gone(lambda: harnesses_running(stubborn))

    argv = [sys.executable, "-m", "flightdeck", "experiment", "run", str(project.suite)]
    argv += ["--arm", "arm2", "--harness", command, "--network-allow", target]
    proc = subprocess.Popen(argv, cwd=project.root, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120  # a bound on a hang, not a timing assertion
    try:
        while not harnesses_running(stubborn) and proc.poll() is None:
            assert time.monotonic() < deadline, "the harness did not start"
            time.sleep(0.05)
        assert relays_naming(str(project.root)), "the trial runs without its relay"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    wait_until_gone(lambda: relays_naming(str(project.root)))
    wait_until_gone(lambda: harnesses_running(stubborn))


def test_resuming_with_another_allow_list_is_refused(
    runner: CliRunner, project: BuiltProject, allowed: Recorder
) -> None:
    target = f"127.0.0.1:{allowed.port}"
    command = probe(project, {"get": [f"http://{target}/"]})
    first = run(runner, project, command, "--network-allow", target)
    assert first.exit_code == 0, first.output
    answers_file = project.suite / "answers" / "arm1.jsonl"
    lines = answers_file.read_text().splitlines()
    answers_file.write_text("\n".join(lines[:1]) + "\n")  # questions left to run
    again = run(runner, project, command, "--network-allow", "127.0.0.1:1")
    assert again.exit_code == 2
    assert (
        f"ran with sandbox bwrap (network allow {target}, env -), not bwrap (network allow "
        "127.0.0.1:1, env -)"
    ) in again.stderr
