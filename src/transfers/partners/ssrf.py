"""SSRF guard for partner calls (DECISIONS 7; hardening issue item 3).

Two layers:

* ``is_private_host`` classifies a URL host *as written* (registration, ``check_base_url``): names
  such as ``localhost`` and every literal form an IPv4 resolver accepts (``127.1``,
  ``2130706433``, ``0x7f000001``, ``017700000001``, ``0177.0.0.1``) or an IPv6 address hides
  (``::ffff:127.0.0.1``, 6to4, NAT64, Teredo).
* ``GuardedBackend`` is an httpcore network backend: at *connect* time it resolves the host with
  the event loop's ``getaddrinfo``, refuses the connection if **any** resolved address is not a
  public unicast address, and then connects to one of the addresses it checked (never resolving
  again). TLS still verifies the certificate against the host name (httpcore passes the origin's
  name as SNI), and a kept-alive connection stays pinned to the address it was opened to, so there
  is no DNS-rebinding window between the check and the connect.

Refusals raise ``BlockedDestination`` (not an httpx error): ``PartnerClient`` reports them as the
``blocked`` outcome, which the outbox retries like a connection error until the delivery deadline.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses it resolves to, as strings (an IPv6 one may carry a "%scope").
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
# Cloud metadata / host services not always covered by "not global": AWS (IPv4 and IPv6), Azure
# wire server, Alibaba Cloud. 169.254.0.0/16, 100.64.0.0/10 and fd00::/8 are refused anyway.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "168.63.129.16", "100.100.100.200",
))
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_OCTAL = re.compile(r"0[0-7]+")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


class BlockedDestination(Exception):
    """A partner host that is, or resolves to, an address the guard refuses."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        super().__init__(f"{host} -> {address}: {reason}")
        self.host, self.address, self.reason = host, address, reason


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host string denotes without DNS, as a resolver (``inet_aton``) would read it.

    Accepts ``[v6]``, dotted quads, and the legacy 1-4 part IPv4 forms with decimal, octal
    (leading ``0``) or hex (``0x``) parts; one trailing dot is ignored. ``None`` for a name.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    return _inet_aton(text)


def _inet_aton(text: str) -> ipaddress.IPv4Address | None:
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        number = _aton_part(part)
        if number is None:
            return None
        numbers.append(number)
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = last
    for index, number in enumerate(head):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _aton_part(part: str) -> int | None:
    if _HEX.fullmatch(part):
        return int(part[2:] or "0", 16)
    if _OCTAL.fullmatch(part):
        return int(part, 8)
    if _DECIMAL.fullmatch(part):
        return int(part)
    return None


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for: mapped, compatible, 6to4 or NAT64 (Teredo and the rest of
    2001::/23 are refused as non-global anyway)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    value = int(address)
    if value >> 32 == 0 and value > 1:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(value)
    return None


def blocked_reason(address: IPAddress) -> str | None:
    """Why a partner may not be called at ``address``; ``None`` for a public unicast address."""
    inner = embedded_ipv4(address)
    if inner is not None:
        reason = blocked_reason(inner)
        return None if reason is None else f"embeds {inner}: {reason}"
    if address in METADATA_ADDRESSES:
        return "cloud metadata address"
    if address.is_unspecified:
        return "unspecified address"
    if address.is_loopback:
        return "loopback address"
    if address.is_link_local:
        return "link-local address"
    if address.is_multicast:
        return "multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in CGNAT:
        return "shared (CGNAT) address"
    if address.is_private:
        return "private address"
    if address.is_reserved:
        return "reserved address"
    if not address.is_global:
        return "not a globally routable address"
    return None


def is_local_name(host: str) -> bool:
    name = host.strip().rstrip(".").lower()
    return name in LOCAL_NAMES or name.endswith(".localhost")


def is_private_host(host: str) -> bool:
    """True for a host that is, as written, a local name or a non-public address literal."""
    if is_local_name(host):
        return True
    literal = parse_ip_literal(host)
    return literal is not None and blocked_reason(literal) is not None


async def system_resolver(host: str, port: int) -> Sequence[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def checked_addresses(host: str, port: int, resolver: Resolver = system_resolver) -> list[IPAddress]:
    """Every address ``host`` resolves to, each checked; ``BlockedDestination`` if any is refused.

    A DNS failure raises ``httpcore.ConnectError`` (reported as an ordinary connection error).
    """
    if is_local_name(host):
        raise BlockedDestination(host, host, "local host name")
    literal = parse_ip_literal(host)
    if literal is not None:
        found: Iterable[str] = [str(literal)]
    else:
        try:
            found = await resolver(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
    addresses: list[IPAddress] = []
    for text in found:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        reason = blocked_reason(address)
        if reason is not None:
            raise BlockedDestination(host, str(address), reason)
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise httpcore.ConnectError(f"{host} resolves to no address")
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolve, check every address, then connect to a checked address (never the name)."""

    def __init__(self, resolver: Resolver = system_resolver,
                 inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._resolver = resolver
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        addresses = await checked_addresses(host, port, self._resolver)
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(str(address), port, timeout=timeout,
                                                     local_address=local_address, socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise BlockedDestination(path, path, "unix sockets are not partner destinations")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool on a ``GuardedBackend`` (httpx 0.28 takes no
    network backend argument, so the pool is rebuilt here with the same limits and TLS context)."""

    def __init__(self, *, limits: httpx.Limits, resolver: Resolver = system_resolver) -> None:
        super().__init__(limits=limits, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(resolver),
        )
