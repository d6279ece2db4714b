"""The partner client's transport limits on real sockets: the SSRF guard (docs/rules/partners.md#partner-urls),
redirects,
the answer-size cap, and the ``partner_calls_total`` outcome each one records.

The partners here are test servers on 127.0.0.1, which is exactly what the guard must refuse: a
refused call must never reach the server (it records every request it sees).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.fake_partner import FakePartner
from tests.helpers import search_body
from tests.servers import LiveServer, free_port, serving
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.partners import ssrf
from transfers.partners.client import CallResult, PartnerClient, PartnerEndpoint
from transfers.partners.signing import new_signing_secret

SEARCH_PAYLOAD = {"pickup": "LHR"}


def calls(partner: str, call: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value("partner_calls_total", {"partner": partner, "call": call, "outcome": outcome})
    return value or 0.0


def endpoint(url: str, name: str) -> PartnerEndpoint:
    return PartnerEndpoint(
        partner_id=999_999, name=name, base_url=url, outbound_token="ot_test", signing_secret=new_signing_secret()
    )


@pytest.fixture
async def loopback_partner() -> AsyncIterator[tuple[FakePartner, LiveServer]]:
    partner = FakePartner()
    async with serving(partner.app()) as server:
        yield partner, server


async def call_search(client: PartnerClient, url: str, name: str) -> CallResult:
    try:
        return await client.call(endpoint(url, name), "POST", "/booking/search", SEARCH_PAYLOAD, timeout=2.0)
    finally:
        await client.aclose()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "2130706433", "127.1", "[::ffff:127.0.0.1]"])
async def test_guarded_client_refuses_loopback_without_connecting(
    host: str,
    loopback_partner: tuple[FakePartner, LiveServer],
) -> None:
    partner, server = loopback_partner
    name = f"guarded-{host}"
    before = calls(name, "search", "blocked")
    result = await call_search(PartnerClient(allow_private=False), f"http://{host}:{server.port}", name)
    assert result.outcome == "blocked" and result.http_status is None
    assert result.error is not None and "SSRF guard" in result.error
    assert partner.requests == []
    assert calls(name, "search", "blocked") == before + 1


async def test_a_name_resolving_to_loopback_is_refused_at_call_time(
    loopback_partner: tuple[FakePartner, LiveServer],
) -> None:
    partner, server = loopback_partner

    async def resolve(host: str, port: int) -> Sequence[str]:
        return ["93.184.215.14", "127.0.0.1"] if host == "partner.example" else []

    client = PartnerClient(allow_private=False, resolver=resolve)
    result = await call_search(client, f"http://partner.example:{server.port}", "rebinding")
    assert result.outcome == "blocked" and "127.0.0.1" in (result.error or "")
    assert partner.requests == []


async def test_guarded_client_connects_to_the_address_it_checked(
    loopback_partner: tuple[FakePartner, LiveServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With loopback allowed for this test only, a name that exists in no DNS reaches the server
    through the injected answer: the connection goes to the checked address, the name is only the
    Host header (and, over TLS, the SNI and certificate name)."""
    partner, server = loopback_partner
    original = ssrf.blocked_reason
    monkeypatch.setattr(
        ssrf, "blocked_reason", lambda address: None if str(address) == "127.0.0.1" else original(address)
    )
    seen: list[str] = []

    async def resolve(host: str, port: int) -> Sequence[str]:
        seen.append(host)
        return ["127.0.0.1"]

    client = PartnerClient(allow_private=False, resolver=resolve)
    result = await call_search(client, f"http://partner.invalid:{server.port}", "pinned")
    assert result.outcome == "ok", result
    assert seen == ["partner.invalid"]
    (request,) = partner.requests
    assert request.headers["host"] == f"partner.invalid:{server.port}"


async def test_unguarded_client_reaches_the_loopback_partner(loopback_partner: tuple[FakePartner, LiveServer]) -> None:
    partner, server = loopback_partner
    result = await call_search(PartnerClient(allow_private=True), server.url, "sandbox-mode")
    assert result.outcome == "ok" and len(partner.requests) == 1


async def test_redirects_are_not_followed_and_big_answers_are_capped() -> None:
    redirecting = FakePartner(mode="redirect")  # 302 to http://169.254.169.254/latest
    huge = FakePartner(mode="huge_body")
    async with serving(redirecting.app()) as one, serving(huge.app()) as two:
        before = calls("redirecting", "search", "redirect")
        result = await call_search(PartnerClient(), one.url, "redirecting")
        assert result.outcome == "redirect" and result.http_status == 302
        assert calls("redirecting", "search", "redirect") == before + 1
        assert len(redirecting.requests) == 1
        capped = await call_search(PartnerClient(max_response_bytes=64 * 1024), two.url, "huge")
        assert capped.outcome == "too_large"


@pytest.mark.parametrize("environment", ["sandbox", "live"])
async def test_the_guard_is_on_by_default_in_sandbox_and_live(
    environment: str,
    database_url: str,
    workdir: Path,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """Unless ``TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS=1`` (the test settings set it; not here), a partner
    registered on loopback is never called, in the sandbox as in live: the search answers without it and
    the call is counted as blocked."""
    assert Settings(environment=environment).private_partner_urls_allowed is False  # type: ignore[arg-type]
    settings = make_settings(database_url, workdir, environment=environment, allow_private_partner_urls=False)
    name = f"loopback-in-{environment}"
    partner, _, _ = await make_partner(airports=("BHX",), name=name)
    _, key = await make_client()
    before = calls(name, "search", "blocked")
    server = await LiveServer(create_app(settings, clock=clock, configure_logs=False)).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            body = search_body(pickup_location={"type": "AIRPORT", "iata_code": "BHX"})
            response = await http.post("/api/v1/booking-api/search", json=body, headers=bearer(key))
    finally:
        await server.stop(graceful=True)
    assert response.status_code == 200, response.text
    assert response.json()["vehicles"] == []
    assert partner.requests == []
    assert calls(name, "search", "blocked") == before + 1


# -- raw-socket partners: what a Starlette test partner cannot do (chunked floods, drips, gzip bombs) --


RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def raw_partner(handler: RawHandler) -> AsyncIterator[tuple[str, list[int]]]:
    """A bare HTTP/1.1 server on loopback running ``handler`` per connection; yields its URL and a
    list that gets one entry per accepted connection (to see keep-alive reuse)."""
    connections: list[int] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", connections
    finally:
        server.close()
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    await reader.readexactly(length)


async def test_a_chunked_flood_is_cut_at_the_cap() -> None:
    """No Content-Length: the body is read in pieces and the call ends as soon as the cap is passed,
    while the partner is still sending."""

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 16384
        for _ in range(10_000):  # 160 MB if nobody stops reading
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()

    async with raw_partner(flood) as (url, _):
        result = await call_search(PartnerClient(max_response_bytes=64 * 1024), url, "flood")
    assert result.outcome == "too_large" and result.duration_ms < 2000


async def test_a_gzip_bomb_is_capped_on_the_decompressed_size() -> None:
    bomb = gzip.compress(b'{"vehicles":[' + b" " * 2_000_000 + b"]}")

    async def compressed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(bomb), bomb)
        )
        await writer.drain()

    assert len(bomb) < 64 * 1024
    async with raw_partner(compressed) as (url, _):
        result = await call_search(PartnerClient(max_response_bytes=64 * 1024), url, "gzip-bomb")
    assert result.outcome == "too_large"


async def test_a_slowly_dripped_body_hits_the_overall_deadline() -> None:
    """Headers at once, then a byte every 100 ms: each read is quick, the whole answer is not; the
    deadline covers the body, not just the wait for the first byte."""

    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(1000):
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.1)

    async with raw_partner(drip) as (url, _):
        client = PartnerClient()
        try:
            result = await client.call(endpoint(url, "drip"), "POST", "/booking/search", SEARCH_PAYLOAD, timeout=0.5)
        finally:
            await client.aclose()
    assert result.outcome == "timeout" and 450 <= result.duration_ms < 1500


async def test_an_interim_answer_is_skipped_and_an_answer_until_close_is_read_whole() -> None:
    """A 100 Continue before the answer is not the answer; an answer without a length ends with the
    connection (HTTP/1.0 style) and is complete, not a protocol error."""

    async def interim(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"vehicles":[]}')
        await writer.drain()

    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"vehicles":')
        await writer.drain()
        writer.write(b"[]}")
        await writer.drain()

    for handler in (interim, until_close):
        async with raw_partner(handler) as (url, _):
            result = await call_search(PartnerClient(), url, "interim")
        assert result.outcome == "ok" and result.http_status == 200 and result.body == {"vehicles": []}, result


async def test_connections_are_kept_alive_and_failures_are_named_as_before() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(
                b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"vehicles":[]}'
            )
            await writer.drain()

    client = PartnerClient()
    try:
        async with raw_partner(answer) as (url, connections):
            for _ in range(3):
                result = await client.call(
                    endpoint(url, "keepalive"), "POST", "/booking/search", SEARCH_PAYLOAD, timeout=2.0
                )
                assert result.outcome == "ok" and result.body == {"vehicles": []}
            assert len(connections) == 1
        refused = await client.call(
            endpoint(f"http://127.0.0.1:{free_port()}", "refused"),
            "POST",
            "/booking/search",
            SEARCH_PAYLOAD,
            timeout=2.0,
        )
        assert refused.outcome == "connect_error" and refused.error == "ConnectError"
    finally:
        await client.aclose()


def recording_app(seen: list[str]) -> Starlette:
    """Answers every POST with an empty JSON object and records its path."""

    async def answer(request: Request) -> Response:
        seen.append(request.url.path)
        return JSONResponse({})

    return Starlette(routes=[Route("/{rest:path}", answer, methods=["POST"])])


async def test_the_built_in_partners_own_url_is_trusted_with_the_guard_on() -> None:
    """The sandbox partner lives on this service's own (loopback) address: the guarded client calls it
    there because its URL is the one the service mounts it at (``trusted_url``), not because the
    guard is off. Anything else on that host and port, and any other loopback port, is still refused
    without a connection (docs/rules/partners.md#partner-urls)."""
    seen: list[str] = []
    async with serving(recording_app(seen)) as server, serving(recording_app(seen)) as other:
        trusted = f"{server.url}/sandbox-partner"
        client = PartnerClient(allow_private=False, trusted_url=trusted)
        try:
            ok = await client.call(endpoint(trusted, "trusted"), "POST", "/booking/search", SEARCH_PAYLOAD, timeout=2.0)
            assert ok.outcome == "ok", ok
            assert seen == ["/sandbox-partner/booking/search"]
            beside = (
                server.url,
                f"{server.url}/sandbox-partner-not",
                f"http://localhost:{server.port}/sandbox-partner",
                f"{other.url}/sandbox-partner",
            )
            for url in beside:
                refused = await client.call(
                    endpoint(url, "beside"), "POST", "/booking/search", SEARCH_PAYLOAD, timeout=2.0
                )
                assert refused.outcome == "blocked", (url, refused)
            assert seen == ["/sandbox-partner/booking/search"]
        finally:
            await client.aclose()
