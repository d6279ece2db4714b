"""A hosted partner in the search fan-out and the booking path (docs/rules/hosted-partners.md), over real HTTP."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import httpx
from sqlalchemy import select

from tests.api.test_booking_lifecycle import balance_of, svc_of
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import LONDON, booking_body, future_local, ledger_of, row_of, search_body
from tests.hosted.conftest import HostedFactory, example_card
from tests.servers import LiveServer
from transfers import money
from transfers.bookings.models import Booking
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import hosted_capacity, outbox, partner_emails
from transfers.hosted.mail import compose
from transfers.jobs import scheduled

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
# Manchester city centre, 14 km from MAN by great circle.
MAN_CENTRE = {"type": "POINT", "lat": 53.4808, "lng": -2.2426, "name": "Piccadilly Gardens, Manchester"}


async def search_at(
    http: httpx.AsyncClient, key: str, iata: str, *, point: dict[str, Any] | None = None, **overrides: Any
) -> dict[str, Any]:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": iata}, dropoff_location=point or MAN_CENTRE, **overrides
    )
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def company(answer: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [v for v in answer["vehicles"] if v["company"] == name]


async def test_a_hosted_partner_answers_in_the_same_fan_out_with_its_markup(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    make_hosted: HostedFactory,
) -> None:
    _, key = await make_client()
    await make_partner(airports=("MAN",), name="Server Cars")
    await make_hosted(airports=("MAN",), markup="10", name="Hosted Manchester")
    found = await search_at(http, key, "MAN")
    assert found["distance_km"] == 14
    hosted = company(found, "Hosted Manchester")
    server = company(found, "Server Cars")
    assert hosted and server  # both in one answer
    # sedan: max(40.00, 10 + 1.20 x 14 = 26.80) = 40.00, +10 % = 44.00; van: max(60, 20 + 1.8 x 14 = 45.2) = 60 -> 66
    assert [(v["type"], v["price"], v["currency"]) for v in hosted] == [
        ("SEDAN", 44.0, "EUR"),
        ("MINIVAN", 66.0, "EUR"),
    ]
    sedan = hosted[0]
    assert (sedan["make"], sedan["model"], sedan["max_passengers"], sedan["suitcases"]) == (
        "Toyota",
        "Corolla",
        "3",
        "2",
    )
    assert [(e["name"], e["price"], e["pricing_type"]) for e in sedan["extra_services"]] == [
        ("Child seat", 8.8, "PER_ITEM"),
        ("Meet & greet", 13.2, "PER_BOOKING"),
    ]
    prices = [v["price"] for v in found["vehicles"]]
    assert prices == sorted(prices)  # sorted with everyone else's
    # the card's cancellation policy is sold with every vehicle of the card (docs/rules/cancellation.md,
    # docs/rules/hosted-partners.md)
    assert sedan["cancellation_policy"]["tiers"] == [
        {"hours_before_pickup": 24, "fee_percent": 0},
        {"hours_before_pickup": 0, "fee_percent": 100},
    ]
    assert sedan["cancellation_policy"]["free_until"] is not None


async def test_party_size_currency_and_night_surcharge(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
) -> None:
    _, eur = await make_client()
    _, gbp = await make_client(currency="GBP")
    await make_hosted(airports=("BRS",), name="Hosted Bristol")
    point = {"type": "POINT", "lat": 51.4545, "lng": -2.5879, "name": "Bristol centre"}  # 11 km
    four = await search_at(http, eur, "BRS", point=point, travelers={"adult": 4, "children": 0, "infant": 0})
    assert [v["type"] for v in company(four, "Hosted Bristol")] == ["MINIVAN"]  # the sedan seats 3
    # the card is in EUR: a GBP client's search converts it line by line (docs/rules/fx.md#search, markup 0)
    day = company(await search_at(http, eur, "BRS", point=point), "Hosted Bristol")
    in_gbp = company(await search_at(http, gbp, "BRS", point=point), "Hosted Bristol")
    assert [v["currency"] for v in in_gbp] == ["GBP"] * len(day) and len(day) >= 1
    for euros, pounds in zip(day, in_gbp, strict=True):
        assert pounds["fx"] is not None and pounds["fx"]["rate"] == "0.8563" and pounds["fx"]["source"] == "sandbox"
        assert Decimal(str(pounds["price"])) == (Decimal(str(euros["price"])) * Decimal("0.8563")).quantize(
            Decimal("0.01"), ROUND_HALF_UP
        )
    night = await search_at(http, eur, "BRS", point=point, pickup_datetime=future_local(hour=23, minute=15))
    assert [v["price"] for v in company(night, "Hosted Bristol")] == [48.0, 60.0]  # sedan +20 % at night only


async def test_blackout_dates_and_lead_time_in_the_airports_zone(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
) -> None:
    _, key = await make_client()
    day = future_local(days=12)[:10]
    await make_hosted(
        airports=("EDI",), card=example_card(blackout_dates=[day], min_lead_hours=72), name="Hosted Edinburgh"
    )
    point = {"type": "POINT", "lat": 55.9533, "lng": -3.1883, "name": "Edinburgh"}
    assert (
        company(await search_at(http, key, "EDI", point=point, pickup_datetime=f"{day} 00:05"), "Hosted Edinburgh")
        == []
    )
    assert (
        company(await search_at(http, key, "EDI", point=point, pickup_datetime=f"{day} 23:55"), "Hosted Edinburgh")
        == []
    )
    assert company(
        await search_at(http, key, "EDI", point=point, pickup_datetime=future_local(days=13)), "Hosted Edinburgh"
    )
    assert (
        company(
            await search_at(http, key, "EDI", point=point, pickup_datetime=future_local(days=2)), "Hosted Edinburgh"
        )
        == []
    )  # under 72 h ahead


async def test_booking_waits_in_new_without_any_http_call_and_mails_the_partner(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="500.00")
    partner_id = await make_hosted(airports=("NCL",), name="Hosted Newcastle")
    point = {"type": "POINT", "lat": 54.9783, "lng": -1.6178, "name": "Newcastle"}
    found = await search_at(http, key, "NCL", point=point)
    sedan = company(found, "Hosted Newcastle")[0]
    created = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    assert booking["status"] == "PENDING_APPROVAL"  # answered in-process within the request
    assert await balance_of(db, client_id) == Decimal("500.00") - Decimal(booking["price"]["total"])
    row = await row_of(db, booking["reservation_no"])
    async with db.read() as conn:
        messages = (await conn.execute(select(outbox).where(outbox.c.booking_id == row["id"]))).mappings().all()
        mails = (
            (await conn.execute(select(partner_emails).where(partner_emails.c.booking_id == row["id"])))
            .mappings()
            .all()
        )
        seats = (
            (await conn.execute(select(hosted_capacity.c.booked).where(hosted_capacity.c.partner_id == partner_id)))
            .scalars()
            .all()
        )
    assert [(m["kind"], m["status"], m["attempts"]) for m in messages] == [("booking.create", "delivered", 1)]
    assert [(m["kind"], m["status"]) for m in mails] == [("booking.new", "pending")]
    assert seats == [1]


async def test_the_last_seat_goes_to_one_booking_and_a_cancellation_gives_it_back(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="500.00")
    card = example_card()
    card["vehicles"][0]["daily_capacity"] = 1
    await make_hosted(airports=("LPL",), card=card, name="Hosted Liverpool")
    point = {"type": "POINT", "lat": 53.4084, "lng": -2.9916, "name": "Liverpool"}
    first_search = await search_at(http, key, "LPL", point=point)
    second_search = await search_at(http, key, "LPL", point=point)
    sedan_1 = company(first_search, "Hosted Liverpool")[0]
    sedan_2 = company(second_search, "Hosted Liverpool")[0]
    assert sedan_1["type"] == sedan_2["type"] == "SEDAN"
    won = await http.post(
        BOOKING, json=booking_body(first_search["search_id"], sedan_1["vehicle_id"]), headers=bearer(key)
    )
    assert won.status_code == 200
    balance = await balance_of(db, client_id)
    lost = await http.post(
        BOOKING, json=booking_body(second_search["search_id"], sedan_2["vehicle_id"]), headers=bearer(key)
    )
    assert lost.status_code == 409
    assert lost.json()["code"] == "VEHICLE_UNAVAILABLE"
    assert await balance_of(db, client_id) == balance  # nothing written, nothing charged
    assert [v["type"] for v in company(await search_at(http, key, "LPL", point=point), "Hosted Liverpool")] == [
        "MINIVAN"
    ]  # a full vehicle is not offered
    reservation = won.json()["booking"]["reservation_no"]
    cancelled = await http.delete(
        BOOKING, params={"reservation_no": reservation, "cancellation_id": 1}, headers=bearer(key)
    )
    assert cancelled.status_code == 200, cancelled.text
    assert [v["type"] for v in company(await search_at(http, key, "LPL", point=point), "Hosted Liverpool")] == [
        "SEDAN",
        "MINIVAN",
    ]  # the seat is free again


async def test_unaccepted_bookings_are_declined_and_refunded(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance="500.00")
    await make_hosted(airports=("SOU",), name="Hosted Southampton")
    point = {"type": "POINT", "lat": 50.9097, "lng": -1.4044, "name": "Southampton"}
    found = await search_at(http, key, "SOU", point=point)
    sedan = company(found, "Hosted Southampton")[0]
    created = (
        await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    ).json()["booking"]
    svc = svc_of(service)
    clock.advance(timedelta(hours=3, minutes=59))
    # Judged on this booking, not on the job's count: other tests' bookings in the shared database may
    # fall due at the same moved clock.
    await scheduled.run_all(svc)
    assert (await row_of(db, created["reservation_no"]))["status"] == "PENDING_APPROVAL"
    clock.advance(timedelta(minutes=2))
    assert (await scheduled.run_all(svc))["auto_declined"] >= 1
    row = await row_of(db, created["reservation_no"])
    assert row["status"] == "DECLINED"
    total = Decimal(created["price"]["total"])
    assert await ledger_of(db, created["reservation_no"]) == [("debit_booking", -total), ("credit_refund", total)]
    assert await balance_of(db, client_id) == Decimal("500.00")


async def test_a_booking_close_to_pickup_is_declined_two_hours_before(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client(balance="500.00")
    await make_hosted(airports=("EXT",), card=example_card(min_lead_hours=0), name="Hosted Exeter")
    point = {"type": "POINT", "lat": 50.7184, "lng": -3.5339, "name": "Exeter"}
    soon = (datetime.now(UTC) + timedelta(hours=3)).astimezone(LONDON).strftime("%Y-%m-%d %H:%M")
    found = await search_at(http, key, "EXT", point=point, pickup_datetime=soon)
    sedan = company(found, "Hosted Exeter")[0]
    created = (
        await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    ).json()["booking"]
    svc = svc_of(service)
    await scheduled.run_all(svc)
    assert (await row_of(db, created["reservation_no"]))["status"] == "PENDING_APPROVAL"
    clock.advance(timedelta(hours=1, minutes=1))  # now under 2 h before pickup
    await scheduled.run_all(svc)
    assert (await row_of(db, created["reservation_no"]))["status"] == "DECLINED"


async def test_a_card_edit_changes_the_next_search(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    from transfers.hosted import service as hosted_service

    _, key = await make_client()
    partner_id = await make_hosted(airports=("BHX",), name="Hosted Birmingham")
    point = {"type": "POINT", "lat": 52.4862, "lng": -1.8904, "name": "Birmingham"}
    before = company(await search_at(http, key, "BHX", point=point), "Hosted Birmingham")
    card = copy.deepcopy(example_card())
    card["vehicles"][0]["prices"]["minimum"] = "77.00"
    await hosted_service.set_rate_card(db, clock, partner_id, card, actor="tests")
    after = company(await search_at(http, key, "BHX", point=point), "Hosted Birmingham")
    assert {v["type"]: v["price"] for v in before} == {"SEDAN": 40.0, "MINIVAN": 60.0}
    assert {v["type"]: v["price"] for v in after} == {"SEDAN": 77.0, "MINIVAN": 60.0}


async def test_a_date_blacked_out_after_the_search_cannot_be_booked(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    from transfers.hosted import service as hosted_service

    client_id, key = await make_client(balance="300.00")
    partner_id = await make_hosted(airports=("CWL",), name="Hosted Cardiff")
    point = {"type": "POINT", "lat": 51.4816, "lng": -3.1791, "name": "Cardiff"}
    pickup = future_local(days=15)
    found = await search_at(http, key, "CWL", point=point, pickup_datetime=pickup)
    sedan = company(found, "Hosted Cardiff")[0]
    await hosted_service.set_rate_card(db, clock, partner_id, example_card(blackout_dates=[pickup[:10]]), actor="tests")
    refused = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    assert refused.status_code == 409 and refused.json()["code"] == "VEHICLE_UNAVAILABLE"
    assert await balance_of(db, client_id) == Decimal("300.00")


async def test_a_converted_hosted_booking_keeps_the_cards_own_price_for_the_partner(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    """docs/rules/fx.md#booking: a GBP agency books from a EUR rate card; the partner's e-mail and pages say
    its own EUR price, the agency pays the converted GBP one."""
    _, key = await make_client(currency="GBP", balance="500.00")
    await make_hosted(airports=("NCL",), name="Hosted Newcastle EUR")
    point = {"type": "POINT", "lat": 54.9783, "lng": -1.6178, "name": "Newcastle"}
    found = await search_at(http, key, "NCL", point=point)
    sedan = company(found, "Hosted Newcastle EUR")[0]
    assert sedan["currency"] == "GBP" and sedan["fx"]["from_currency"] == "EUR"
    created = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    assert booking["price"]["currency"] == "GBP" and booking["price"]["fx"] == sedan["fx"]
    row = await row_of(db, booking["reservation_no"])
    assert row["partner_currency"] == "EUR" and row["currency"] == "GBP"
    stored = Booking.from_row(row)
    assert (stored.own_net_total, stored.own_currency) == (row["partner_net_total"], "EUR")
    # the card's net, converted at 0.8563, is the booking's net in GBP
    assert row["net_total"] == (row["partner_net_total"] * Decimal("0.8563")).quantize(Decimal("0.01"), ROUND_HALF_UP)
    mail = compose("booking.new", stored, ["ops@example.com"], partner_name="Hosted", portal_url="https://p")
    assert f"Your price: {money.text(row['partner_net_total'], 'EUR')} EUR" in mail.body
