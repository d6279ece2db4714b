"""Fetching the ECB's daily reference-rate file from ``TRANSFERS_FX_ECB_URL`` (docs/rules/fx.md#fetch).

One GET within the configured timeout (the whole fetch, not each read: a server trickling its answer
a byte at a time is cut off at that bound like a silent one), no redirects, no proxy from the
environment and a size cap; every way it can go wrong (no answer in time, refused, a status other
than 200, too large) is one ``FetchFailed`` saying so in words. Nothing is written here: the caller
imports what came back.
"""

from __future__ import annotations

import asyncio

import httpx

from transfers.errors import Unavailable
from transfers.fx.ecb import MAX_FILE_BYTES


class FetchFailed(Unavailable):
    """The file could not be had; the rates already stored stay in use until they are stale."""


async def fetch_file(url: str, *, timeout_seconds: float, transport: httpx.AsyncBaseTransport | None = None) -> bytes:
    """The body of ``url`` (HTTP 200), or ``FetchFailed``."""
    try:
        async with asyncio.timeout(timeout_seconds):
            return await _get(url, timeout_seconds, transport)
    except (TimeoutError, httpx.TimeoutException):
        raise FetchFailed(f"{url} did not answer within {timeout_seconds:g} s") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"{url} could not be fetched: {type(exc).__name__}: {exc}") from None


async def _get(url: str, timeout_seconds: float, transport: httpx.AsyncBaseTransport | None) -> bytes:
    async with (
        httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_seconds),
            follow_redirects=False,
            trust_env=False,
            transport=transport,
        ) as client,
        client.stream("GET", url, headers={"Accept": "application/xml, text/xml, */*"}) as answer,
    ):
        if answer.status_code != 200:
            raise FetchFailed(f"{url} answered HTTP {answer.status_code}")
        body = bytearray()
        async for chunk in answer.aiter_bytes():
            body += chunk
            if len(body) > MAX_FILE_BYTES:
                raise FetchFailed(f"{url} sent more than {MAX_FILE_BYTES} bytes: not an ECB reference file")
        return bytes(body)
