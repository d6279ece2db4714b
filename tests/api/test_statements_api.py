"""Partners' statements (docs/rules/statements.md) through the reverse API, the month close, a
payout and an adjustment, on both databases: the figures, the lines, the CSV, the bad inputs."""

from __future__ import annotations

import asyncio
import csv
import io
from datetime import UTC, timedelta
from decimal import Decimal

import httpx
import pytest
from sqlalchemy import func, select

from tests import ledger_world as world
from tests.conftest import ClientFactory, PartnerFactory, bearer
from transfers.accounting import service as books
from transfers.accounting.amounts import InvalidAmount, InvalidNote
from transfers.accounting.periods import InvalidPeriod, period_of
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, journal_entries, partner_statements

STATEMENTS = "/api/v1/reverse/statements"


async def earning_partner(
    db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> tuple[int, str, list[str]]:
    """A partner with a completed ride (44.00, net 40.00) and a client's cancel keeping 20 % of
    25.00 (net 20.00: a 4.00 fee share) this month; its id, API key and the reservations."""
    client_id, _ = await make_client(balance="500.00")
    _, partner_id, key = await make_partner()
    now = clock.now()
    ride = await world.book(db, world.values(client_id, partner_id, now, total="44.00", net="40.00"), now)
    await world.complete(db, ride, now)
    fee = await world.book(
        db, world.values(client_id, partner_id, now, total="25.00", net="20.00", policy=world.FEE_20), now
    )
    await world.move(db, fee, world.S.PENDING_APPROVAL, now)
    await world.cancel(db, fee, now)
    async with db.read() as conn:
        from transfers.bookings import repository as booking_repo

        numbers = [(await booking_repo.get_by_id(conn, i)).reservation_no for i in (ride, fee)]  # type: ignore[union-attr]
    return partner_id, key, numbers


async def test_the_open_month_with_its_lines_as_json_and_csv(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner_id, key, (ride_no, fee_no) = await earning_partner(db, clock, make_client, make_partner)
    period = period_of(clock.now())
    listed = await http.get(STATEMENTS, headers=bearer(key))
    assert listed.status_code == 200
    assert listed.json() == {
        "data": [
            {
                "period": period,
                "currency": "EUR",
                "status": "OPEN",
                "opening_balance": "0.00",
                "earned": "44.00",
                "recovered": "0.00",
                "paid": "0.00",
                "closing_balance": "44.00",
            }
        ]
    }
    one = (await http.get(f"{STATEMENTS}/{period}", headers=bearer(key))).json()
    today = clock.now().astimezone(UTC).date().isoformat()
    assert one["closing_balance"] == "44.00"
    assert one["lines"] == [
        {
            "date": today,
            "reservation_no": ride_no,
            "kind": "RIDE",
            "retail": "44.00",
            "retail_currency": "EUR",
            "net": "40.00",
            "amount": "40.00",
            "note": None,
        },
        {
            "date": today,
            "reservation_no": fee_no,
            "kind": "CANCELLATION_FEE",
            "retail": "25.00",
            "retail_currency": "EUR",
            "net": "20.00",
            "amount": "4.00",
            "note": "fee 5.00 of 25.00",
        },
    ]
    as_csv = await http.get(f"{STATEMENTS}/{period}", params={"format": "csv"}, headers=bearer(key))
    assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(as_csv.text)))
    assert rows == [
        ["date", "reservation_no", "kind", "retail", "retail_currency", "net", "amount", "note"],
        [today, ride_no, "RIDE", "44.00", "EUR", "40.00", "40.00", ""],
        [today, fee_no, "CANCELLATION_FEE", "25.00", "EUR", "20.00", "4.00", "fee 5.00 of 25.00"],
    ]
    assert partner_id > 0


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/2026-13", {}, 422),
        ("/2026-1", {}, 422),
        ("/%E2%80%8B2026-11", {}, 422),
        ("/" + "9" * 5000, {}, 422),
        ("/2026-11", {"format": "xml"}, 422),
        ("/2001-01", {}, 404),
        ("/2001-01", {"format": "csv"}, 404),
    ],
)
async def test_bad_periods_and_formats_are_clear_4xx(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    path: str,
    params: dict[str, str],
    status: int,
) -> None:
    _, key, _ = await earning_partner(db, clock, make_client, make_partner)
    answer = await http.get(STATEMENTS + path, params=params, headers=bearer(key))
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["status"] == "Error" and body["message"]
    if status == 404:
        assert body == {"status": "Error", "code": "NOT_FOUND", "message": "There is no statement for 2001-01."}


async def test_another_partners_statement_is_not_found_and_no_key_is_401(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await earning_partner(db, clock, make_client, make_partner)
    _, _, other_key = await make_partner()
    period = period_of(clock.now())
    assert (await http.get(STATEMENTS, headers=bearer(other_key))).json() == {"data": []}
    for params in ({}, {"format": "csv"}):
        answer = await http.get(f"{STATEMENTS}/{period}", params=params, headers=bearer(other_key))
        assert answer.status_code == 404, answer.text
    assert (await http.get(STATEMENTS)).status_code == 401


async def test_month_close_payout_and_adjustment(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner_id, key, _ = await earning_partner(db, clock, make_client, make_partner)
    first = period_of(clock.now())
    # the month ends: the scheduled close makes it CLOSED, with its figures frozen
    clock.advance(timedelta(days=32))
    second = period_of(clock.now())
    assert await books.close_ended(db, clock.now()) >= 1
    assert await books.close_ended(db, clock.now()) == 0  # once
    closed = (await http.get(f"{STATEMENTS}/{first}", headers=bearer(key))).json()
    assert closed["status"] == "CLOSED" and closed["closing_balance"] == "44.00"
    # bad operator input writes nothing
    for amount, note in [("-0.00", "x"), ("1.005", "x"), ("abc", "x"), ("5.00", "  ")]:
        with pytest.raises((InvalidAmount, InvalidNote)):
            await books.adjust(db, partner_id, "EUR", amount, note, actor="tests", now=clock.now())
    with pytest.raises(InvalidPeriod):
        await books.mark_paid(db, partner_id, "2026-13", "EUR", "R-1", actor="tests", now=clock.now())
    with pytest.raises(books.NoSuchStatement):
        await books.mark_paid(db, partner_id, second, "EUR", "R-1", actor="tests", now=clock.now())  # still open
    # paid: a PAYOUT of the closing balance, in the open month, with its reference
    assert await books.mark_paid(db, partner_id, first, "EUR", "SEPA-77", actor="tests", now=clock.now()) == Decimal(
        "44.00"
    )
    with pytest.raises(books.AlreadyPaid):
        await books.mark_paid(db, partner_id, first, "EUR", "SEPA-78", actor="tests", now=clock.now())
    await books.adjust(db, partner_id, "EUR", "-1.50", "damaged seat", actor="tests", now=clock.now())
    listed = (await http.get(STATEMENTS, headers=bearer(key))).json()["data"]
    assert [(s["period"], s["status"]) for s in listed] == [(second, "OPEN"), (first, "PAID")]
    assert listed[0]["opening_balance"] == "44.00" and listed[0]["paid"] == "-44.00"
    assert listed[0]["earned"] == "-1.50" and listed[0]["closing_balance"] == "-1.50"
    lines = (await http.get(f"{STATEMENTS}/{second}", headers=bearer(key))).json()["lines"]
    assert [(line["kind"], line["amount"], line["note"]) for line in lines] == [
        ("PAYOUT", "-44.00", f"payout of {first} (reference SEPA-77)"),
        ("ADJUSTMENT", "-1.50", "damaged seat"),
    ]
    async with db.read() as conn:
        actions = await conn.execute(
            select(admin_audit.c.action, func.count())
            .where(
                admin_audit.c.subject == f"partner:{partner_id}",
                admin_audit.c.action.in_(["statement.mark_paid", "partner.adjust"]),
            )
            .group_by(admin_audit.c.action)
        )
        assert dict(actions.all()) == {"statement.mark_paid": 1, "partner.adjust": 1}
    # a closed statement never changes
    assert (await http.get(f"{STATEMENTS}/{first}", headers=bearer(key))).json()["closing_balance"] == "44.00"


async def test_mark_paid_twice_at_once_pays_once(
    database_url: str,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner_id, _, _ = await earning_partner(db, clock, make_client, make_partner)
    first = period_of(clock.now())
    clock.advance(timedelta(days=32))
    await books.close_ended(db, clock.now())
    operators = [Database(database_url, pool_size=1) for _ in range(2)]
    try:
        results = await asyncio.gather(
            *(
                books.mark_paid(one, partner_id, first, "EUR", f"R-{i}", actor=f"op{i}", now=clock.now())
                for i, one in enumerate(operators)
            ),
            return_exceptions=True,
        )
    finally:
        for one in operators:
            await one.dispose()
    paid = [r for r in results if isinstance(r, Decimal)]
    refused = [r for r in results if isinstance(r, books.AlreadyPaid)]
    assert paid == [Decimal("44.00")] and len(refused) == 1, results
    async with db.read() as conn:
        payouts = await conn.execute(
            select(func.count())
            .select_from(journal_entries)
            .join(partner_statements, partner_statements.c.payout_entry_id == journal_entries.c.id)
            .where(partner_statements.c.partner_id == partner_id)
        )
        assert payouts.scalar_one() == 1
        count = await conn.execute(
            select(func.count()).where(
                journal_entries.c.kind == "PAYOUT", journal_entries.c.reference.in_(["R-0", "R-1"])
            )
        )
        assert count.scalar_one() >= 1
