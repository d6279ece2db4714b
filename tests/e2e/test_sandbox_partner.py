"""The reference sandbox partner over real HTTP, driven by the service's own partner client.

A tiny recording Starlette app stands in for the service's reverse API, so the approval calls the
partner makes can be inspected (bearer key, body, timing, retries).
"""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.servers import LiveServer, serving
from transfers.partners.client import PartnerClient, PartnerEndpoint, info_path
from transfers.partners.signing import new_signing_secret, signature_headers
from transfers.partners.wire import (
    WireCreateAnswer,
    WireDriver,
    WireInfoAnswer,
    WireResult,
    WireSearchAnswer,
    search_request,
)
from transfers.sandbox_partner import SandboxPartner, SandboxPartnerConfig, create_sandbox_partner_app

SECRET = new_signing_secret()
TOKEN = "ot_sandbox-test-token"
API_KEY = "pk_0123456789ab_reverse-api-key-for-tests"
APPROVE_AFTER = 0.2
LHR = {"type": "AIRPORT", "iata_code": "LHR", "name": "London Heathrow Airport", "lat": 51.4706, "lng": -0.46194}
NEAR = {"type": "POINT", "name": "Hounslow West", "lat": 51.4735, "lng": -0.3863}
CITY = {"type": "POINT", "name": "Trafalgar Square", "lat": 51.508, "lng": -0.128}
FAR = {"type": "POINT", "name": "Oxford", "lat": 51.752, "lng": -1.2577}
DATE = "2026-12-01T14:30:00+00:00"


@dataclass
class FakeService:
    """Records reverse-API calls; answers 503 to the first ``fail_first[ref]`` calls for a booking."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    fail_first: dict[str, int] = field(default_factory=dict)

    def app(self) -> Starlette:
        async def update(request: Request) -> JSONResponse:
            body = await request.json()
            self.calls.append(
                {
                    "at": time.monotonic(),
                    "authorization": request.headers.get("authorization"),
                    "content_type": request.headers.get("content-type"),
                    "body": body,
                }
            )
            ref = body.get("reservation_no", "")
            if self.fail_first.get(ref, 0) > 0:
                self.fail_first[ref] -= 1
                return JSONResponse({"status": "Error", "message": "try later"}, status_code=503)
            return JSONResponse({"status": "Success", "message": "Booking updated."})

        return Starlette(routes=[Route("/api/v1/reverse/booking/update", update, methods=["PUT"])])

    def for_booking(self, ref: str) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["body"].get("reservation_no") == ref]

    async def wait_for(self, ref: str, count: int = 1, timeout: float = 5.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.for_booking(ref)) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.for_booking(ref)


@dataclass
class Sandbox:
    server: LiveServer
    partner: SandboxPartner
    endpoint: PartnerEndpoint


def _config(service_url: str, **overrides: Any) -> SandboxPartnerConfig:
    values: dict[str, Any] = {
        "service_url": service_url,
        "api_key": API_KEY,
        "signing_secret": SECRET,
        "outbound_token": TOKEN,
        "approve_after_seconds": APPROVE_AFTER,
        "reverse_retry_delays": (0.05, 0.1),
        "reverse_timeout_seconds": 2.0,
    }
    values.update(overrides)
    return SandboxPartnerConfig(**values)


@pytest.fixture(scope="module")
async def fake() -> AsyncIterator[tuple[FakeService, LiveServer]]:
    recorder = FakeService()
    async with serving(recorder.app()) as server:
        yield recorder, server


@pytest.fixture(scope="module")
async def sandbox(fake: tuple[FakeService, LiveServer]) -> AsyncIterator[Sandbox]:
    app = create_sandbox_partner_app(_config(fake[1].url))
    server = await LiveServer(app).start()
    yield Sandbox(server, app.state.partner, PartnerEndpoint(1, "sandbox", server.url, TOKEN, SECRET))
    await server.stop()
    await app.state.partner.aclose()  # a forced stop skips the lifespan


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[PartnerClient]:
    partner_client = PartnerClient()
    yield partner_client
    await partner_client.aclose()


def new_ref() -> str:
    return "TB-" + uuid.uuid4().hex[:8].upper()


def create_body(
    ref: str,
    *,
    surname: str = "Lovelace",
    flight: str = "BA117",
    vehicle: str = "sedan",
    extras: list[dict[str, Any]] | None = None,
    total: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "reservation_no": ref,
        "vehicle_id": vehicle,
        "passenger_info": {"name": "Ada", "surname": surname, "email": "ada@example.com", "phone": "+447700900123"},
        "flight_info": {"flight_number": flight, "extra_requests": None},
        "trip": {
            "from": LHR,
            "to": CITY,
            "date": DATE,
            "passengers": {"adult": 1, "children": 0, "infant": 0},
            "suitcase": 1,
            "small_bags": 0,
        },
        "extras": extras if extras is not None else [{"id": "child-seat", "quantity": 2}],
    }
    if total is not None:
        body["price"] = {"total": total, "currency": "EUR"}
    return body


async def search(client: PartnerClient, sandbox: Sandbox, to: dict[str, Any], adult: int = 2) -> WireSearchAnswer:
    payload = search_request(pickup=LHR, dropoff=to, date=DATE, adult=adult, children=0, infant=0)
    result = await client.call(sandbox.endpoint, "POST", "/booking/search", payload, timeout=3)
    assert result.ok and result.http_status == 200, result
    return WireSearchAnswer.model_validate(result.body)


async def create(
    client: PartnerClient, sandbox: Sandbox, body: dict[str, Any], webhook_id: str | None = None
) -> tuple[int | None, Any]:
    result = await client.call(sandbox.endpoint, "POST", "/booking/create", body, timeout=3, webhook_id=webhook_id)
    return result.http_status, result.body


async def info(client: PartnerClient, sandbox: Sandbox, ref: str) -> tuple[int | None, Any]:
    result = await client.call(sandbox.endpoint, "GET", info_path(ref), None, timeout=3)
    return result.http_status, result.body


async def cancel(
    client: PartnerClient, sandbox: Sandbox, ref: str, status: str = "CANCELLED"
) -> tuple[int | None, Any]:
    body = {"reservation_no": ref, "status": status, "cancel_reason": "Change of plans", "note": None}
    result = await client.call(sandbox.endpoint, "PUT", "/booking/update", body, timeout=3)
    return result.http_status, result.body


async def test_search_answer_is_valid_and_prices_grow_with_distance(client: PartnerClient, sandbox: Sandbox) -> None:
    near, city, far = [await search(client, sandbox, to) for to in (NEAR, CITY, FAR)]
    assert near.distance_km is not None and city.distance_km is not None and far.distance_km is not None
    assert near.distance_km < city.distance_km < far.distance_km
    assert {v.type for v in city.vehicles} >= {"SEDAN", "MINIVAN", "MINIBUS", "LUXURY"}
    for vehicle_id in {v.id for v in city.vehicles}:
        prices = [next(v.price for v in answer.vehicles if v.id == vehicle_id) for answer in (near, city, far)]
        assert prices[0] < prices[1] < prices[2], vehicle_id
    reverse = await client.call(
        sandbox.endpoint,
        "POST",
        "/booking/search",
        search_request(pickup=CITY, dropoff=LHR, date=DATE, adult=1, children=0, infant=0),
        timeout=3,
    )
    assert WireSearchAnswer.model_validate(reverse.body).distance_km == city.distance_km
    group = await search(client, sandbox, CITY, adult=12)
    assert [v.type for v in group.vehicles] == ["MINIBUS"]


async def test_create_dedupes_by_webhook_id_and_by_reservation_no(client: PartnerClient, sandbox: Sandbox) -> None:
    ref = new_ref()
    quote = next(v for v in (await search(client, sandbox, CITY)).vehicles if v.id == "sedan")
    total = str(quote.price + 16)
    first = await create(client, sandbox, create_body(ref, total=total), webhook_id="msg_dedupe_1")
    assert first[0] == 200
    answer = WireCreateAnswer.model_validate(first[1])
    assert answer.status == "PENDING" and answer.reservation_no and answer.reservation_no.startswith("SBX-")
    assert first[1]["booking_details"]["price"] == {"total": total, "currency": "EUR"}
    assert first[1]["booking_details"]["vehicle"] == {
        "id": "sedan",
        "make": "Toyota",
        "model": "Corolla Hybrid",
        "type": "SEDAN",
    }
    again = await create(client, sandbox, create_body(ref, total=total), webhook_id="msg_dedupe_1")
    other_delivery = await create(client, sandbox, create_body(ref, vehicle="luxury"), webhook_id="msg_dedupe_2")
    concurrent = await asyncio.gather(*(create(client, sandbox, create_body(ref)) for _ in range(5)))
    assert all(a == first for a in (again, other_delivery, *concurrent))
    assert sandbox.partner.effective_creates(ref) == 1
    assert sandbox.partner.create_attempts(ref) == 8


async def _raw(sandbox: Sandbox, method: str, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=sandbox.server.url) as http:
        return await http.request(
            method, path, content=body or None, headers={"Content-Type": "application/json", **headers}
        )


@pytest.mark.parametrize("case", ["unsigned", "bad_signature", "wrong_token", "no_token", "stale", "other_secret"])
async def test_unauthenticated_calls_get_401(sandbox: Sandbox, case: str) -> None:
    body = orjson.dumps(create_body(new_ref()))
    token = {"Authorization": f"Bearer {TOKEN}"}
    signed = signature_headers(SECRET, body)
    headers = {
        "unsigned": token,
        "bad_signature": {**token, **signed, "webhook-signature": "v1," + "A" * 44},
        "wrong_token": {"Authorization": "Bearer ot_wrong", **signed},
        "no_token": signed,
        "stale": {**token, **signature_headers(SECRET, body, timestamp=int(time.time()) - 3600)},
        "other_secret": {**token, **signature_headers(new_signing_secret(), body)},
    }[case]
    for method, path, payload in (
        ("POST", "/booking/create", body),
        ("POST", "/booking/search", body),
        ("GET", "/booking/info/TB-X", b""),
        ("PUT", "/booking/update", body),
    ):
        if case in ("bad_signature", "stale", "other_secret", "wrong_token", "no_token") and payload != body:
            continue  # those headers were made for ``body``; GET is covered by the unsigned case
        response = await _raw(sandbox, method, path, payload, headers)
        assert response.status_code == 401, (case, path)
        assert set(response.json()) == {"status", "message"} and response.json()["status"] == "Error"


async def test_malformed_requests_get_error_bodies(client: PartnerClient, sandbox: Sandbox) -> None:
    token = {"Authorization": f"Bearer {TOKEN}"}
    not_json = b"{nope"
    signed = {**token, **signature_headers(SECRET, not_json)}
    response = await _raw(sandbox, "POST", "/booking/create", not_json, signed)
    assert response.status_code == 400 and response.json()["status"] == "Error"
    status, body = await create(client, sandbox, create_body(new_ref(), vehicle="spaceship"))
    assert status == 422 and body == {"status": "Error", "message": "Unknown vehicle_id 'spaceship'"}
    status, body = await create(client, sandbox, {"reservation_no": new_ref()})
    assert status == 422 and body["message"].startswith("Invalid request: vehicle_id")
    assert WireResult.model_validate(body).status == "Error"


async def test_info_and_update(client: PartnerClient, sandbox: Sandbox) -> None:
    assert await info(client, sandbox, "TB-NOSUCH") == (404, {"status": "Error", "message": "Booking not found"})
    assert (await cancel(client, sandbox, "TB-NOSUCH"))[0] == 404
    ref = new_ref()
    created = (await create(client, sandbox, create_body(ref)))[1]
    status, pending = await info(client, sandbox, ref)
    assert status == 200 and pending["status"] == "PENDING" and pending["driver_info"] is None
    assert pending["reservation_no"] == created["reservation_no"]
    await asyncio.sleep(APPROVE_AFTER + 0.05)
    approved = WireInfoAnswer.model_validate((await info(client, sandbox, ref))[1])
    assert approved.status == "APPROVED" and approved.driver_info is not None and approved.meeting_point
    assert (await cancel(client, sandbox, ref, status="APPROVED"))[0] == 422
    for _ in range(2):  # cancelling twice is harmless
        status, body = await cancel(client, sandbox, ref)
        assert (status, body) == (200, {"status": "Success", "message": "Booking cancelled."})
        WireResult.model_validate(body)
    cancelled = (await info(client, sandbox, ref))[1]
    assert cancelled["status"] == "CANCELLED" and cancelled["driver_info"] is None


async def test_approval_reaches_the_service_with_the_partner_key(
    client: PartnerClient, sandbox: Sandbox, fake: tuple[FakeService, LiveServer]
) -> None:
    recorder = fake[0]
    ref = new_ref()
    started = time.monotonic()
    await create(client, sandbox, create_body(ref))
    calls = await recorder.wait_for(ref)
    assert len(calls) == 1
    call = calls[0]
    assert call["at"] - started >= APPROVE_AFTER - 0.01
    assert call["authorization"] == f"Bearer {API_KEY}" and call["content_type"] == "application/json"
    body = call["body"]
    assert set(body) == {"reservation_no", "status", "driver_info", "meeting_point"}
    assert body["reservation_no"] == ref and body["status"] == "APPROVED"
    WireDriver.model_validate(body["driver_info"])
    assert body["meeting_point"] == "Arrivals hall of your terminal, by the Costa Coffee, holding a name board"
    assert (await info(client, sandbox, ref))[1]["driver_info"] == body["driver_info"]


async def test_cancel_before_approval_stops_it(
    client: PartnerClient, sandbox: Sandbox, fake: tuple[FakeService, LiveServer]
) -> None:
    ref = new_ref()
    await create(client, sandbox, create_body(ref))
    assert (await cancel(client, sandbox, ref))[0] == 200
    await asyncio.sleep(APPROVE_AFTER * 2)
    assert fake[0].for_booking(ref) == []
    assert (await info(client, sandbox, ref))[1]["status"] == "CANCELLED"


async def test_reverse_call_is_retried_after_a_5xx(
    client: PartnerClient, sandbox: Sandbox, fake: tuple[FakeService, LiveServer]
) -> None:
    ref = new_ref()
    fake[0].fail_first[ref] = 2
    await create(client, sandbox, create_body(ref))
    calls = await fake[0].wait_for(ref, count=3)
    assert len(calls) == 3 and all(c["body"]["status"] == "APPROVED" for c in calls)
    await asyncio.sleep(0.3)
    assert len(fake[0].for_booking(ref)) == 3  # accepted on the third: no more


async def test_info_approves_even_when_the_service_is_unreachable(client: PartnerClient) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    app = create_sandbox_partner_app(_config(f"http://127.0.0.1:{dead_port}"))
    server = await LiveServer(app).start()
    isolated = Sandbox(server, app.state.partner, PartnerEndpoint(2, "isolated", server.url, TOKEN, SECRET))
    ref = new_ref()
    await create(client, isolated, create_body(ref))
    await asyncio.sleep(APPROVE_AFTER + 0.05)
    assert (await info(client, isolated, ref))[1]["status"] == "APPROVED"
    await create(client, isolated, create_body(new_ref(), surname="SLOWAPPROVE"))
    assert isolated.partner.pending_lifecycles >= 1
    await server.stop(graceful=True)
    assert isolated.partner.pending_lifecycles == 0  # the lifespan's shutdown cancelled pending approvals


async def test_decline_trigger(client: PartnerClient, sandbox: Sandbox, fake: tuple[FakeService, LiveServer]) -> None:
    ref = new_ref()
    status, body = await create(client, sandbox, create_body(ref, surname="DECLINE"))
    assert (status, body) == (200, {"status": "DECLINED", "message": "No vehicle available"})
    assert WireCreateAnswer.model_validate(body).status == "DECLINED"
    assert await create(client, sandbox, create_body(ref, surname="DECLINE")) == (200, body)
    await asyncio.sleep(APPROVE_AFTER * 2)
    assert fake[0].for_booking(ref) == []
    assert (await info(client, sandbox, ref))[1]["status"] == "DECLINED"


async def test_partner_down_trigger(client: PartnerClient, sandbox: Sandbox) -> None:
    ref = new_ref()
    body = create_body(ref, surname="PARTNERDOWN")
    outcomes = [await create(client, sandbox, body, webhook_id="msg_down") for _ in range(3)]
    assert [status for status, _ in outcomes] == [503, 503, 200]
    assert outcomes[0][1]["status"] == "Error"
    assert WireCreateAnswer.model_validate(outcomes[2][1]).status == "PENDING"
    assert await create(client, sandbox, body, webhook_id="msg_down") == outcomes[2]
    assert sandbox.partner.effective_creates(ref) == 1 and sandbox.partner.create_attempts(ref) == 4


async def test_partner_cancel_and_no_show_triggers(
    client: PartnerClient, sandbox: Sandbox, fake: tuple[FakeService, LiveServer]
) -> None:
    cancel_ref, no_show_ref = new_ref(), new_ref()
    await create(client, sandbox, create_body(cancel_ref, surname="partnercancel"))
    await create(client, sandbox, create_body(no_show_ref, flight="XX0000"))
    calls = await fake[0].wait_for(cancel_ref, count=2)
    assert [c["body"]["status"] for c in calls] == ["APPROVED", "CANCELLED"]
    assert calls[1]["body"] == {
        "reservation_no": cancel_ref,
        "status": "CANCELLED",
        "cancel_reason": "Driver unavailable",
    }
    assert calls[1]["at"] - calls[0]["at"] >= APPROVE_AFTER - 0.05
    assert (await info(client, sandbox, cancel_ref))[1]["status"] == "CANCELLED"
    no_show = (await info(client, sandbox, no_show_ref))[1]
    assert no_show["status"] == "APPROVED" and no_show["booking_details"]["no_show"] is True
