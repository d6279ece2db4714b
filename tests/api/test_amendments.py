"""docs/rules/cancellation.md, amendments: ``PATCH /booking`` against a recording partner over real loopback HTTP.
The ``AMENDED`` update carries the changes and the whole new trip and is signed; Success applies,
Error rejects, an undelivered amendment is rejected at its deadline; one at a time (409);
``Idempotency-Key`` replays; after the free window ``AMENDMENT_NOT_ALLOWED``; every field's SPEC
code; unamendable fields refused by name; a cancel while pending rejects the amendment."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import FakePartner, default_vehicles
from tests.helpers import booking_body, row_of, search_body
from tests.servers import LiveServer
from transfers.bookings.amend import EXPIRED_MESSAGE
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, outbox
from transfers.errors import Code
from transfers.jobs.scheduled import expire_deliveries

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
LONDON = ZoneInfo("Europe/London")


def local(days: int, hour: int = 14, minute: int = 30) -> str:
    return (
        (datetime.now(UTC) + timedelta(days=days))
        .astimezone(LONDON)
        .replace(hour=hour, minute=minute)
        .strftime("%Y-%m-%d %H:%M")
    )


async def book(http: httpx.AsyncClient, key: str, *, days: int = 10) -> dict[str, Any]:
    found = await http.post(SEARCH, json=search_body(pickup_datetime=local(days)), headers=bearer(key))
    assert found.status_code == 200, found.text
    created = await http.post(BOOKING, json=booking_body(found.json()["search_id"], "1"), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    assert booking["status"] == "PENDING_APPROVAL"
    return booking


async def amend(
    http: httpx.AsyncClient, key: str, reservation_no: str | None, body: Any, idempotency_key: str | None = None
) -> httpx.Response:
    headers = bearer(key) | ({"Idempotency-Key": idempotency_key} if idempotency_key else {})
    params = {} if reservation_no is None else {"reservation_no": reservation_no}
    if isinstance(body, bytes):
        return await http.patch(BOOKING, params=params, content=body, headers=headers)
    return await http.patch(BOOKING, params=params, json=body, headers=headers)


async def get(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    response = await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert response.status_code == 200
    answer: dict[str, Any] = response.json()
    return answer


async def amend_messages(db: Database, reservation_no: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = (
            (
                await conn.execute(
                    select(outbox)
                    .join(bookings, bookings.c.id == outbox.c.booking_id)
                    .where(bookings.c.reservation_no == reservation_no, outbox.c.kind == "booking.amend")
                )
            )
            .mappings()
            .all()
        )
    return [dict(r) for r in rows]


async def amended_calls(service: LiveServer, partner: FakePartner, count: int = 1) -> list[Any]:
    """Runs the dispatcher (other tests may have left due messages) until ``partner`` saw ``count``
    AMENDED updates."""
    dispatcher = service.app.state.services.dispatcher

    def seen() -> list[Any]:
        return [c for c in partner.calls("/booking/update") if c.body.get("status") == "AMENDED"]

    for _ in range(20):
        if len(seen()) >= count:
            break
        await dispatcher.run_once(limit=200)
    return seen()


async def test_success_applies_the_changes_sent_with_the_whole_new_trip(
    http: httpx.AsyncClient, db: Database, service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    partner, _, _ = await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    reservation_no = booking["reservation_no"]
    new_pickup = local(11, 9, 5)
    response = await amend(
        http,
        key,
        reservation_no,
        {
            "pickup_datetime": new_pickup,
            "passenger": {"surname": "Byron-Núñez 山田"},
            "travel_details": {"flight_number": "BA999", "extra_requests": "Two child seats"},
        },
    )
    assert response.status_code == 202, response.text
    answered = response.json()
    assert answered["status"] == "Success"
    pending = answered["booking"]
    expected_pickup = datetime.strptime(new_pickup, "%Y-%m-%d %H:%M").replace(tzinfo=LONDON).isoformat()
    changes = {
        "pickup_datetime": expected_pickup,
        "passenger": {"surname": "Byron-Núñez 山田"},
        "travel_details": {"extra_requests": "Two child seats", "flight_number": "BA999"},
    }
    assert pending["amendment"]["status"] == "PENDING" and pending["amendment"]["changes"] == changes
    assert pending["amendment"]["decided_at"] is None and pending["amendment"]["message"] is None
    # nothing changes until the partner agrees
    assert (pending["pickup_datetime"], pending["passenger"]["surname"], pending["flight_number"]) == (
        booking["pickup_datetime"],
        "Lovelace",
        "BA117",
    )
    (call,) = await amended_calls(service, partner)
    assert call.method == "PUT" and call.signature_ok
    body = call.body
    assert body["reservation_no"] == reservation_no and body["status"] == "AMENDED"
    assert body["changes"] == changes
    assert body["trip"]["date"] == expected_pickup
    assert body["trip"]["passengers"] == {"adult": 2, "children": 0, "infant": 0}
    assert body["trip"]["from"]["iata_code"] == "LHR" and body["trip"]["to"]["type"] == "POINT"
    assert body["passenger_info"] == {
        "name": "Ada",
        "surname": "Byron-Núñez 山田",
        "email": "ada@example.com",
        "phone": "+447911123456",
    }
    assert body["flight_info"] == {"flight_number": "BA999", "extra_requests": "Two child seats"}
    assert body["vehicle_id"] == "car-1" and body["extras"] == []
    applied = await get(http, key, reservation_no)
    assert applied["amendment"]["status"] == "APPLIED" and applied["amendment"]["decided_at"] is not None
    assert applied["pickup_datetime"] == expected_pickup
    assert applied["passenger"]["surname"] == "Byron-Núñez 山田" and applied["flight_number"] == "BA999"
    assert applied["price"] == booking["price"]  # the price never changes
    row = await row_of(db, reservation_no)
    assert row["extra_requests"] == "Two child seats"
    # the next amendment may follow once this one is settled
    again = await amend(http, key, reservation_no, {"passenger": {"name": "Augusta"}})
    assert again.status_code == 202, again.text


async def test_an_error_answer_rejects_and_leaves_the_booking_as_it_was(
    http: httpx.AsyncClient, db: Database, service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    partner, _, _ = await make_partner(amend_status="Error", amend_message="No driver free at that hour")
    _, key = await make_client()
    booking = await book(http, key)
    response = await amend(http, key, booking["reservation_no"], {"pickup_datetime": local(12)})
    assert response.status_code == 202
    assert len(await amended_calls(service, partner)) == 1
    after = await get(http, key, booking["reservation_no"])
    assert after["amendment"]["status"] == "REJECTED"
    assert after["amendment"]["message"] == "No driver free at that hour"
    assert after["pickup_datetime"] == booking["pickup_datetime"]
    (message,) = await amend_messages(db, booking["reservation_no"])
    assert message["status"] == "failed"


async def test_an_undelivered_amendment_is_rejected_at_its_deadline(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner, _, _ = await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    partner.mode, partner.status_code = "status", 503
    assert (
        await amend(http, key, booking["reservation_no"], {"passenger": {"phone": "+33612345678"}})
    ).status_code == 202
    (message,) = await amend_messages(db, booking["reservation_no"])
    clock.offset = message["deadline_at"] - datetime.now(UTC) + timedelta(seconds=1)
    await expire_deliveries(service.app.state.services)
    after = await get(http, key, booking["reservation_no"])
    assert after["amendment"]["status"] == "REJECTED" and after["amendment"]["message"] == EXPIRED_MESSAGE
    assert after["passenger"]["phone"] == "+447911123456"


async def test_one_amendment_at_a_time_and_idempotent_replays(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    reservation_no = booking["reservation_no"]
    body = {"travel_details": {"flight_number": "AF1234"}}
    first = await amend(http, key, reservation_no, body, idempotency_key="amend-1")
    assert first.status_code == 202
    replay = await amend(http, key, reservation_no, body, idempotency_key="amend-1")
    assert (replay.status_code, replay.json()) == (202, first.json())
    assert replay.headers["Idempotent-Replayed"] == "true"
    reused = await amend(
        http, key, reservation_no, {"travel_details": {"flight_number": "AF9"}}, idempotency_key="amend-1"
    )
    assert (reused.status_code, reused.json()["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")
    second = await amend(http, key, reservation_no, {"passenger": {"name": "Grace"}})
    assert (second.status_code, second.json()["code"]) == (409, "AMENDMENT_IN_PROGRESS")
    assert len(await amend_messages(db, reservation_no)) == 1


async def test_concurrent_amendments_one_wins(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    answers = await asyncio.gather(
        *(amend(http, key, booking["reservation_no"], {"passenger": {"name": f"N{i}"}}) for i in range(5))
    )
    assert sorted(a.status_code for a in answers) == [202, 409, 409, 409, 409]
    assert len(await amend_messages(db, booking["reservation_no"])) == 1


async def test_amendments_close_with_the_free_cancellation_window(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    vehicles = default_vehicles()
    vehicles[0]["cancellation_policy"] = [
        {"hours_before_pickup": 48, "fee_percent": 0},
        {"hours_before_pickup": 24, "fee_percent": 50},
        {"hours_before_pickup": 0, "fee_percent": 100},
    ]
    await make_partner(vehicles=vehicles)
    _, key = await make_client()
    booking = await book(http, key, days=5)
    pickup_at = (await row_of(db, booking["reservation_no"]))["pickup_at"]
    clock.offset = pickup_at - timedelta(hours=47) - datetime.now(UTC)
    late = await amend(http, key, booking["reservation_no"], {"passenger": {"name": "Late"}})
    assert (late.status_code, late.json()["code"]) == (422, "AMENDMENT_NOT_ALLOWED")
    assert "free cancellation window" in late.json()["message"]
    clock.offset = pickup_at - timedelta(hours=49) - datetime.now(UTC)
    assert (await amend(http, key, booking["reservation_no"], {"passenger": {"name": "Early"}})).status_code == 202


async def test_only_acknowledged_or_approved_bookings_can_be_amended(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    partner, _, _ = await make_partner()
    _, key = await make_client()
    cancelled = await book(http, key)
    await http.delete(
        BOOKING, params={"reservation_no": cancelled["reservation_no"], "cancellation_id": 1}, headers=bearer(key)
    )
    refused = await amend(http, key, cancelled["reservation_no"], {"passenger": {"name": "X"}})
    assert (refused.status_code, refused.json()["code"]) == (422, "AMENDMENT_NOT_ALLOWED")
    assert "CANCELLED" in refused.json()["message"]
    partner.create_status = "DECLINED"
    found = await http.post(SEARCH, json=search_body(), headers=bearer(key))
    declined = (
        await http.post(BOOKING, json=booking_body(found.json()["search_id"], "1"), headers=bearer(key))
    ).json()["booking"]
    refused = await amend(http, key, declined["reservation_no"], {"passenger": {"name": "X"}})
    assert (refused.status_code, refused.json()["code"]) == (422, "AMENDMENT_NOT_ALLOWED")


async def test_a_cancel_while_pending_cancels_and_rejects_the_amendment(
    http: httpx.AsyncClient, db: Database, service: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    partner, _, _ = await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    reservation_no = booking["reservation_no"]
    assert (await amend(http, key, reservation_no, {"passenger": {"name": "Never"}})).status_code == 202
    cancelled = await http.delete(
        BOOKING, params={"reservation_no": reservation_no, "cancellation_id": 1}, headers=bearer(key)
    )
    assert cancelled.status_code == 200
    after = await get(http, key, reservation_no)
    assert after["status"] == "CANCELLED" and after["passenger"]["name"] == "Ada"
    assert after["amendment"]["status"] == "REJECTED"
    assert "cancelled" in after["amendment"]["message"]
    (message,) = await amend_messages(db, reservation_no)
    assert message["status"] == "failed" and message["last_error"].startswith("withdrawn")
    dispatcher = service.app.state.services.dispatcher
    for _ in range(5):
        await dispatcher.run_once(limit=200)
    statuses = [c.body["status"] for c in partner.calls("/booking/update")]
    assert statuses == ["CANCELLED"]  # the partner never hears of the withdrawn amendment


BAD_INPUT: list[tuple[Any, Any]] = [
    ({"pickup_datetime": None}, 1316),
    ({"pickup_datetime": ""}, 1316),
    ({"pickup_datetime": "tomorrow"}, 1317),
    ({"pickup_datetime": 20261201}, 1317),
    ({"pickup_datetime": True}, 1317),
    ({"pickup_datetime": "2026-02-30 10:00"}, 1317),
    ({"pickup_datetime": "soon"}, 1317),
    ({"passenger": "Ada"}, 1005),
    ({"passenger": None}, 1005),
    ({"passenger": []}, 1005),
    ({"passenger": {"name": ""}}, 1006),
    ({"passenger": {"name": None}}, 1006),
    ({"passenger": {"name": 5}}, 1006),
    ({"passenger": {"name": "x" * 10_000}}, 1006),
    ({"passenger": {"name": "a\x00b"}}, 1006),
    ({"passenger": {"surname": " "}}, 1007),
    ({"passenger": {"surname": False}}, 1007),
    ({"passenger": {"phone": ""}}, 1008),
    ({"passenger": {"phone": None}}, 1008),
    ({"passenger": {"phone": "123"}}, 1009),
    ({"passenger": {"phone": "+4479111234567890"}}, 1009),
    ({"passenger": {"phone": 447911123456}}, 1009),
    ({"passenger": {"email": ""}}, 1010),
    ({"passenger": {"email": "not-an-email"}}, 1011),
    ({"passenger": {"name": "", "phone": "x"}}, 1006),  # the 7.2 table's order
    ({"travel_details": "BA1"}, 1012),
    ({"travel_details": {"extra_requests": 5}}, 1012),
    ({"travel_details": {"extra_requests": "x" * 1001}}, 1012),
    ({"travel_details": {"flight_number": ""}}, 1013),
    ({"travel_details": {"flight_number": None}}, 1013),
    ({"travel_details": {"flight_number": "x" * 65}}, 1013),
    ({"pickup_datetime": "", "passenger": {"name": ""}}, 1316),
]


@pytest.mark.parametrize(("body", "code"), BAD_INPUT)
async def test_every_field_gets_its_spec_code_and_nothing_is_written(
    body: Any,
    code: int,
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    response = await amend(http, key, booking["reservation_no"], body)
    assert (response.status_code, response.json()) == (
        422,
        {"status": "Error", "code": code, "message": Code(code).name},
    ), body
    assert await amend_messages(db, booking["reservation_no"]) == []
    assert (await get(http, key, booking["reservation_no"]))["amendment"] is None


@pytest.mark.parametrize(
    "when",
    [
        timedelta(hours=1),  # inside the 2 h lead time
        timedelta(days=400),  # beyond 365 days
        -timedelta(days=1),  # in the past
    ],
)
async def test_a_pickup_outside_1317s_window(
    when: timedelta, http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    moment = (datetime.now(UTC) + when).replace(microsecond=0).isoformat()
    response = await amend(http, key, booking["reservation_no"], {"pickup_datetime": moment})
    assert (response.status_code, response.json()["code"]) == (422, 1317)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"vehicle_id": 2}, "vehicle_id"),
        ({"extra_services": [{"id": 1}]}, "extra_services"),
        ({"pickup_location": {"type": "AIRPORT", "iata_code": "LGW"}}, "pickup_location"),
        ({"dropoff_location": {}}, "dropoff_location"),
        ({"travelers": {"adult": 3}}, "travelers"),
        ({"suitcase": 2}, "suitcase"),
        ({"small_bags": 0}, "small_bags"),
        ({"search_id": "s_x"}, "search_id"),
        ({"passenger": {"name": "Ok"}, "extra_services": None}, "extra_services"),
        ({"favourite_colour": "blue"}, "favourite_colour"),
        ({"passenger": {"age": 30}}, "passenger.age"),
        ({"travel_details": {"terminal": "5"}}, "travel_details.terminal"),
    ],
)
async def test_unamendable_fields_are_refused_by_name(
    body: dict[str, Any],
    named: str,
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key)
    response = await amend(http, key, booking["reservation_no"], body)
    assert response.status_code == 422 and response.json()["code"] == "FIELD_NOT_AMENDABLE"
    assert f"'{named}'" in response.json()["message"]
    assert await amend_messages(db, booking["reservation_no"]) == []


async def test_reservation_permission_body_and_empty_changes(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    await make_partner()
    _, key = await make_client()
    _, other_key = await make_client()
    _, no_create_key = await make_client(can_create=False)
    booking = await book(http, key)
    reservation_no = booking["reservation_no"]
    change = {"passenger": {"name": "Grace"}}
    for params, code in ((None, 1400), ("", 1400), ("TB-NOSUCH0000", 1401)):
        response = await amend(http, key, params, change)
        assert (response.status_code, response.json()["code"]) == (422, code)
    foreign = await amend(http, other_key, reservation_no, change)
    assert (foreign.status_code, foreign.json()["code"]) == (422, 1401)
    denied = await amend(http, no_create_key, reservation_no, b"not json")
    assert (denied.status_code, denied.json()["code"]) == (422, 1100)
    for raw in (b"not json", b"[1, 2]", b""):
        malformed = await amend(http, key, reservation_no, raw)
        assert (malformed.status_code, malformed.json()["code"]) == (400, "MALFORMED_JSON")
    for body in ({}, {"passenger": {"name": "Ada"}}, {"travel_details": {"flight_number": "BA117"}}, {"passenger": {}}):
        same = await amend(http, key, reservation_no, body)
        assert (same.status_code, same.json()["code"]) == (422, "AMENDMENT_EMPTY"), body
    assert (await amend(http, key, reservation_no, change)).status_code == 202


async def test_a_given_up_amendment_is_never_retried(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    from transfers.outbox.retry import RetryRefused, retry_message

    partner, _, _ = await make_partner(amend_status="Error", amend_message="Fully booked")
    _, key = await make_client()
    booking = await book(http, key)
    await amend(http, key, booking["reservation_no"], {"passenger": {"name": "Grace"}})
    assert len(await amended_calls(service, partner)) == 1
    (message,) = await amend_messages(db, booking["reservation_no"])
    assert message["status"] == "failed"
    with pytest.raises(RetryRefused, match=r"amendment of booking .* was rejected"):
        await retry_message(db, clock, message["id"], before_pickup_hours=1, actor="tests")
    (unchanged,) = await amend_messages(db, booking["reservation_no"])
    assert unchanged["status"] == "failed"
