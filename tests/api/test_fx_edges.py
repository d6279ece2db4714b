"""The edges of selling in several currencies (docs/rules/fx.md#search, docs/rules/fx.md#books), over
real HTTP with test partners quoting in EUR and the sandbox rates (EUR -> GBP 0.8563, JPY 162.35):

* a currency the service does not accept (left out of ``TRANSFERS_CURRENCIES``) is 1325 for a wallet
  client (even one holding a wallet in it from before) and for a ``reverse_api`` client, and nothing is
  stored; 1325 comes after the other search codes (1320, 1324) and before 1326; a ``reverse_api``
  client books in the currency it searched in, the partner told its own price;
* a currency without decimals is written without any: the search's JSON numbers are integers
  (``10010``, never ``10010.0``), the booking's strings ``"10010"``;
* a JPY booking's fee and incident refund are JPY amounts from its booked total: a refund with
  decimals is refused with nothing written; the partner's shares are EUR by the ratios of its own net;
* a JPY and a KWD partner's statements (JSON and CSV) write their amounts with their own decimals.
"""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests import ledger_world as world
from tests.api.test_fx_books import lines_of
from tests.api.test_search_currencies import vehicle, wallet_balances
from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.helpers import booking_body, search_body
from tests.incidents.helpers import counts
from tests.servers import serving
from transfers.accounting import service as books
from transfers.app import create_app
from transfers.bookings import lifecycle
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, searches
from transfers.incidents import service as incidents
from transfers.incidents.rules import IncidentType, InvalidResolution, Reporter

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
QUOTE = "/api/v1/booking-api/booking/cancellation-quote"
FEE_20 = [{"hours_before_pickup": 0, "fee_percent": 20}]


def trip(iata: str, lat: float, lng: float, name: str, **body: Any) -> dict[str, Any]:
    return search_body(
        pickup_location={"type": "AIRPORT", "iata_code": iata},
        dropoff_location={"type": "POINT", "lat": lat, "lng": lng, "name": name},
        **body,
    )


def gdansk(**body: Any) -> dict[str, Any]:
    return trip("GDN", 54.3520, 18.6466, "Gdańsk old town", **body)


def wroclaw(**body: Any) -> dict[str, Any]:
    return trip("WRO", 51.1079, 17.0385, "Wrocław market square", **body)


async def searches_of(db: Database) -> int:
    async with db.read() as conn:
        return int((await conn.execute(select(func.count()).select_from(searches))).scalar_one())


async def test_a_currency_the_service_does_not_accept_is_1325_for_every_client(
    database_url: str,
    workdir: Path,
    clock: ShiftedClock,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner, _, _ = await make_partner(
        airports=("GDN",), name="Gdańsk Euro Cars", vehicles=[vehicle("eur-1", "40.00", "EUR")]
    )
    wallet_id, wallet_key = await make_client(currency="EUR", balance="100.00")
    # THB was accepted when this wallet was opened; since, the service sells in EUR, GBP and JPY only
    await client_service.add_wallet(db, clock, wallet_id, "THB", default=False, actor="tests")
    _, reverse_key = await make_client(pay_type="reverse_api")
    app = create_app(make_settings(database_url, workdir, currencies="EUR,GBP,JPY"), clock=clock, configure_logs=False)
    async with serving(app) as server, httpx.AsyncClient(base_url=server.url, timeout=30) as http:

        async def code(key: str, **body: Any) -> Any:
            before = await searches_of(db)
            answer = await http.post(SEARCH, json=gdansk(**body), headers=bearer(key))
            assert answer.status_code == 422, answer.text
            assert await searches_of(db) == before  # nothing stored
            return answer.json()["code"]

        for currency in ("THB", "USD", "GBP", "XYZ", "eur"):  # disabled though held, disabled, no wallet, unknown
            assert await code(wallet_key, currency=currency) == 1325, currency
        for currency in ("THB", "USD", "XYZ", "jpy"):
            assert await code(reverse_key, currency=currency) == 1325, currency
        # the order of the codes: 1320 and 1324 before 1325, 1326 after it
        assert await code(reverse_key, currency="THB", travelers={"adult": 0, "children": 0, "infant": 0}) == 1320
        assert await code(wallet_key, currency="THB", return_datetime="tomorrow") == 1324
        assert await code(wallet_key, currency="THB", sort="cheapest") == 1325
        assert await code(wallet_key, currency="EUR", sort="cheapest") == 1326

        own = await http.post(SEARCH, json=gdansk(currency="EUR"), headers=bearer(wallet_key))
        assert own.status_code == 200 and [v["price"] for v in own.json()["vehicles"]] == [40.0]
        in_pounds = await http.post(SEARCH, json=gdansk(currency="GBP"), headers=bearer(reverse_key))
        assert in_pounds.status_code == 200, in_pounds.text
        # 40.00 x 0.8563 = 34.252 -> 34.25 GBP
        assert [(v["price"], v["currency"]) for v in in_pounds.json()["vehicles"]] == [(34.25, "GBP")]
        # booked as searched: the price and its rate in GBP; the partner is told its own 40.00 EUR
        (offer,) = in_pounds.json()["vehicles"]
        body = booking_body(in_pounds.json()["search_id"], offer["vehicle_id"])
        created = await http.post(BOOKING, json=body, headers=bearer(reverse_key))
        assert created.status_code == 200, created.text
        assert created.json()["booking"]["price"] == {"total": "34.25", "currency": "GBP", "fx": offer["fx"]}
        (call,) = partner.calls("/booking/create")
        assert call.body["price"] == {"total": "40.00", "currency": "EUR"}
        unconverted = await http.post(SEARCH, json=gdansk(), headers=bearer(reverse_key))
        assert [(v["price"], v["fx"]) for v in unconverted.json()["vehicles"]] == [(40.0, None)]
    assert await wallet_balances(db, wallet_id) == {"EUR": Decimal("100.00"), "THB": Decimal("0.00")}


async def test_a_jpy_sale_has_no_decimals_anywhere_and_its_fee_and_refunds_are_yen(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    extras = [{"id": "seat", "name": "Child seat", "price": "5.00", "pricing_type": "PER_ITEM"}]
    euro = vehicle("eur-1", "56.05", "EUR", extras)
    euro["cancellation_policy"] = FEE_20
    await make_partner(airports=("WRO",), markup="10", name="Wrocław Euro Cars", vehicles=[euro])
    client_id, key = await make_client(currency="JPY", balance="30000")

    async def book() -> tuple[str, int]:
        found = await http.post(SEARCH, json=wroclaw(), headers=bearer(key))
        assert found.status_code == 200, found.text
        # 56.05 x 162.35 = 9099.7175 -> 9100 JPY, x 1.10 = 10010; the seat 5.00 x 162.35 = 811.75 -> 812, x 1.10
        # = 893.2 -> 893: JSON integers, as a currency without decimals has none
        assert re.findall(r'"price":([-0-9.eE+]+)', found.text) == ["10010", "893"], found.text
        (offer,) = found.json()["vehicles"]
        assert (offer["currency"], offer["fx"]["rate"]) == ("JPY", "162.35")
        created = await http.post(
            BOOKING, json=booking_body(found.json()["search_id"], offer["vehicle_id"]), headers=bearer(key)
        )
        assert created.status_code == 200, created.text
        booking = created.json()["booking"]
        assert booking["price"] == {"total": "10010", "currency": "JPY", "fx": offer["fx"]}
        async with db.read() as conn:
            row = await conn.execute(select(bookings).where(bookings.c.reservation_no == booking["reservation_no"]))
            found_row = row.one()
        assert (found_row.net_total, found_row.partner_net_total) == (Decimal("9100"), Decimal("56.05"))
        return booking["reservation_no"], int(found_row.id)

    # a client's cancel keeping 20 %: 2002 JPY kept, 8008 back; the partner earns 2002 x 56.05 / 10010 = 11.21
    # EUR, the platform gives 2002 x 9100 / 10010 = 1820 JPY
    cancelled_no, _ = await book()
    quote = (await http.get(QUOTE, params={"reservation_no": cancelled_no}, headers=bearer(key))).json()
    assert (quote["fee"], quote["refund"], quote["currency"]) == ("2002", "8008", "JPY")
    done = await http.delete(
        BOOKING, params={"reservation_no": cancelled_no, "cancellation_id": 1}, headers=bearer(key)
    )
    assert done.status_code == 200, done.text
    assert await wallet_balances(db, client_id) == {"JPY": Decimal("27998")}  # 30000 - 10010 + 8008
    assert await lines_of(db, cancelled_no, "CANCELLATION_FEE") == {
        ("platform", "JPY", Decimal("-1820")),
        ("fx", "JPY", Decimal("1820")),
        ("fx", "EUR", Decimal("-11.21")),
        ("partner", "EUR", Decimal("11.21")),
    }

    # a ride, then the driver late: a refund with decimals is refused and writes nothing; 1000 JPY is
    # refunded, the partner gives back 1000 x 56.05 / 10010 = 5.5994 -> 5.60 EUR, the platform's side
    # 1000 x 9100 / 10010 = 909.09 -> 909 JPY
    ride_no, ride_id = await book()
    await world.complete(db, ride_id, clock.now())
    async with db.write() as conn:
        booking = await lifecycle.lock_booking(conn, ride_id)
        assert booking is not None
        opened = await incidents._open(conn, booking, IncidentType.DRIVER_LATE, Reporter.CLIENT, "late", clock.now())
    before = await counts(db, ride_id, ride_no)
    for refund in ("100.5", "100.", "1e3", "10011"):
        with pytest.raises(InvalidResolution) as refused:
            await incidents.resolve(
                db, clock, opened.public_id, responsible="partner", refund=refund, note="late", actor="op:tests"
            )
        assert refund != "100.5" or "no decimals" in str(refused.value)
    assert await counts(db, ride_id, ride_no) == before
    assert await wallet_balances(db, client_id) == {"JPY": Decimal("17988")}  # 27998 - 10010
    resolved = await incidents.resolve(
        db, clock, opened.public_id, responsible="partner", refund="1000", note="late", actor="op:tests"
    )
    assert resolved.resource()["resolution"]["refund"] == "1000"
    assert await wallet_balances(db, client_id) == {"JPY": Decimal("18988")}
    assert await lines_of(db, ride_no, "RECOVERY") == {
        ("partner", "EUR", Decimal("-5.60")),
        ("fx", "EUR", Decimal("5.60")),
        ("fx", "JPY", Decimal("-909")),
        ("platform", "JPY", Decimal("909")),
    }
    shown = (await http.get(BOOKING, params={"reservation_no": ride_no}, headers=bearer(key))).json()
    assert shown["price"]["total"] == "10010"
    assert await books.ledger_check(db) is None


async def test_statements_of_yen_and_dinar_partners_write_their_own_decimals(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """A GBP agency rides with a JPY and a KWD partner: each statement (JSON and CSV) writes the partner's
    amounts with its currency's decimals (10010, 20.465) and the retail in GBP (52.80, 52.77), read back
    exactly from either database (PostgreSQL hands the column back as 10010.0000)."""
    body = trip("KTW", 50.2649, 19.0238, "Katowice market square")
    _, _, yen_key = await make_partner(airports=("KTW",), name="Katowice Yen", vehicles=[vehicle("j", "10010", "JPY")])
    _, _, kwd_key = await make_partner(
        airports=("KTW",), name="Katowice Dinar", vehicles=[vehicle("k", "20.465", "KWD")]
    )
    _, key = await make_client(currency="GBP", balance="200.00")
    found = await http.post(SEARCH, json=body, headers=bearer(key))
    assert found.status_code == 200, found.text
    prices = {v["company"]: v["price"] for v in found.json()["vehicles"]}
    assert prices == {"Katowice Yen": 52.8, "Katowice Dinar": 52.77}
    for company in ("Katowice Yen", "Katowice Dinar"):
        again = (await http.post(SEARCH, json=body, headers=bearer(key))).json()  # one booking per search
        vehicle_id = next(v["vehicle_id"] for v in again["vehicles"] if v["company"] == company)
        created = await http.post(BOOKING, json=booking_body(again["search_id"], vehicle_id), headers=bearer(key))
        assert created.status_code == 200, created.text
        async with db.read() as conn:
            number = created.json()["booking"]["reservation_no"]
            booking_id = (
                await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == number))
            ).scalar_one()
        await world.complete(db, int(booking_id), clock.now())
    period = clock.now().strftime("%Y-%m")
    for partner_key, currency, own, retail in ((yen_key, "JPY", "10010", "52.80"), (kwd_key, "KWD", "20.465", "52.77")):
        listed = (await http.get("/api/v1/reverse/statements", headers=bearer(partner_key))).json()
        assert [(s["currency"], s["earned"]) for s in listed["data"]] == [(currency, own)]
        one = (await http.get(f"/api/v1/reverse/statements/{period}", headers=bearer(partner_key))).json()
        assert [(x["kind"], x["retail"], x["retail_currency"], x["net"], x["amount"]) for x in one["lines"]] == [
            ("RIDE", retail, "GBP", own, own)
        ]
        as_csv = await http.get(
            f"/api/v1/reverse/statements/{period}", params={"format": "csv"}, headers=bearer(partner_key)
        )
        assert as_csv.status_code == 200, as_csv.text
        rows = list(csv.reader(io.StringIO(as_csv.text)))
        assert [r[2:7] for r in rows[1:]] == [["RIDE", retail, "GBP", own, own]]
    assert await books.ledger_check(db) is None
