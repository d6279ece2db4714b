"""A client-webhook delivery's outcome in words (docs/rules/webhooks.md#delivery-log): what the sender
stores for each failure, and how rows stored before it did (an exception's name, the SSRF guard's own
text with the address) are told in the same words. Pure."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp.client_reqrep import ConnectionKey

from transfers.partners.ssrf import BlockedDestination, is_private_host
from transfers.webhooks.guard import REFUSED, failure_words
from transfers.webhooks.wording import outcome

KEY = ConnectionKey("hooks.example.com", 443, True, True, None, None, None)


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (TimeoutError(), "no answer within 5 s"),
        (BlockedDestination("inside.example", "10.0.0.7", "private address"), REFUSED),
        (
            aiohttp.ClientConnectorError(KEY, ConnectionRefusedError(111, "Connect call failed")),
            "no answer: could not connect",
        ),
        (
            aiohttp.ClientConnectorDNSError(KEY, OSError(-2, "Name or service not known")),
            "no answer: the host name does not resolve",
        ),
        (aiohttp.ServerDisconnectedError(), "no answer: the connection closed before an answer"),
        (ConnectionResetError(104, "reset"), "no answer: the connection closed before an answer"),
        (ValueError("bad"), "not a valid URL"),
    ],
)
def test_a_failed_send_is_stored_in_words(exc: BaseException, words: str) -> None:
    assert failure_words(exc, 5.0) == words
    assert "Error" not in words and "10.0.0.7" not in words


@pytest.mark.parametrize(
    ("status", "attempts", "http_status", "error", "words"),
    [
        ("delivered", 1, 200, None, "delivered"),
        ("pending", 0, None, None, "not sent yet"),
        ("pending", 2, 503, "HTTP 503", "HTTP 503"),
        ("pending", 1, None, "no answer within 5 s", "no answer within 5 s"),
        (
            "failed",
            9,
            None,
            "refused: private address; gave up 24 h after the event",
            REFUSED + "; gave up 24 h after the event",
        ),
        ("failed", 1, None, "endpoint disabled by the client", "endpoint disabled by the client"),
        # stored before the words: never shown as they were
        ("pending", 1, None, "ClientConnectorError", "no answer"),
        ("pending", 1, None, "ServerDisconnectedError", "no answer"),
        ("pending", 1, None, "no answer within 5s", "no answer within 5 s"),
        ("pending", 1, None, "SSRF guard: localhost -> 127.0.0.1: loopback address", REFUSED),
        ("failed", 3, None, "ConnectError; gave up 24 h after the event", "no answer; gave up 24 h after the event"),
    ],
)
def test_the_delivery_log_tells_the_outcome_in_words(
    status: str, attempts: int, http_status: int | None, error: str | None, words: str
) -> None:
    assert outcome(status, attempts, http_status, error) == words


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1.",
        "127.1",
        "::1",
        "[::1]",
        "0.0.0.0",
        "::",
        "localhost",
        "localhost.",
        "LocalHost",
        "a.b.localhost",
        "2130706433",
        "0177.0.0.1",
        "017700000001",
        "0x7f000001",
        "0x7f.1",
        "::ffff:127.0.0.1",
        "[::ffff:7f00:1]",
        "169.254.169.254",
        "fe80::1",
        "10.0.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "100.64.0.1",
        "fd00::1",
        "224.0.0.1",
        "ff02::1",
        "0",
        "0x0",
    ],
)
def test_every_spelling_of_an_inside_host_is_read_as_inside(host: str) -> None:
    assert is_private_host(host), host


@pytest.mark.parametrize("host", ["93.184.215.14", "hooks.example.com", "[2606:4700::1111]", "1.1.1.1"])
def test_public_hosts_are_not(host: str) -> None:
    assert not is_private_host(host)
