"""Booking a return trip in one call (docs/rules/return-trips.md#create, #legs) over real HTTP, partners on
loopback: two bookings in one transaction, both debits or neither, 1022, each leg its own create with
``trip`` {id, leg}, a partner declining or down for one leg touching that leg only, the pair under one
Idempotency-Key."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, ledger_of, row_of, search_body
from transfers.db.engine import Database
from transfers.db.tables import (
    booking_transitions,
    bookings,
    client_events,
    journal_entries,
    journal_lines,
    ledger_entries,
    outbox,
    wallets,
)

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


async def _return_search(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    body = search_body(return_datetime=future_local(days=17, hour=18, minute=0))
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _count(db: Database, client_id: int) -> int:
    async with db.read() as conn:
        return int((await conn.execute(select(func.count()).where(bookings.c.client_id == client_id))).scalar_one())


async def _moves(db: Database, reservation_no: str) -> list[Decimal]:
    """The signed amounts of a booking's wallet entries, oldest first."""
    return [amount for _, amount in await ledger_of(db, reservation_no)]


async def _balance(db: Database, client_id: int) -> Decimal:
    async with db.read() as conn:
        value = (await conn.execute(select(wallets.c.balance).where(wallets.c.client_id == client_id))).scalar_one()
    return Decimal(value)


async def test_a_pair_is_two_bookings_two_debits_two_creates(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="500.00")
    partner, _, _ = await make_partner(name="Both Ways")
    found = await _return_search(http, key)
    back_id = found["return_vehicles"][1]["vehicle_id"]  # the 70.00 one
    body = booking_body(
        found["search_id"],
        return_vehicle_id=int(back_id),
        return_travel_details={"flight_number": "BA118", "extra_requests": "Late flight"},
    )
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {"status", "booking", "return_booking"} and answer["status"] == "Success"
    out, back = answer["booking"], answer["return_booking"]
    assert out["reservation_no"] != back["reservation_no"]
    assert out["trip"]["id"].startswith("TR-") and out["trip"]["id"] == back["trip"]["id"]
    assert out["trip"] == {"id": out["trip"]["id"], "leg": 1, "other_reservation_no": back["reservation_no"]}
    assert back["trip"] == {"id": out["trip"]["id"], "leg": 2, "other_reservation_no": out["reservation_no"]}
    assert back["pickup_location"]["type"] == "POINT" and back["dropoff_location"]["type"] == "AIRPORT"
    assert back["pickup_datetime"][11:16] == "18:00"
    assert out["flight_number"] == "BA117" and back["flight_number"] == "BA118"
    assert out["price"]["total"] == "40.00" and back["price"]["total"] == "70.00"
    # one debit per leg, the sum off the wallet
    assert await _moves(db, out["reservation_no"]) == [Decimal("-40.00")]
    assert await _moves(db, back["reservation_no"]) == [Decimal("-70.00")]
    assert await _balance(db, client_id) == Decimal("390.00")
    # each leg went to the partner as its own ONEWAY create with trip {id, leg}
    creates = sorted(partner.calls("/booking/create"), key=lambda r: r.body["trip"]["leg"])
    assert [c.body["reservation_no"] for c in creates] == [out["reservation_no"], back["reservation_no"]]
    assert [(c.body["trip"]["id"], c.body["trip"]["leg"]) for c in creates] == [
        (out["trip"]["id"], 1),
        (out["trip"]["id"], 2),
    ]
    assert creates[1].body["trip"]["from"]["type"] == "POINT" and creates[1].body["trip"]["to"]["iata_code"] == "LHR"
    assert creates[1].body["flight_info"] == {"flight_number": "BA118", "extra_requests": "Late flight"}
    assert all(c.signature_ok for c in creates)
    # GET shows each leg with its trip
    got = await http.get(BOOKING, params={"reservation_no": back["reservation_no"]}, headers=bearer(key))
    assert got.json()["trip"] == back["trip"]


async def test_the_pairs_debits_are_written_as_if_one_by_one(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    """The two debits are one wallet UPDATE by their sum (``lifecycle.create_many``), yet each ledger
    entry's balance_after, its journal entry and the entry's balanced lines are those of two moves
    posted one after the other; both legs' audit rows, create messages and booking.created events
    are written."""
    _, key = await make_client(balance="500.00")
    await make_partner(name="Both Ways")
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=int(found["return_vehicles"][1]["vehicle_id"]))
    answer = (await http.post(BOOKING, json=body, headers=bearer(key))).json()
    numbers = [answer["booking"]["reservation_no"], answer["return_booking"]["reservation_no"]]
    e, j, line = ledger_entries.c, journal_entries.c, journal_lines.c
    async with db.read() as conn:
        ids = {
            no: i
            for no, i in (
                await conn.execute(
                    select(bookings.c.reservation_no, bookings.c.id).where(bookings.c.reservation_no.in_(numbers))
                )
            ).all()
        }
        entries = (
            await conn.execute(
                select(e.id, e.booking_id, e.amount, e.balance_after)
                .where(e.booking_id.in_(list(ids.values())))
                .order_by(e.id)
            )
        ).all()
        journal = (
            await conn.execute(
                select(j.id, j.ledger_entry_id, j.booking_id).where(j.booking_id.in_(list(ids.values()))).order_by(j.id)
            )
        ).all()
        lines = (
            await conn.execute(select(line.entry_id, line.amount).where(line.entry_id.in_([r.id for r in journal])))
        ).all()
        created = (
            booking_transitions.c.from_status.is_(None),
            outbox.c.kind == "booking.create",
            client_events.c.type == "booking.created",
        )
        counts = {
            table.name: (
                await conn.execute(
                    select(func.count()).select_from(table).where(table.c.booking_id.in_(list(ids.values())), which)
                )
            ).scalar_one()
            for table, which in zip((booking_transitions, outbox, client_events), created, strict=True)
        }
    assert [(r.booking_id, Decimal(r.amount), Decimal(r.balance_after)) for r in entries] == [
        (ids[numbers[0]], Decimal("-40.00"), Decimal("460.00")),
        (ids[numbers[1]], Decimal("-70.00"), Decimal("390.00")),
    ]
    assert [(r.ledger_entry_id, r.booking_id) for r in journal] == [(r.id, r.booking_id) for r in entries]
    for entry in journal:
        amounts = sorted(Decimal(a) for i, a in lines if i == entry.id)
        assert len(amounts) == 2 and sum(amounts) == 0
    assert counts == {"booking_transitions": 2, "outbox": 2, "client_events": 2}


async def test_a_single_booking_sends_a_null_trip_id_and_leg(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=None)  # null is the same as absent
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"status", "booking"} and response.json()["booking"]["trip"] is None
    (create,) = partner.calls("/booking/create")
    assert create.body["trip"]["id"] is None and create.body["trip"]["leg"] is None


async def test_without_return_details_the_way_back_has_no_flight(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=found["return_vehicles"][0]["vehicle_id"])
    answer = (await http.post(BOOKING, json=body, headers=bearer(key))).json()
    assert answer["return_booking"]["flight_number"] is None
    back = [c for c in partner.calls("/booking/create") if c.body["trip"]["leg"] == 2]
    assert back[0].body["flight_info"]["flight_number"] is None
    got = await http.get(
        BOOKING, params={"reservation_no": answer["return_booking"]["reservation_no"]}, headers=bearer(key)
    )
    assert got.json()["flight_number"] is None


async def test_a_return_flight_is_stored_normalised(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    await make_partner()
    found = await _return_search(http, key)
    body = booking_body(
        found["search_id"],
        return_vehicle_id=found["return_vehicles"][0]["vehicle_id"],
        return_travel_details={"flight_number": "ba 0118"},
    )
    answer = (await http.post(BOOKING, json=body, headers=bearer(key))).json()
    assert answer["return_booking"]["flight_number"] == "BA118"


@pytest.mark.parametrize("pick", ["from_vehicles", "unknown", "true", "float", "word", "negative", "other_search"])
async def test_an_unknown_return_vehicle_is_1022_and_nothing_is_written(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database, pick: str
) -> None:
    client_id, key = await make_client(balance="500.00")
    partner, _, _ = await make_partner()
    found = await _return_search(http, key)
    other = await _return_search(http, key)
    value: Any = {
        "from_vehicles": found["vehicles"][0]["vehicle_id"],
        "unknown": 99,
        "true": True,
        "float": 3.5,
        "word": "three",
        "negative": -3,
        "other_search": int(other["return_vehicles"][0]["vehicle_id"]) + 10,
    }[pick]
    body = booking_body(found["search_id"], return_vehicle_id=value)
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 422, response.text
    assert response.json() == {"status": "Error", "code": 1022, "message": "RETURN_VEHICLE_ID_INVALID"}
    assert await _count(db, client_id) == 0 and await _balance(db, client_id) == Decimal("500.00")
    assert partner.calls("/booking/create") == []


async def test_a_one_way_search_has_no_return_vehicle(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    await make_partner()
    found = (await http.post(SEARCH, json=search_body(), headers=bearer(key))).json()
    body = booking_body(found["search_id"], return_vehicle_id=2)
    assert (await http.post(BOOKING, json=body, headers=bearer(key))).json()["code"] == 1022


async def test_1022_comes_after_the_way_outs_codes_and_before_1101(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="1.00")
    await make_partner()
    found = await _return_search(http, key)
    sid = found["search_id"]
    cases = [
        (booking_body("s_nosuch", return_vehicle_id=99), 1002),
        (booking_body(sid, vehicle_id=3, return_vehicle_id=99), 1004),  # a return vehicle as vehicle_id
        (booking_body(sid, passenger=None, return_vehicle_id=99), 1005),
        (booking_body(sid, return_vehicle_id=99), 1022),
        (booking_body(sid, return_vehicle_id=3), 1101),  # everything valid: the balance last
    ]
    for body, code in cases:
        assert (await http.post(BOOKING, json=body, headers=bearer(key))).json()["code"] == code, body


async def test_a_wallet_enough_for_one_leg_but_not_both_is_1101_and_neither(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], vehicle_id=1, return_vehicle_id=4)  # 40 + 70 > 100
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 422
    assert response.json() == {"status": "Error", "code": 1101, "message": "WALLET_BALANCE_INSUFFICIENT"}
    assert await _count(db, client_id) == 0 and await _balance(db, client_id) == Decimal("100.00")
    assert partner.calls("/booking/create") == []
    fits = booking_body(found["search_id"], vehicle_id=1, return_vehicle_id=3)  # 40 + 40 fits
    assert (await http.post(BOOKING, json=fits, headers=bearer(key))).status_code == 200
    assert await _balance(db, client_id) == Decimal("20.00")


async def test_a_partner_declining_one_leg_leaves_the_other(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="500.00")
    await make_partner(decline_leg=2)
    found = await _return_search(http, key)
    answer = (
        await http.post(BOOKING, json=booking_body(found["search_id"], return_vehicle_id=3), headers=bearer(key))
    ).json()
    out, back = answer["booking"], answer["return_booking"]
    assert out["status"] == "PENDING_APPROVAL" and back["status"] == "DECLINED"
    assert await _moves(db, back["reservation_no"]) == [Decimal("-40.00"), Decimal("40.00")]  # refunded
    assert await _moves(db, out["reservation_no"]) == [Decimal("-40.00")]
    assert (await row_of(db, out["reservation_no"]))["status"] == "PENDING_APPROVAL"
    assert await _balance(db, client_id) == Decimal("460.00")


async def test_a_partner_down_for_one_leg_leaves_that_leg_pending(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    _, key = await make_client(balance="500.00")
    await make_partner(down_for_leg=1)
    found = await _return_search(http, key)
    answer = (
        await http.post(BOOKING, json=booking_body(found["search_id"], return_vehicle_id=3), headers=bearer(key))
    ).json()
    assert answer["booking"]["status"] == "PENDING"  # retried by the delivery workers
    assert answer["return_booking"]["status"] == "PENDING_APPROVAL"


async def test_cancelling_one_leg_never_cancels_the_other(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    _, key = await make_client(balance="500.00")
    await make_partner()
    found = await _return_search(http, key)
    answer = (
        await http.post(BOOKING, json=booking_body(found["search_id"], return_vehicle_id=3), headers=bearer(key))
    ).json()
    out, back = answer["booking"], answer["return_booking"]
    cancelled = await http.delete(
        BOOKING, params={"reservation_no": back["reservation_no"], "cancellation_id": 1}, headers=bearer(key)
    )
    assert cancelled.status_code == 200, cancelled.text
    assert (await row_of(db, back["reservation_no"]))["status"] == "CANCELLED"
    assert (await row_of(db, out["reservation_no"]))["status"] == "PENDING_APPROVAL"


async def test_one_idempotency_key_covers_the_pair(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="500.00")
    partner, _, _ = await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=3)
    headers = {**bearer(key), "Idempotency-Key": "pair-key-1"}
    first = await http.post(BOOKING, json=body, headers=headers)
    again = await http.post(BOOKING, json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("idempotent-replayed") == "true"
    assert first.json() == again.json()
    assert await _count(db, client_id) == 2
    assert len(partner.calls("/booking/create")) == 2


async def test_the_list_by_trip_id_shows_both_legs_and_only_the_callers(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="500.00")
    _, stranger = await make_client(balance="500.00")
    await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=3)
    answer = (await http.post(BOOKING, json=body, headers=bearer(key))).json()
    trip_id = answer["booking"]["trip"]["id"]
    listed = await http.get("/api/v1/booking-api/bookings", params={"trip_id": trip_id}, headers=bearer(key))
    assert listed.status_code == 200, listed.text
    assert sorted(b["reservation_no"] for b in listed.json()["data"]) == sorted(
        [answer["booking"]["reservation_no"], answer["return_booking"]["reservation_no"]]
    )
    foreign = await http.get("/api/v1/booking-api/bookings", params={"trip_id": trip_id}, headers=bearer(stranger))
    assert foreign.json()["data"] == []
    for bad in ("", "x" * 300, "TR-\x00"):
        refused = await http.get("/api/v1/booking-api/bookings", params={"trip_id": bad}, headers=bearer(key))
        assert refused.status_code == 422 and refused.json()["code"] == "INVALID_FILTER"


async def test_amending_one_leg_leaves_the_other_and_only_the_way_out_follows_a_flight(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    service: Any,
) -> None:
    _, key = await make_client(balance="500.00")
    partner, _, _ = await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=3, return_travel_details={"flight_number": "BA118"})
    answer = (await http.post(BOOKING, json=body, headers=bearer(key))).json()
    out, back = answer["booking"], answer["return_booking"]
    new_back = future_local(days=17, hour=19, minute=30)
    amended = await http.patch(
        BOOKING,
        params={"reservation_no": back["reservation_no"]},
        json={"pickup_datetime": new_back, "travel_details": {"flight_number": "BA120"}},
        headers=bearer(key),
    )
    assert amended.status_code == 202, amended.text
    dispatcher = service.app.state.services.dispatcher
    for _ in range(20):  # bounded: the dispatcher sends what is due (other tests may have left messages)
        if [c for c in partner.calls("/booking/update") if c.body.get("status") == "AMENDED"]:
            break
        await dispatcher.run_once(limit=200)
    (call,) = [c for c in partner.calls("/booking/update") if c.body.get("status") == "AMENDED"]
    assert call.body["reservation_no"] == back["reservation_no"]
    assert (call.body["trip"]["id"], call.body["trip"]["leg"]) == (back["trip"]["id"], 2)
    after_back = await row_of(db, back["reservation_no"])
    after_out = await row_of(db, out["reservation_no"])
    assert after_back["flight_number"] == "BA120"
    assert after_out["flight_number"] == "BA117" and after_out["amendment"] is None
    assert after_out["pickup_at"] != after_back["pickup_at"]
    # the way out picks up at the airport, so its arrival flight is watched; the way back picks up at a point
    assert after_out["flight_watch_id"] is not None and after_back["flight_watch_id"] is None


@pytest.mark.parametrize(
    ("details", "code"),
    [
        ("BA118", 1012),
        ([{"flight_number": "BA118"}], 1012),
        (True, 1012),
        ({"extra_requests": 5}, 1012),
        ({"extra_requests": "x" * 5000}, 1012),
        ({"flight_number": ""}, 1013),
        ({"flight_number": "   "}, 1013),
        ({"flight_number": 118}, 1013),
        ({"flight_number": "B" * 300}, 1013),
    ],
)
async def test_bad_return_travel_details_answer_the_travel_details_codes(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    details: Any,
    code: int,
) -> None:
    client_id, key = await make_client(balance="500.00")
    await make_partner()
    found = await _return_search(http, key)
    body = booking_body(found["search_id"], return_vehicle_id=3, return_travel_details=details)
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 422 and response.json()["code"] == code, response.text
    assert await _count(db, client_id) == 0


async def test_luggage_that_does_not_fit_the_return_vehicle_is_refused(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="500.00")
    await make_partner()
    found = await _return_search(http, key)
    sedan_back = next(v for v in found["return_vehicles"] if v["max_passengers"] == "3")
    roomy_out = max(found["vehicles"], key=lambda v: int(v["suitcases"]))
    too_many = int(sedan_back["suitcases"]) + 1
    assert too_many <= int(roomy_out["suitcases"])
    body = booking_body(
        found["search_id"], roomy_out["vehicle_id"], return_vehicle_id=sedan_back["vehicle_id"], suitcase=too_many
    )
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 422 and response.json()["code"] == 1015, response.text
    assert await _count(db, client_id) == 0
