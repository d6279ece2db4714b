"""A search's fan-out as one ``CallBatch``: calls on idle kept-alive connections written at
once without a task, one deadline timer, each call judged and timed by itself, nothing left behind
by a deadline or a cancelled search. Partners are bare HTTP/1.1 servers on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from tests.integration.test_partner_transport_limits import endpoint, raw_partner, read_request
from transfers.partners import client as client_module
from transfers.partners.call_batch import IDS_AT_ONCE, CallBatch
from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.http11 import Http11Client, target
from transfers.partners.signing import verify

ANSWER = b'{"vehicles":[]}'
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n" + ANSWER
PATH = "/booking/search"
PAYLOAD = {"pickup": "LHR"}
BODY = b'{"pickup":"LHR"}'

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def answer_always(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        await read_request(reader)
        writer.write(OK)
        await writer.drain()


def then(later: Handler) -> Handler:
    """Answers the first request of each connection at once (the warm-up), then hands over."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(OK)
        await writer.drain()
        await later(reader, writer)

    return handler


@contextlib.asynccontextmanager
async def partners(*handlers: Handler) -> AsyncIterator[list[tuple[PartnerEndpoint, list[int]]]]:
    async with contextlib.AsyncExitStack() as stack:
        served = []
        for i, handler in enumerate(handlers):
            url, connections = await stack.enter_async_context(raw_partner(handler))
            served.append((endpoint(url, f"fanout-{i}"), connections))
        yield served


async def batch_of(client: PartnerClient, endpoints: list[PartnerEndpoint], timeout: float = 2.0) -> CallBatch:
    batch = CallBatch(client, timeout)
    for partner in endpoints:
        batch.call(partner, PATH, PAYLOAD, BODY)
    return batch


def pool(client: PartnerClient) -> Http11Client:
    return client.transport()


def idle(client: PartnerClient, partner: PartnerEndpoint) -> int:
    return len(pool(client)._idle.get(target(partner.base_url + PATH).key, []))


def assert_nothing_in_flight(client: PartnerClient) -> None:
    http = pool(client)
    for slots in http._slots.values():
        assert slots.free == 200 and not slots.waiters
    idle_now = {c for connections in http._idle.values() for c in connections}
    assert http._open == idle_now  # every open connection is idle, none half-way through an exchange
    assert all(c.listener is None and not c.closed for c in idle_now)


async def test_one_partner_past_the_deadline_among_ten() -> None:
    """Nine answers kept, the tenth judged timeout at the deadline; its connection closed, not reused."""
    hung: list[asyncio.StreamWriter] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        hung.append(writer)
        await reader.read()  # until the client closes the connection

    client = PartnerClient()
    try:
        async with partners(*([answer_always] * 9), then(hang)) as served:
            endpoints = [p for p, _ in served]
            await (await batch_of(client, endpoints)).results()  # warm-up: one idle connection each
            assert all(idle(client, p) == 1 for p in endpoints)
            batch = await batch_of(client, endpoints, timeout=0.2)
            assert all(call.task is None for call in batch._calls)  # all written at once, no task
            results = await batch.results()
            assert [r.outcome for r in results] == ["ok"] * 9 + ["timeout"]
            assert all(r.raw == ANSWER and r.body == {"vehicles": []} and r.http_status == 200 for r in results[:9])
            assert results[9].error == "no answer within 0.2s" and 195 <= results[9].duration_ms < 1000
            assert all(r.duration_ms < 150 for r in results[:9])
            assert batch.timer is not None  # one timer for the batch, armed once
            assert idle(client, endpoints[9]) == 0 and all(idle(client, p) == 1 for p in endpoints[:9])
            assert_nothing_in_flight(client)
            again = await (await batch_of(client, endpoints[9:])).results()
            assert again[0].outcome == "ok"
            assert [len(c) for _, c in served] == [1] * 9 + [2]  # the slow one's connection was not reused
    finally:
        await client.aclose()


async def test_a_search_cancelled_mid_flight_leaves_nothing_behind() -> None:
    asked = asyncio.Event()
    both_closed = asyncio.Event()
    seen: list[int] = []
    closed: list[bytes] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        seen.append(1)
        if len(seen) == 2:
            asked.set()
        closed.append(await reader.read())  # b"": the client closed it
        if len(closed) == 2:
            both_closed.set()

    client = PartnerClient()
    try:
        async with partners(then(hang), then(hang), answer_always) as served:
            endpoints = [p for p, _ in served]
            await (await batch_of(client, endpoints)).results()
            batch = await batch_of(client, [*endpoints, endpoints[2]], timeout=5)  # the last one: a new connection
            assert batch._calls[3].task is not None
            search = asyncio.create_task(batch.results())
            await asyncio.wait_for(asked.wait(), 2)
            search.cancel()
            with pytest.raises(asyncio.CancelledError):
                await search
            assert batch.timer is not None and batch.timer.cancelled()
            assert batch._calls[3].task.done()
            assert_nothing_in_flight(client)
            assert idle(client, endpoints[0]) == idle(client, endpoints[1]) == 0
            await asyncio.wait_for(both_closed.wait(), 2)  # the partners see their connections closed
            assert closed == [b"", b""]
    finally:
        await client.aclose()


async def test_a_partner_closing_mid_answer_is_a_protocol_error_on_a_kept_alive_connection() -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"veh')
        await writer.drain()

    client = PartnerClient()
    try:
        async with partners(then(cut), answer_always) as served:
            endpoints = [p for p, _ in served]
            await (await batch_of(client, endpoints)).results()
            batch = await batch_of(client, endpoints)
            assert all(call.task is None for call in batch._calls)
            results = await batch.results()
            assert (results[0].outcome, results[0].error) == ("connect_error", "RemoteProtocolError")
            assert results[1].outcome == "ok"
            assert idle(client, endpoints[0]) == 0
            assert_nothing_in_flight(client)
    finally:
        await client.aclose()


async def test_a_new_connection_while_others_are_idle() -> None:
    """One idle connection to A and none to B: A's call is written at once, B's and A's second call
    connect in tasks; all three answer, and the pool ends with their connections idle."""
    client = PartnerClient()
    try:
        async with partners(answer_always, answer_always) as served:
            (a, a_connections), (b, b_connections) = served
            await (await batch_of(client, [a])).results()
            batch = await batch_of(client, [a, b, a])
            assert batch._calls[0].task is None and batch._calls[0].exchange is not None
            assert batch._calls[1].task is not None and batch._calls[2].task is not None
            results = await batch.results()
            assert [r.outcome for r in results] == ["ok"] * 3 and all(r.raw == ANSWER for r in results)
            assert len(a_connections) == 2 and len(b_connections) == 1
            assert idle(client, a) == 2 and idle(client, b) == 1
            assert_nothing_in_flight(client)
    finally:
        await client.aclose()


def recorder(heads: list[dict[str, str]]) -> Handler:
    """A partner that answers every request with ``OK`` and keeps its headers (lower-cased names) and,
    under ``"body"``, its body."""

    async def recording(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")[1:]
            headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines if ":" in line)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            heads.append({**headers, "body": body.decode()})
            writer.write(OK)
            await writer.drain()

    return recording


async def test_a_call_that_needs_a_new_connection_is_signed_once_and_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch signs the call before it knows whether an idle connection takes it; the task that
    connects sends those same headers (one signature per call, not two), and they verify."""
    heads: list[dict[str, str]] = []
    recording = recorder(heads)

    signed: list[str] = []
    real = client_module.signed

    def counting(secret: str, body: bytes, *args: Any, **kwargs: Any) -> tuple[str, str, str]:
        signed.append(secret)
        return real(secret, body, *args, **kwargs)

    monkeypatch.setattr(client_module, "signed", counting)
    client = PartnerClient()
    try:
        async with partners(recording) as served:
            [(partner, connections)] = served
            batch = await batch_of(client, [partner])
            assert batch._calls[0].task is not None  # no idle connection yet: it connects in a task
            [result] = await batch.results()
            assert result.outcome == "ok" and len(connections) == 1
            assert signed == [partner.signing_secret]
            [sent] = heads
            assert sent["body"] == BODY.decode()
            assert verify(partner.signing_secret, sent, BODY)
    finally:
        await client.aclose()


async def test_each_call_is_timed_when_it_ends() -> None:
    """A fast answer's duration is its own, not the time until the slowest one came."""
    release = asyncio.Event()

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await release.wait()
        writer.write(OK)
        await writer.drain()
        await answer_always(reader, writer)

    client = PartnerClient()
    try:
        async with partners(answer_always, then(slow)) as served:
            endpoints = [p for p, _ in served]
            await (await batch_of(client, endpoints)).results()
            batch = await batch_of(client, endpoints)
            loop = asyncio.get_running_loop()
            loop.call_later(0.3, release.set)
            results = await batch.results()
            assert [r.outcome for r in results] == ["ok", "ok"]
            assert results[0].duration_ms < 200 <= 290 <= results[1].duration_ms
    finally:
        await client.aclose()


async def test_a_header_that_cannot_be_sent_is_judged_at_once_and_the_connection_kept() -> None:
    client = PartnerClient()
    try:
        async with partners(answer_always) as served:
            good = served[0][0]
            await (await batch_of(client, [good])).results()
            bad = PartnerEndpoint(
                partner_id=good.partner_id,
                name="bad-token",
                base_url=good.base_url,
                outbound_token="ot\r\nX-Injected: 1",
                signing_secret=good.signing_secret,
            )
            batch = await batch_of(client, [bad, good])
            results = await batch.results()
            assert (results[0].outcome, results[0].error) == ("connect_error", "InvalidURL")
            assert results[1].outcome == "ok" and len(served[0][1]) == 1
            assert_nothing_in_flight(client)
    finally:
        await client.aclose()


async def test_a_batch_draws_its_webhook_ids_together_and_each_call_has_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One ``os.urandom`` per ``IDS_AT_ONCE`` calls, not one per call; every call still carries a new
    ``msg_`` id of 32 hex digits, and its signature verifies with it."""
    heads: list[dict[str, str]] = []
    recording = recorder(heads)

    draws: list[int] = []
    real = os.urandom

    def counting(size: int) -> bytes:
        draws.append(size)
        return real(size)

    monkeypatch.setattr(os, "urandom", counting)  # what signing.webhook_ids calls
    client = PartnerClient()
    try:
        async with partners(recording, recording) as served:
            endpoints = [partner for partner, _ in served] * 10
            results = await (await batch_of(client, endpoints)).results()
            assert [r.outcome for r in results] == ["ok"] * 20
            assert draws == [16 * IDS_AT_ONCE, 16 * IDS_AT_ONCE]  # 20 calls: two draws of 16 ids
            ids = [sent["webhook-id"] for sent in heads]
            assert len(set(ids)) == 20 and all(re.fullmatch(r"msg_[0-9a-f]{32}", wid) for wid in ids)
            assert all(any(verify(p.signing_secret, sent, BODY) for p, _ in served) for sent in heads)
    finally:
        await client.aclose()
