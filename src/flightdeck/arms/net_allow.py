"""A network allow-list for a harness sandbox: its ``host:port`` targets and what they need.

``--network-allow api.openai.com:443`` (repeat it), or ``network_allow: [...]`` under the arm
in ``harness_sandbox:``, gives the sandbox its own network namespace, as with the network
off, in which flightdeck's relay (:mod:`flightdeck.arms.net_relay`) listens for each target
and forwards every connection, as raw bytes, to that target and no other:

- a loopback IP (``127.0.0.1:8000``, ``[::1]:8000``) or any other IPv4 address
  (``10.0.0.5:8000``) is listened on at the same address and port inside;
- ``localhost:8000`` is listened on at ``127.0.0.1`` and ``::1``;
- a host name (``api.openai.com:443``) gets a loopback address of its own inside
  (``127.1.0.1`` and up), and the sandbox's ``/etc/hosts`` maps the name to it, so a
  client connects by the name it knows and TLS (the SNI, the certificate) is unchanged;
  the name is resolved on the host, by the relay, when a connection is made.

The sandbox's ``/etc/nsswitch.conf`` says ``hosts: files``: a name that is not a target does
not resolve (and there is no network to ask a DNS server on). A non-loopback IPv6 address
cannot be listened on inside without more than the relay does, so it is refused with a
fix (give its host name). Everything here is checked before any trial starts: a typo is a
one-line error, never an open network.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flightdeck.errors import InputError

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
NAME_NET = ipaddress.ip_network("127.1.0.0/16")  # where host-name targets listen inside
LOOPBACK_HOSTS = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"
HOW = (
    "give HOST:PORT, e.g. api.openai.com:443, 127.0.0.1:8000 or [::1]:8000 (a host name, "
    "an IPv4 address or a loopback IPv6 address; a port from 1 to 65535)"
)


@dataclass(frozen=True, order=True)
class Target:
    """One allowed ``host:port``: a lower-case host name or an IP address, and a port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def is_name(self) -> bool:
        return not _is_address(self.host)


def parse_target(text: str) -> Target:
    """``text`` as a :class:`Target`; :class:`ValueError` with what is wrong and how to fix it."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"{text!r} is not HOST:PORT; {HOW}")
    if "/" in text:
        raise ValueError(f"{text!r} is a URL or a path, not HOST:PORT; {HOW}")
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
        if not sep or ":" not in host:
            raise ValueError(f"{text!r} is not [IPV6]:PORT; {HOW}")
    else:
        host, sep, port = text.rpartition(":")
        if not sep or not host:
            raise ValueError(f"{text!r} has no port; {HOW}")
        if ":" in host:
            raise ValueError(f"{text!r}: write an IPv6 address in brackets, [{host}]:{port}")
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: the port {port!r} is not a number from 1 to 65535")
    return Target(_check_host(text, host), int(port))


def _check_host(text: str, host: str) -> str:
    if _is_address(host):
        address = ipaddress.ip_address(host)
        if address.is_unspecified or address.is_multicast or str(address) == "255.255.255.255":
            raise ValueError(f"{text!r}: {host} is not one host; name the endpoint's address")
        if address.version == 6 and not address.is_loopback:
            raise ValueError(
                f"{text!r}: a non-loopback IPv6 address cannot be mapped into the sandbox; "
                "give the endpoint's host name instead"
            )
        return str(address)
    name = host.lower()
    if "*" in name:
        raise ValueError(f"{text!r}: wildcards are not supported; list each host name")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValueError(f"{text!r}: {host!r} is not a host name (letters, digits, - and .)")
    if labels[-1].isdigit():
        raise ValueError(f"{text!r}: {host!r} is not an IP address; {HOW}")
    return name


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def parse_targets(values: Iterable[str]) -> tuple[Target, ...]:
    """Each value parsed (a :class:`ValueError` names the first bad one), sorted, unique."""
    targets = sorted({parse_target(v) for v in values})
    seen: dict[tuple[str, int], Target] = {}
    for target in targets:
        for listen in listen_addresses(target, targets):
            other = seen.setdefault((listen, target.port), target)
            if other != target:
                raise ValueError(
                    f"{other} and {target} are the same address inside the sandbox; "
                    "allow one of them"
                )
    return tuple(targets)


def check_allow(values: Iterable[str], network: bool, mode: str) -> tuple[Target, ...]:
    """An arm's allow-list, checked: each ``HOST:PORT`` valid, never beside ``--network``."""
    values = list(values)
    if not values:
        return ()
    if network:
        raise InputError(
            "--network-allow",
            None,
            "--network shares the whole host network and --network-allow only the targets "
            "named; use one of them",
        )
    if mode == "none":
        raise InputError(
            "--network-allow",
            None,
            "an allow-list needs the bubblewrap sandbox (--sandbox bwrap); without a sandbox "
            "the harness reaches the whole network",
        )
    try:
        return parse_targets(values)
    except ValueError as exc:
        raise InputError("--network-allow", None, str(exc)) from None


def name_addresses(targets: Iterable[Target]) -> dict[str, str]:
    """The loopback address each host name listens on inside, ``127.1.0.1`` and up."""
    names = sorted({t.host for t in targets if t.is_name and t.host != "localhost"})
    hosts = NAME_NET.hosts()
    return {name: str(next(hosts)) for name in names}


def listen_addresses(target: Target, targets: Iterable[Target]) -> tuple[str, ...]:
    """Where the relay listens for ``target`` inside the sandbox."""
    if target.host == "localhost":
        return ("127.0.0.1", "::1")
    if target.is_name:
        return (name_addresses(targets)[target.host],)
    return (target.host,)


def hosts_file(targets: Iterable[Target]) -> str:
    """The sandbox's ``/etc/hosts``: localhost, and each host name at its own address."""
    lines = [f"{address} {name}\n" for name, address in name_addresses(targets).items()]
    return LOOPBACK_HOSTS + "".join(lines)


def nsswitch_file(host: Path = Path("/etc/nsswitch.conf")) -> str:
    """The host's ``nsswitch.conf`` with ``hosts: files``: names resolve from /etc/hosts only."""
    try:
        lines = host.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = ["passwd: files", "group: files"]
    kept = [line for line in lines if not line.strip().startswith("hosts:")]
    return "\n".join([*kept, "hosts: files"]) + "\n"


def scope(targets: Iterable[Target]) -> str:
    """What the meta says an allow-list opens."""
    shown = ", ".join(str(t) for t in targets)
    return (
        f"allow-list: its own network namespace, where flightdeck's relay forwards connections "
        f"to {shown} and nowhere else (raw bytes, so TLS is end to end); only those host names "
        "resolve; no other host, port, host socket or DNS"
    )
