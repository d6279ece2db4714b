"""``GET /booking-api/booking/messages`` over real HTTP (docs/rules/messages.md#seen): a booking's
messages in the order due, addresses masked, the documented shape (validated against the served
OpenAPI document), another client's booking refused exactly as an unknown one, and the SDK's call."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.test_openapi import response_schema, validate_instance
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.messages.page_helpers import MESSAGES, booking_with_messages
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers_sdk import AsyncTransfersClient, ValidationFailed

KEYS = {"id", "template", "channel", "to", "language", "status", "reason", "scheduled_for", "sent_at"}


async def test_the_list_shows_each_message_masked_in_the_documented_shape(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, _ = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    answer = await http.get(MESSAGES, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert answer.status_code == 200, answer.text
    data: list[dict[str, Any]] = answer.json()["data"]
    assert all(set(m) == KEYS for m in data), data
    assert [(m["template"], m["channel"], m["status"]) for m in data] == [
        ("confirmed", "email", "sent"),
        ("reminder", "email", "scheduled"),
        ("reminder", "sms", "scheduled"),
    ]
    assert {m["to"] for m in data} == {"a***@example.com", "+44 7*** ***456"}
    assert "ada@example.com" not in answer.text and "7911123456" not in answer.text
    assert data[0]["sent_at"] is not None and data[1]["sent_at"] is None
    assert data[1]["scheduled_for"].endswith("+00:00") and data[0]["language"] == "en"
    doc = (await http.get("/openapi.json")).json()
    validate_instance(doc, response_schema(doc, MESSAGES, "get", 200), answer.json())


async def test_a_booking_without_messages_lists_none(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    from tests.incidents.helpers import approved_ride

    key, _, reservation_no, _ = await approved_ride(http, db, make_client, make_partner)
    answer = await http.get(MESSAGES, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert (answer.status_code, answer.json()) == (200, {"data": []})


def _without_request_id(answer: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = answer.json()
    body.pop("request_id", None)
    return body


async def test_another_clients_booking_is_refused_as_an_unknown_one(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, reservation_no, _ = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    _, other_key = await make_client()
    foreign = await http.get(MESSAGES, params={"reservation_no": reservation_no}, headers=bearer(other_key))
    unknown = await http.get(MESSAGES, params={"reservation_no": "TB-ZZZZZZZZZZ"}, headers=bearer(other_key))
    malformed = await http.get(MESSAGES, params={"reservation_no": "TB-NOPE"}, headers=bearer(other_key))
    assert (foreign.status_code, foreign.json()["code"]) == (422, 1201)
    assert _without_request_id(foreign) == _without_request_id(unknown) == _without_request_id(malformed)
    assert "a***@example.com" not in foreign.text
    for params in ({}, {"reservation_no": ""}):
        missing = await http.get(MESSAGES, params=params, headers=bearer(other_key))
        assert (missing.status_code, missing.json()["code"]) == (422, 1200), params
    unauthenticated = await http.get(MESSAGES, params={"reservation_no": reservation_no})
    assert unauthenticated.status_code == 401


async def test_the_sdk_lists_a_bookings_messages(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    key, reservation_no, _ = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.list_messages(reservation_no)
        with pytest.raises(ValidationFailed) as refused:
            await api.list_messages("TB-ZZZZZZZZZZ")
        assert refused.value.code == 1201
    assert [(m.template, m.channel, m.status, m.to) for m in found] == [
        ("confirmed", "email", "sent", "a***@example.com"),
        ("reminder", "email", "scheduled", "a***@example.com"),
        ("reminder", "sms", "scheduled", "+44 7*** ***456"),
    ]
    assert found[0].sent_at is not None and found[1].sent_at is None and found[2].reason is None
    assert isinstance(found[0].id, int) and found[0].scheduled_for is not None
