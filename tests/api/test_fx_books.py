"""The books of a converted booking (docs/rules/fx.md#books), over real HTTP: a GBP agency books Málaga's
EUR partner (56.05 EUR, markup 10 %: 52.80 GBP, converted net 48.00 GBP at the sandbox's 0.8563). The
client's fee, refunds and incident refunds are in GBP, from the booked amounts; the partner's lines are in
EUR, by the same ratios of its own net; each journal entry balances in GBP and in EUR through the FX
accounts; its statement shows the retail in GBP; ``transfers fx position`` shows the exposure."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select

from tests import ledger_world as world
from tests.api.test_search_currencies import IATA, search, vehicle, wallet_balances
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body
from transfers.accounting import service as books
from transfers.accounting.periods import period_of
from transfers.bookings.state import BookingStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, journal_entries, journal_lines
from transfers.incidents.rules import IncidentType

BOOKING = "/api/v1/booking-api/booking"
QUOTE = "/api/v1/booking-api/booking/cancellation-quote"
FEE_20 = [{"hours_before_pickup": 0, "fee_percent": 20}]


async def lines_of(db: Database, reservation_no: str, kind: str) -> set[tuple[str, str, Decimal]]:
    """(account, currency, amount) of the booking's journal lines of ``kind``."""
    e, line, b = journal_entries.c, journal_lines.c, bookings.c
    async with db.read() as conn:
        rows = await conn.execute(
            select(line.account, line.currency, line.amount)
            .select_from(
                journal_lines.join(journal_entries, e.id == line.entry_id).join(bookings, b.id == e.booking_id)
            )
            .where(b.reservation_no == reservation_no, e.kind == kind)
        )
        return {(str(a), str(c), Decimal(v)) for a, c, v in rows}


async def position(db: Database) -> dict[str, Decimal]:
    return dict(await books.fx_position(db))


async def book(http: httpx.AsyncClient, key: str, db: Database) -> tuple[str, int]:
    found = (await search(http, key)).json()
    (offer,) = found["vehicles"]
    assert (offer["price"], offer["currency"]) == (52.8, "GBP")
    created = await http.post(BOOKING, json=booking_body(found["search_id"], offer["vehicle_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    number = created.json()["booking"]["reservation_no"]
    async with db.read() as conn:
        booking_id = (await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == number))).scalar_one()
    return number, int(booking_id)


async def test_a_gbp_sale_of_a_eur_ride_is_booked_in_both_currencies(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    client_id, key = await make_client(currency="GBP", balance="500.00")
    euro = vehicle("eur-1", "56.05", "EUR")
    euro["cancellation_policy"] = FEE_20
    _, partner_id, partner_key = await make_partner(airports=(IATA,), markup="10", name="Euro Cars", vehicles=[euro])
    before = await position(db)

    # a ride: 52.80 GBP paid; the partner earns its 56.05 EUR, the platform gives the converted 48.00 GBP
    ride_no, ride_id = await book(http, key, db)
    await world.complete(db, ride_id, clock.now())
    assert await lines_of(db, ride_no, "RIDE") == {
        ("platform", "GBP", Decimal("-48.00")),
        ("fx", "GBP", Decimal("48.00")),
        ("fx", "EUR", Decimal("-56.05")),
        ("partner", "EUR", Decimal("56.05")),
    }

    # the driver was late, the partner's responsibility: 10.00 GBP back to the GBP wallet; the partner gives
    # back 10.00 x 56.05 / 52.80 = 10.6155 -> 10.62 EUR, the platform's side 10.00 x 48.00 / 52.80 -> 9.09 GBP
    resolved = await world.incident(db, clock, ride_id, IncidentType.DRIVER_LATE, responsible="partner", refund="10.00")
    assert resolved.resource()["resolution"]["refund"] == "10.00"
    assert await lines_of(db, ride_no, "RECOVERY") == {
        ("partner", "EUR", Decimal("-10.62")),
        ("fx", "EUR", Decimal("10.62")),
        ("fx", "GBP", Decimal("-9.09")),
        ("platform", "GBP", Decimal("9.09")),
    }
    assert await wallet_balances(db, client_id) == {"GBP": Decimal("457.20")}  # 500.00 - 52.80 + 10.00

    # a client's late cancel: the fee is 20 % of the booked 52.80 GBP = 10.56 GBP, 42.24 GBP refunded;
    # the partner earns 10.56 x 56.05 / 52.80 = 11.21 EUR, the platform gives 10.56 x 48.00 / 52.80 = 9.60 GBP
    fee_no, _ = await book(http, key, db)
    quote = (await http.get(QUOTE, params={"reservation_no": fee_no}, headers=bearer(key))).json()
    assert (quote["fee"], quote["refund"], quote["currency"]) == ("10.56", "42.24", "GBP")
    cancelled = await http.delete(BOOKING, params={"reservation_no": fee_no, "cancellation_id": 1}, headers=bearer(key))
    assert cancelled.status_code == 200, cancelled.text
    shown = (await http.get(BOOKING, params={"reservation_no": fee_no}, headers=bearer(key))).json()
    assert shown["status"] == BookingStatus.CANCELLED.value
    assert (shown["cancellation"]["fee"], shown["cancellation"]["refund"]) == ("10.56", "42.24")
    assert await wallet_balances(db, client_id) == {"GBP": Decimal("446.64")}  # 457.20 - 52.80 + 42.24
    assert await lines_of(db, fee_no, "CANCELLATION_FEE") == {
        ("platform", "GBP", Decimal("-9.60")),
        ("fx", "GBP", Decimal("9.60")),
        ("fx", "EUR", Decimal("-11.21")),
        ("partner", "EUR", Decimal("11.21")),
    }

    # the exposure: taken in GBP 48.00 - 9.09 + 9.60 = 48.51, owed in EUR 56.05 - 10.62 + 11.21 = 56.64
    after = await position(db)
    moved = {c: after.get(c, Decimal(0)) - before.get(c, Decimal(0)) for c in after}
    assert {c: v for c, v in moved.items() if v} == {"GBP": Decimal("48.51"), "EUR": Decimal("-56.64")}
    assert await books.ledger_check(db) is None

    # the partner's statement is in EUR, its own money; the retail is what the client paid, in GBP
    period = period_of(clock.now())
    listed = (await http.get("/api/v1/reverse/statements", headers=bearer(partner_key))).json()
    assert [(s["currency"], s["earned"], s["recovered"]) for s in listed["data"]] == [("EUR", "67.26", "-10.62")]
    one = (await http.get(f"/api/v1/reverse/statements/{period}", headers=bearer(partner_key))).json()
    assert [(x["kind"], x["retail"], x["retail_currency"], x["net"], x["amount"]) for x in one["lines"]] == [
        ("RIDE", "52.80", "GBP", "56.05", "56.05"),
        ("RECOVERY", "52.80", "GBP", "56.05", "-10.62"),
        ("CANCELLATION_FEE", "52.80", "GBP", "56.05", "11.21"),
    ]
    as_csv = await http.get(
        f"/api/v1/reverse/statements/{period}", params={"format": "csv"}, headers=bearer(partner_key)
    )
    rows: list[Any] = list(csv.reader(io.StringIO(as_csv.text)))
    assert rows[0][3:6] == ["retail", "retail_currency", "net"]
    assert [r[2:7] for r in rows[1:]] == [
        ["RIDE", "52.80", "GBP", "56.05", "56.05"],
        ["RECOVERY", "52.80", "GBP", "56.05", "-10.62"],
        ["CANCELLATION_FEE", "52.80", "GBP", "56.05", "11.21"],
    ]
    assert partner_id > 0
