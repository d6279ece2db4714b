"""SSRF guard for partner calls (docs/rules/partners.md#partner-urls; hardening issue item 3).

Two layers:

* ``is_private_host`` classifies a URL host *as written* (registration, ``check_base_url``): names
  such as ``localhost`` and every literal form an IPv4 resolver accepts (``127.1``,
  ``2130706433``, ``0x7f000001``, ``017700000001``, ``0177.0.0.1``) or an IPv6 address hides
  (``::ffff:127.0.0.1``, 6to4, NAT64, Teredo).
* ``GuardedResolver`` is the aiohttp resolver of the guarded partner client: at *connect* time it
  resolves the host with the event loop's ``getaddrinfo``, refuses the connection if **any**
  resolved address is not a public unicast address, and hands aiohttp only the addresses it
  checked, which aiohttp then connects to (it never resolves the name again). TLS still verifies
  the certificate against the host name (aiohttp passes the URL's name as SNI), and a kept-alive
  connection stays pinned to the address it was opened to, so there is no DNS-rebinding window
  between the check and the connect. aiohttp does not ask the resolver about hosts that already
  look like IP addresses, so ``refuse_literal_host`` checks those (and local names) before a call.

Refusals raise ``BlockedDestination`` (not an aiohttp error, and deliberately not an ``OSError``, which
aiohttp would wrap into a DNS error): ``PartnerClient`` reports them as the ``blocked`` outcome, which
the outbox retries like a connection error until the delivery deadline.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import lru_cache

from aiohttp.abc import AbstractResolver, ResolveResult

from transfers.errors import Refused, Unavailable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses it resolves to, as strings (an IPv6 one may carry a "%scope").
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
# Cloud metadata / host services not always covered by "not global": AWS (IPv4 and IPv6), Azure
# wire server, Alibaba Cloud. 169.254.0.0/16, 100.64.0.0/10 and fd00::/8 are refused anyway.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "fd00:ec2::254",
        "168.63.129.16",
        "100.100.100.200",
    )
)
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_OCTAL = re.compile(r"0[0-7]+")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


class BlockedDestination(Refused):
    """A partner host that is, or resolves to, an address the guard refuses."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        super().__init__(f"{host} -> {address}: {reason}")
        self.host, self.address, self.reason = host, address, reason


class UnresolvableHost(Unavailable, OSError):
    """A name with no (usable) address. An ``OSError`` on purpose: aiohttp reports resolver
    ``OSError``s as a connection (DNS) error, which is what a partner down in DNS is."""


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

    A DNS failure raises ``UnresolvableHost`` (reported as an ordinary connection error).
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
            raise UnresolvableHost(f"cannot resolve {host}: {exc}") from exc
    addresses: list[IPAddress] = []
    for text in found:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        reason = blocked_reason(address)
        if reason is not None:
            raise BlockedDestination(host, str(address), reason)
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise UnresolvableHost(f"{host} resolves to no address")
    return addresses


@lru_cache(maxsize=1024)
def _literal_refusal(host: str) -> str | None:
    if is_local_name(host):
        return "local host name"
    literal = parse_ip_literal(host)
    if literal is None:
        return None
    reason = blocked_reason(literal)
    return None if reason is None else f"{literal}: {reason}"


def refuse_literal_host(host: str) -> None:
    """``BlockedDestination`` for a local name or a refused address literal (any form ``parse_ip_literal``
    reads). aiohttp connects to IP-looking hosts without asking the resolver, so the guarded client
    calls this before every request; names are left to ``GuardedResolver`` at connect time. Cached:
    the answer depends on the host text only, and partners are few."""
    reason = _literal_refusal(host)
    if reason is not None:
        raise BlockedDestination(host, host, reason)


class GuardedResolver(AbstractResolver):
    """aiohttp resolver: resolve, check every address, answer only with checked addresses (aiohttp
    connects to those, never to the name). The connector's DNS cache keeps checked answers only;
    a refusal is an exception and is never cached."""

    def __init__(self, resolver: Resolver = system_resolver) -> None:
        self._resolver = resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await checked_addresses(host, port, self._resolver)
        return [
            ResolveResult(
                hostname=host,
                host=str(address),
                port=port,
                family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
            )
            for address in addresses
        ]

    async def close(self) -> None:
        """Nothing to release: the wrapped resolver owns no resources."""
