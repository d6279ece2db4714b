"""Create, read, approve (reverse API), cancel: the whole path over real HTTP with a test partner."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import booking_transitions, bookings, ledger_entries, wallets
from transfers.services import Services

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
REVERSE = "/api/v1/reverse/booking"


async def balance_of(db: Database, client_id: int) -> Decimal:
    async with db.read() as conn:
        value = (await conn.execute(select(wallets.c.balance).where(wallets.c.client_id == client_id))).scalar_one()
    return Decimal(value)


async def search(http: httpx.AsyncClient, key: str, iata: str = "LHR") -> dict[str, Any]:
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": iata})
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def svc_of(service: LiveServer) -> Services:
    services: Services = service.app.state.services
    return services


async def test_full_lifecycle_with_wallet_and_partner(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="200.00")
    partner, partner_id, partner_key = await make_partner(airports=("LGW",), create_status="PENDING")
    found = await search(http, key, "LGW")
    sedan = found["vehicles"][0]
    body = booking_body(
        found["search_id"],
        sedan["vehicle_id"],
        extra_services=[
            {"id": sedan["extra_services"][0]["id"], "quantity": 2},
            {"id": sedan["extra_services"][1]["id"], "quantity": 3},
        ],
    )
    created = await http.post(BOOKING, json=body, headers=bearer(key))
    assert created.status_code == 200, created.text
    answer = created.json()
    assert answer["status"] == "Success"
    booking = answer["booking"]
    # 40.00 + child seat 5.00 x 2 + meet & greet 12.50 once
    assert booking["price"] == {"total": "62.50", "currency": "EUR", "fx": None}
    assert booking["extra_services"] == ["Child seat x 2", "Meet & greet"]
    assert booking["status"] == "PENDING_APPROVAL"  # the partner answered within the 2 s budget
    assert booking["is_cancelable"] is True
    assert booking["driver"] is None and booking["meeting_point"] is None
    assert booking["reservation_no"].startswith("TB-") and len(booking["reservation_no"]) == 13
    assert booking["pickup_location"] == {"name": "London Gatwick Airport", "type": "AIRPORT"}
    assert booking["passengers"] == {"adult": 2, "children": 0, "infant": 0}
    assert booking["pickup_datetime"][11:16] == "14:30"
    assert await balance_of(db, client_id) == Decimal("137.50")
    (create_call,) = partner.calls("/booking/create")
    assert create_call.signature_ok
    sent = create_call.body
    assert sent["reservation_no"] == booking["reservation_no"]
    assert sent["vehicle_id"] == "car-1"
    assert sent["extras"] == [{"id": "child-seat", "quantity": 2}, {"id": "meet", "quantity": 3}]
    assert sent["price"] == {"total": "62.50", "currency": "EUR"}
    assert sent["passenger_info"]["phone"] == "+447911123456"

    reservation_no = booking["reservation_no"]
    read = await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert read.status_code == 200
    assert read.json() == booking

    approve = {
        "reservation_no": reservation_no,
        "status": "APPROVED",
        "driver_info": {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"},
        "meeting_point": "Arrivals, North Terminal",
    }
    approved = await http.put(f"{REVERSE}/update", json=approve, headers=bearer(partner_key))
    assert approved.json() == {"status": "Success", "message": "Booking updated."}
    again = await http.put(f"{REVERSE}/update", json=approve, headers=bearer(partner_key))
    assert again.json()["status"] == "Success"
    read = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
    assert read["status"] == "APPROVED"
    assert read["driver"] == {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"}
    assert read["meeting_point"] == "Arrivals, North Terminal"

    info = await http.get(f"{REVERSE}/info/{reservation_no}", headers=bearer(partner_key))
    assert info.status_code == 200
    assert info.json()["passenger_info"]["surname"] == "Lovelace"
    assert info.json()["booking_details"]["price"] == {"total": "62.50", "currency": "EUR"}

    cancelled = await http.delete(
        BOOKING,
        params={"reservation_no": reservation_no, "cancellation_id": 1, "note": "plans changed"},
        headers=bearer(key),
    )
    assert cancelled.status_code == 200
    assert cancelled.json() == {"status": "Success", "message": "Booking cancelled successfully.", "data": []}
    assert await balance_of(db, client_id) == Decimal("200.00")
    twice = await http.delete(
        BOOKING, params={"reservation_no": reservation_no, "cancellation_id": 1}, headers=bearer(key)
    )
    assert twice.json() == {"status": "Error", "code": 1204, "message": "CANCELLATION_FAILED"}
    assert await balance_of(db, client_id) == Decimal("200.00")

    assert await svc_of(service).dispatcher.run_once() >= 1
    (update_call,) = partner.calls("/booking/update")
    assert update_call.body == {
        "reservation_no": reservation_no,
        "status": "CANCELLED",
        "cancel_reason": "Change of plans",
        "note": "plans changed",
    }
    assert update_call.signature_ok

    async with db.read() as conn:
        row = (await conn.execute(select(bookings).where(bookings.c.reservation_no == reservation_no))).one()
        steps = (
            await conn.execute(
                select(booking_transitions.c.from_status, booking_transitions.c.to_status)
                .where(booking_transitions.c.booking_id == row.id)
                .order_by(booking_transitions.c.id)
            )
        ).all()
        ledger = (
            await conn.execute(
                select(ledger_entries.c.kind, ledger_entries.c.amount)
                .where(ledger_entries.c.booking_id == row.id)
                .order_by(ledger_entries.c.id)
            )
        ).all()
    assert [tuple(s) for s in steps] == [
        (None, "PENDING"),
        ("PENDING", "PENDING_APPROVAL"),
        ("PENDING_APPROVAL", "APPROVED"),
        ("APPROVED", "CANCELLED"),
    ]
    assert [tuple(e) for e in ledger] == [("debit_booking", Decimal("-62.50")), ("credit_refund", Decimal("62.50"))]
    assert row.partner_id == partner_id and row.net_total == Decimal("62.50")


async def test_partner_approving_in_the_create_answer(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    await make_partner(
        airports=("STN",),
        create_status="APPROVED",
        driver={"name": "Jo", "phone": "+447400123457", "plate": "AB12 CDE"},
    )
    found = await search(http, key, "STN")
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    assert booking["status"] == "APPROVED"
    assert booking["driver"] == {"name": "Jo", "phone": "+447400123457", "plate": "AB12 CDE"}


async def test_partner_declining_refunds(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=("LTN",), create_status="DECLINED")
    found = await search(http, key, "LTN")
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    assert booking["status"] == "DECLINED"
    assert booking["is_cancelable"] is False
    assert await balance_of(db, client_id) == Decimal("100.00")


@pytest.mark.parametrize("mode", [{"mode": "error_body"}, {"mode": "status", "status_code": 400}])
async def test_permanent_partner_refusal_declines_and_refunds(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    mode: dict[str, Any],
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("LCY",))
    found = await search(http, key, "LCY")
    partner.mode = mode["mode"]
    partner.status_code = mode.get("status_code", 500)
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    assert booking["status"] == "DECLINED"
    assert await balance_of(db, client_id) == Decimal("100.00")


async def test_partner_down_keeps_booking_pending_until_it_comes_back(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: Any,
) -> None:
    from datetime import timedelta

    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("EDI",))
    found = await search(http, key, "EDI")
    partner.mode, partner.status_code = "status", 503
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    assert booking["status"] == "PENDING"
    assert booking["is_cancelable"] is False
    assert await balance_of(db, client_id) == Decimal("60.00")
    dispatcher = svc_of(service).dispatcher
    # Not due yet: the next attempt waits ~10 s. Judged by what this partner received, not by the count
    # run_once returns: other tests' messages in the shared database may fall due meanwhile.
    await dispatcher.run_once()
    assert len(partner.calls("/booking/create")) == 1
    partner.mode = "ok"
    clock.advance(timedelta(seconds=15))
    assert await dispatcher.run_once() >= 1
    read = (await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))).json()
    assert read["status"] == "PENDING_APPROVAL"
    creates = partner.calls("/booking/create")
    assert len(creates) == 2
    assert creates[0].headers["webhook-id"] == creates[1].headers["webhook-id"]


async def test_reverse_api_scoping_and_refusals(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="100.00")
    _, _, partner_key = await make_partner(airports=("GLA",))
    _, _, other_partner_key = await make_partner(airports=("ABZ",))
    found = await search(http, key, "GLA")
    reservation_no = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()[
        "booking"
    ]["reservation_no"]
    not_found = {"status": "Error", "message": "Booking not found", "data": None, "error_details": None}
    foreign = await http.get(f"{REVERSE}/info/{reservation_no}", headers=bearer(other_partner_key))
    assert foreign.status_code == 404 and foreign.json() == not_found
    missing = await http.get(f"{REVERSE}/info/TB-NOSUCHTHING", headers=bearer(partner_key))
    assert missing.status_code == 404 and missing.json() == not_found
    foreign_update = await http.put(
        f"{REVERSE}/update",
        json={"reservation_no": reservation_no, "status": "CANCELLED"},
        headers=bearer(other_partner_key),
    )
    assert foreign_update.status_code == 404
    for bad in (
        {"reservation_no": reservation_no, "status": "COMPLETED"},
        {"reservation_no": reservation_no, "status": "approved"},
        {"reservation_no": reservation_no},
        {"reservation_no": reservation_no, "status": "APPROVED"},
        {"reservation_no": reservation_no, "status": "APPROVED", "driver_info": {"name": "x", "phone": "+44"}},
    ):
        refused = await http.put(f"{REVERSE}/update", json=bad, headers=bearer(partner_key))
        assert refused.status_code == 422, bad
        assert refused.json()["status"] == "Error" and set(refused.json()) == {"status", "message"}
    assert (
        await http.put(
            f"{REVERSE}/update", json={"reservation_no": reservation_no, "status": "CANCELLED"}, headers=bearer(key)
        )
    ).status_code == 401  # a client key is not a partner key
    cancel = {"reservation_no": reservation_no, "status": "CANCELLED", "cancel_reason": "no driver"}
    for _ in range(3):
        repeated = await http.put(f"{REVERSE}/update", json=cancel, headers=bearer(partner_key))
        assert repeated.json()["status"] == "Success"
    assert await balance_of(db, client_id) == Decimal("100.00")
    approve_late = {
        "reservation_no": reservation_no,
        "status": "APPROVED",
        "driver_info": {"name": "Sam", "phone": "+447400123456", "plate": "X1"},
    }
    late = await http.put(f"{REVERSE}/update", json=approve_late, headers=bearer(partner_key))
    assert late.status_code == 422
    async with db.read() as conn:
        refunds = (
            await conn.execute(
                select(ledger_entries)
                .where(ledger_entries.c.kind == "credit_refund", ledger_entries.c.note.like("cancelled%"))
                .join(bookings, bookings.c.id == ledger_entries.c.booking_id)
                .where(bookings.c.reservation_no == reservation_no)
            )
        ).all()
    assert len(refunds) == 1
