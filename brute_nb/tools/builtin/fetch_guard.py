"""Where ``fetch`` may connect: public internet addresses only, unless the tool was built with an allow-list.

Prompt injection can make the model ask for any URL, so every destination is checked twice: the URL's host before
the request (a literal address such as ``http://2852039166/`` or a known cloud metadata name is refused with a clear
message) and, authoritatively, the peer address of the TCP connection actually made, before a byte of the request is
sent (httpcore's ``trace`` extension reports each new connection). Checking the connected address, not a DNS answer
taken earlier, closes DNS rebinding, and because the check runs on every connection it covers every redirect hop.
Refused: loopback, private, link-local (169.254.169.254), unique-local (``fd00:ec2::254``), carrier-grade NAT,
multicast, reserved and unspecified addresses, also when written as IPv4-mapped IPv6. An allow-list entry is an
address or network, optionally with a port (``127.0.0.1:8765``, ``10.0.0.0/8``, ``[::1]:8080``).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from brute_nb.errors import BruteError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
                            "instance-data.ec2.internal", "metadata.azure.com"})
_ENTRY = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]+|[0-9a-fA-F:]+(?:/\d+)?))(?::(?P<port>\d+))?$")


class BlockedDestinationError(BruteError, PermissionError):
    """fetch refused a destination: the model reads this as the tool's result."""


@dataclass(frozen=True)
class AllowEntry:
    network: Network
    port: int | None

    def admits(self, address: Address, port: int | None) -> bool:
        return address in self.network and (self.port is None or self.port == port)


def parse_allow(entries: Iterable[str]) -> tuple[AllowEntry, ...]:
    """Parse an allow-list, raising one ValueError that lists every bad entry (a developer's mistake)."""
    out: list[AllowEntry] = []
    bad: list[str] = []
    for entry in entries:
        parsed = _parse_entry(entry.strip())
        if parsed is None:
            bad.append(repr(entry))
        else:
            out.append(parsed)
    if bad:
        raise ValueError(f"fetch allow-list entries must be an IP address or network, optionally with :port "
                         f"(e.g. '127.0.0.1:8765', '10.0.0.0/8', '[::1]:8080'); not {', '.join(bad)}")
    return tuple(out)


def _parse_entry(entry: str) -> AllowEntry | None:
    # A bare IPv6 address or network has colons of its own: try it whole before splitting off a port.
    for text, port in ((entry, None), *_split_port(entry)):
        try:
            return AllowEntry(ipaddress.ip_network(text, strict=False), port)
        except ValueError:
            continue
    return None


def _split_port(entry: str) -> list[tuple[str, int]]:
    match = _ENTRY.match(entry)
    if not match or match.group("port") is None:
        return []
    return [(match.group("v6") or match.group("host"), int(match.group("port")))]


def _unmapped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_public(address: Address) -> bool:
    address = _unmapped(address)
    return address.is_global and not address.is_multicast


def literal_address(host: str) -> Address | None:
    """The address a URL host spells, in any form the resolver accepts (``2852039166``, ``0xa9fea9fe``, ``127.1``)."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


class Guard:
    """Decides whether an address (and port) may be fetched; holds the tool's allow-list."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.allow = parse_allow(allow)

    def allowed(self, address: Address, port: int | None) -> bool:
        address = _unmapped(address)
        return is_public(address) or any(entry.admits(address, port) for entry in self.allow)

    def check_url(self, scheme: str, host: str, port: int | None) -> None:
        """Before a request: refuse other schemes, metadata names and non-public literal addresses."""
        if scheme not in ("http", "https"):
            raise ValueError(f"Invalid URL scheme: {scheme or '(none)'}; only http and https URLs can be fetched")
        name = host.lower().rstrip(".")
        address = literal_address(name)
        if address is not None:
            self.check_address(address, port, host)
        elif name in METADATA_HOSTS:
            raise BlockedDestinationError(f"Refused to fetch {host}: it is a cloud metadata service")

    def check_address(self, address: Address, port: int | None, host: str) -> None:
        if not self.allowed(address, port):
            shown = f"{host} ({address})" if str(address) != host else host
            raise BlockedDestinationError(
                f"Refused to fetch {shown}: {describe(address)} address. fetch reaches public internet addresses "
                f"only; to reach a local server, build the tool with Fetch(allow=['{address}:{port or 80}'])")

    async def on_trace(self, event: str, info: dict[str, Any], host: str, port: int | None) -> None:
        """httpcore's trace hook: check each new connection's peer before the request is written."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        if stream is None:
            return
        peer = stream.get_extra_info("server_addr")
        try:
            address = ipaddress.ip_address(str(peer[0]).split("%")[0]) if peer else None
        except ValueError:
            address = None
        try:
            if address is None:
                raise BlockedDestinationError(f"Refused to fetch {host}: the connected address is unknown")
            self.check_address(address, port, host)
        except BlockedDestinationError:
            await stream.aclose()
            raise


def describe(address: Address) -> str:
    address = _unmapped(address)
    for label, flag in (("a loopback", address.is_loopback), ("a link-local (cloud metadata)", address.is_link_local),
                        ("a multicast", address.is_multicast), ("an unspecified", address.is_unspecified),
                        ("a private", address.is_private)):
        if flag:
            return label
    return "a non-public"
