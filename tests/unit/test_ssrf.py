"""The SSRF guard's address classifier and resolver check (docs/rules/partners.md#partner-urls, RELIABILITY-TESTS A7).

No network: names are resolved by an injected resolver, so "a name that resolves to 127.0.0.1" and
DNS rebinding are tested without root or /etc/hosts changes.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence

import pytest

from transfers.partners.models import InvalidPartnerUrl, check_base_url
from transfers.partners.ssrf import (
    BlockedDestination,
    GuardedResolver,
    Resolver,
    UnresolvableHost,
    blocked_reason,
    checked_addresses,
    is_private_host,
    parse_ip_literal,
    refuse_literal_host,
)

REFUSED_ADDRESSES = [
    "127.0.0.1",
    "127.255.255.254",
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "169.254.170.2",
    "100.64.0.1",
    "100.127.255.254",
    "100.100.100.200",
    "168.63.129.16",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.0.170",
    "198.18.0.1",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",
    "ff02::1",
    "ff0e::1",
    "2001:db8::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "2002:7f00:1::",
    "2002:a9fe:a9fe::1",
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
    "2001::1",
]
ALLOWED_ADDRESSES = [
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "2002:808:808::1",
    "64:ff9b::808:808",
    "100.63.255.255",
    "100.128.0.1",
]


@pytest.mark.parametrize("text", REFUSED_ADDRESSES)
def test_non_public_addresses_are_refused(text: str) -> None:
    assert blocked_reason(ipaddress.ip_address(text)) is not None


@pytest.mark.parametrize("text", ALLOWED_ADDRESSES)
def test_public_unicast_addresses_are_allowed(text: str) -> None:
    assert blocked_reason(ipaddress.ip_address(text)) is None


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),  # a.b: b fills the last 24 bits
        ("127.0.1", "127.0.0.1"),  # a.b.c: c fills the last 16 bits
        ("2130706433", "127.0.0.1"),  # one 32-bit number
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),  # octal
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("0", "0.0.0.0"),
        ("127.0.0.1.", "127.0.0.1"),  # one trailing dot
        ("[::1]", "::1"),
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("::ffff:7f00:1", "::ffff:127.0.0.1"),
    ],
)
def test_literal_forms_are_read_as_a_resolver_reads_them(host: str, address: str) -> None:
    assert parse_ip_literal(host) == ipaddress.ip_address(address)
    assert is_private_host(host)


@pytest.mark.parametrize(
    "host",
    [
        "partner.example.com",
        "127.0.0.1.nip.io",
        "0x7g000001",
        "08.0.0.1",
        "1.2.3.4.5",
        "256.256.256.256",
        "4294967296",
        "1_000",
        "٣.0.0.1",
        "",
        "..",
        "1..1",
    ],
)
def test_names_and_invalid_numbers_are_not_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


@pytest.mark.parametrize(
    "host", ["localhost", "LOCALHOST", "localhost.", "api.localhost", "ip6-localhost", "localhost.localdomain"]
)
def test_local_names_are_private(host: str) -> None:
    assert is_private_host(host)


@pytest.mark.parametrize("host", ["partner.example.com", "8.8.8.8", "134744072", "[2606:4700:4700::1111]"])
def test_public_hosts_are_not_private(host: str) -> None:
    assert not is_private_host(host)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1",
        "http://localhost",
        "http://127.1",
        "http://[::1]",
        "http://0.0.0.0",
        "http://169.254.169.254",
        "http://10.0.0.1",
        "http://172.16.0.1",
        "http://192.168.1.1",
        "http://100.64.0.1",
        "http://[::ffff:127.0.0.1]",
        "http://2130706433",
        "http://0x7f000001",
        "http://017700000001",
        "http://0177.0.0.1:8080/api",
        "https://[fd00:ec2::254]/",
    ],
)
def test_registration_refuses_private_literals_when_guarded(url: str) -> None:
    with pytest.raises(InvalidPartnerUrl):
        check_base_url(url, allow_private=False)
    assert check_base_url(url, allow_private=True) == url.rstrip("/")  # sandbox: allowed


def resolver_for(table: dict[str, list[Sequence[str]]]) -> Resolver:
    """A resolver answering from ``table``; a name with several answers gives them in turn."""
    calls: dict[str, int] = {}

    async def resolve(host: str, port: int) -> Sequence[str]:
        answers = table.get(host)
        if answers is None:
            raise OSError(f"unknown host {host}")
        index = min(calls.get(host, 0), len(answers) - 1)
        calls[host] = calls.get(host, 0) + 1
        return answers[index]

    return resolve


async def test_a_name_resolving_to_loopback_is_refused() -> None:
    resolve = resolver_for(
        {
            "evil.example": [["127.0.0.1"]],
            "mixed.example": [["93.184.215.14", "10.1.2.3"]],
            "v6.example": [["2606:4700:4700::1111", "fe80::1%eth0"]],
        }
    )
    for host in ("evil.example", "mixed.example", "v6.example"):  # any refused address refuses the host
        with pytest.raises(BlockedDestination):
            await checked_addresses(host, 443, resolve)


async def test_public_answers_are_kept_in_order_without_duplicates() -> None:
    answers = ["93.184.215.14", "93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
    resolve = resolver_for({"ok.example": [answers]})
    assert [str(a) for a in await checked_addresses("ok.example", 443, resolve)] == [
        "93.184.215.14",
        "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]


async def test_literals_and_local_names_never_reach_the_resolver() -> None:
    resolve = resolver_for({})
    with pytest.raises(BlockedDestination):
        await checked_addresses("2130706433", 80, resolve)
    with pytest.raises(BlockedDestination):
        await checked_addresses("localhost", 80, resolve)
    assert [str(a) for a in await checked_addresses("8.8.8.8", 80, resolve)] == ["8.8.8.8"]


async def test_resolution_failure_is_a_connect_error() -> None:
    """An ``OSError``: aiohttp reports it as a connection (DNS) error, i.e. the ``connect_error`` outcome."""
    with pytest.raises(UnresolvableHost):
        await checked_addresses("nowhere.example", 80, resolver_for({}))
    with pytest.raises(UnresolvableHost, match="no address"):
        await checked_addresses("empty.example", 80, resolver_for({"empty.example": [[]]}))
    assert issubclass(UnresolvableHost, OSError)


async def test_dns_rebinding_is_refused_and_aiohttp_gets_only_checked_addresses() -> None:
    """First answer public, later answers loopback (a rebinding name): the resolver hands aiohttp the
    numeric address it checked (which aiohttp connects to, never the name), and the rebound answer
    is refused at the next connect."""
    resolver = GuardedResolver(resolver_for({"rebind.example": [["93.184.215.14"], ["127.0.0.1"]]}))
    (first,) = await resolver.resolve("rebind.example", 443)
    assert first["host"] == "93.184.215.14" and first["port"] == 443 and first["family"] == socket.AF_INET
    assert first["flags"] & socket.AI_NUMERICHOST
    with pytest.raises(BlockedDestination):
        await resolver.resolve("rebind.example", 443)


async def test_every_checked_address_is_given_in_order_with_its_family() -> None:
    resolver = GuardedResolver(resolver_for({"two.example": [["93.184.215.14", "2606:4700:4700::1111"]]}))
    answers = await resolver.resolve("two.example", 80)
    assert [(a["host"], a["family"]) for a in answers] == [
        ("93.184.215.14", socket.AF_INET),
        ("2606:4700:4700::1111", socket.AF_INET6),
    ]


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "2130706433",
        "127.1",
        "0x7f000001",
        "::ffff:127.0.0.1",
        "[::1]",
        "localhost",
        "api.localhost",
        "169.254.169.254",
        "64:ff9b::7f00:1",
    ],
)
def test_literal_hosts_aiohttp_would_not_resolve_are_refused_before_the_call(host: str) -> None:
    with pytest.raises(BlockedDestination):
        refuse_literal_host(host)


@pytest.mark.parametrize("host", ["8.8.8.8", "2606:4700:4700::1111", "partner.example.com"])
def test_public_literals_and_names_pass_the_literal_check(host: str) -> None:
    refuse_literal_host(host)  # names are checked by GuardedResolver at connect time
