"""Clients' webhook URLs may not reach inside (docs/rules/webhooks.md#private-addresses).

A client chooses where its webhooks go, so a webhook is a request this service makes on the client's
behalf: without a guard, a client could aim it at the service's own loopback port, the cloud's
metadata address or a private network, and read from the delivery log whether a port is open. The
guard is the partner calls' (``partners/ssrf.py``: one classifier for every spelling of an address),
applied in every environment:

* at creation and on every URL change (``check_host``): a local name or an address literal that is
  not public is refused without DNS, and a name is resolved and refused if any address is not public;
* before every send (``webhooks/sender.py``): the name is resolved again, every address checked, and
  the connection made to a checked address (never to the name), so a name that pointed at a public
  address when it was registered and at a private one since is refused, not called.

Only ``TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS=1`` lifts it (refused in live); the partner flag has no
say here. Refusals are told in words, without the address a name resolved to.
"""

from __future__ import annotations

import asyncio

import aiohttp

from transfers.errors import ErrorCode, Invalid
from transfers.partners import ssrf

RESOLVE_TIMEOUT_SECONDS = 3.0
REFUSED = "refused: private address"
"""What a delivery log says of a send the guard stopped (the address is not shown: a client learns
nothing about the inside from it)."""


class WebhookUrlRefused(Invalid):
    """A webhook host the guard refuses, or one that does not resolve: 422 ``INVALID_WEBHOOK_URL``, the
    message for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_WEBHOOK_URL, message)


async def check_host(host: str, port: int, resolver: ssrf.Resolver) -> None:
    """``WebhookUrlRefused`` unless ``host`` is, or resolves only to, public unicast addresses."""
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_SECONDS):
            await ssrf.checked_addresses(host, port, resolver)
    except ssrf.BlockedDestination:
        raise WebhookUrlRefused(
            "the webhook URL must reach a public address: loopback, private, link-local, multicast and "
            "unspecified addresses (and names resolving to them) are refused."
        ) from None
    except (OSError, TimeoutError):
        raise WebhookUrlRefused("the webhook host does not resolve.") from None


def failure_words(exc: BaseException, timeout: float) -> str:
    """A send that brought no answer, in words a client can act on; never an exception's name."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, ssrf.BlockedDestination):
        return REFUSED
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "no answer: the host name does not resolve"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return "no answer: the TLS certificate is not valid"
    if isinstance(exc, aiohttp.ClientSSLError):
        return "no answer: the TLS handshake failed"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "no answer: could not connect"
    if isinstance(exc, aiohttp.InvalidURL | ValueError):
        return "not a valid URL"
    return "no answer: the connection closed before an answer"
