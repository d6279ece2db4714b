"""Who pays (docs/rules/incidents.md#driver-no-show, #resolve): the automatic decision on a driver
no-show, an operator's partial and whole refunds, the partner's share recovered, and every bad refund
refused with nothing written; two operators at once resolve one incident once. Both databases."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from decimal import Decimal

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import ledger_of, row_of
from tests.incidents.helpers import INCIDENTS, PRICE, approved_booking, at, counts, report
from transfers.accounting.check import first_difference
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.incidents import service
from transfers.incidents.rules import InvalidResolution
from transfers.incidents.service import AlreadyResolved, NoSuchIncident

WALLET = "/api/v1/booking-api/wallet"


async def balance(http: httpx.AsyncClient, key: str) -> Decimal:
    return Decimal((await http.get(WALLET, headers=bearer(key))).json()["balance"])


async def books_reconcile(db: Database) -> None:
    async with db.read() as conn:
        assert await first_difference(conn) is None


async def test_a_driver_no_show_without_arrival_is_refunded_at_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    paid = await balance(http, key)
    at(clock, row["pickup_at"], timedelta(minutes=50))
    answer = await report(http, key, reservation_no, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert answer.status_code == 201, answer.text
    incident = answer.json()
    assert incident["status"] == "RESOLVED"
    resolution = incident["resolution"]
    assert (resolution["responsible"], resolution["refund"], resolution["by"]) == ("partner", "56.05", "automatic")
    assert resolution["note"] and resolution["resolved_at"]
    assert (await row_of(db, reservation_no))["status"] == "REFUNDED"
    assert await balance(http, key) == paid + PRICE
    kinds = [kind for kind, _ in await ledger_of(db, reservation_no)]
    assert kinds == ["debit_booking", "incident_driver_no_show"]
    entries = (await http.get(f"{WALLET}/entries", headers=bearer(key))).json()["data"]
    assert (entries[0]["kind"], entries[0]["amount"], entries[0]["reservation_no"]) == (
        "refund",
        "56.05",
        reservation_no,
    )
    assert incident["id"] in entries[0]["note"]
    # refunded in full before it was COMPLETED: no ride earned, nothing to recover; the books reconcile
    await books_reconcile(db)
    late = await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "and late too"})
    assert late.status_code == 422 and late.json()["code"] == "INCIDENT_NOT_ALLOWED"


async def test_a_reverse_api_client_is_recorded_and_nothing_moves(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner, pay_type="reverse_api")
    at(clock, row["pickup_at"], timedelta(minutes=50))
    answer = await report(http, key, reservation_no, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["resolution"]["refund"] == "56.05"
    stored = await row_of(db, reservation_no)
    assert stored["status"] == "REFUNDED"
    assert Decimal(str(stored["incident_refunded"])) == PRICE
    assert await ledger_of(db, reservation_no) == []
    await books_reconcile(db)


async def test_an_operator_refunds_in_parts_and_the_last_part_refunds_the_booking(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    paid = await balance(http, key)
    at(clock, row["pickup_at"], timedelta(hours=1))
    late = (await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "late"})).json()
    wrong = (await report(http, key, reservation_no, {"type": "WRONG_VEHICLE", "description": "tiny"})).json()
    first = await service.resolve(
        db, clock, late["id"], responsible="partner", refund="20.00", note="Late by 40 minutes", actor="op:ann"
    )
    assert first.resource()["resolution"] == {
        "responsible": "partner",
        "refund": "20.00",
        "note": "Late by 40 minutes",
        "resolved_at": first.resource()["resolution"]["resolved_at"],
        "by": "op:ann",
    }
    assert (await row_of(db, reservation_no))["status"] == "APPROVED"
    assert await balance(http, key) == paid + Decimal("20.00")
    with pytest.raises(InvalidResolution):  # 36.05 is what is still unrefunded
        await service.resolve(db, clock, wrong["id"], responsible="partner", refund="36.06", note="x", actor="op:ann")
    done = await service.resolve(
        db, clock, wrong["id"], responsible="none", refund="36.05", note="Goodwill", actor="op:bob"
    )
    assert done.status == "RESOLVED"
    assert (await row_of(db, reservation_no))["status"] == "REFUNDED"
    assert await balance(http, key) == paid + PRICE
    kinds = sorted(kind for kind, _ in await ledger_of(db, reservation_no))
    assert kinds == ["debit_booking", "incident_driver_late", "incident_wrong_vehicle"]
    listed = (await http.get(INCIDENTS, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
    assert [i["status"] for i in listed["data"]] == ["RESOLVED", "RESOLVED"]
    assert (await counts(db, row["id"], reservation_no))["audit"] == 2
    await books_reconcile(db)


BAD_REFUNDS = ["-1.00", "12.505", "1e2", "abc", "", " ", "56.06", "NaN", "Infinity", "0x10", "1,00", "١٢"]


@pytest.mark.parametrize("refund", [*BAD_REFUNDS, None, 12.5, True, ["1"]])
async def test_a_bad_refund_is_refused_and_writes_nothing(
    refund: object,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=1))
    late = (await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "late"})).json()
    before = await counts(db, row["id"], reservation_no)
    with pytest.raises(InvalidResolution):
        await service.resolve(db, clock, late["id"], responsible="partner", refund=refund, note="n", actor="op")
    for responsible, note in [("PARTNER", "n"), ("", "n"), ("partner", ""), ("partner", "x" * 2001)]:
        with pytest.raises(InvalidResolution):
            await service.resolve(db, clock, late["id"], responsible=responsible, refund="1.00", note=note, actor="op")
    with pytest.raises(NoSuchIncident):
        await service.resolve(db, clock, "inc_nope", responsible="none", refund="0", note="n", actor="op")
    assert await counts(db, row["id"], reservation_no) == before
    assert (await service.get(db, late["id"])).status == "OPEN"


async def test_a_completed_booking_recovers_the_partners_share(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    from transfers.bookings.lifecycle import lock_booking, transition
    from transfers.bookings.state import BookingStatus

    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=13))
    async with db.write() as conn:  # the ride ended (as the pickup + 12 h job does)
        booking = await lock_booking(conn, row["id"])
        assert booking is not None
        await transition(conn, booking, BookingStatus.COMPLETED, actor="tests", reason="ride over", now=clock.now())
    late = (await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "late"})).json()
    await service.resolve(db, clock, late["id"], responsible="partner", refund="10.00", note="late", actor="op")
    from sqlalchemy import select

    from transfers.db.tables import journal_entries

    async with db.read() as conn:
        kinds = (
            await conn.execute(select(journal_entries.c.kind).where(journal_entries.c.booking_id == row["id"]))
        ).scalars()
        assert "recovery" in {str(k).lower() for k in kinds}
    assert (await row_of(db, reservation_no))["status"] == "COMPLETED"
    await books_reconcile(db)


async def test_two_operators_resolving_at_once_make_one_resolution(
    http: httpx.AsyncClient,
    db: Database,
    database_url: str,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    paid = await balance(http, key)
    at(clock, row["pickup_at"], timedelta(hours=1))
    late = (await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "late"})).json()
    # each operator on a pool of its own, as two console processes would be
    pools = [Database(database_url, pool_size=2, application_name=f"op{i}") for i in range(2)]
    try:
        outcomes = await asyncio.gather(
            *(
                service.resolve(
                    pool, clock, late["id"], responsible="partner", refund="30.00", note=f"op{i}", actor=f"op{i}"
                )
                for i, pool in enumerate(pools)
            ),
            return_exceptions=True,
        )
    finally:
        await asyncio.gather(*(pool.dispose() for pool in pools))
    won = [o for o in outcomes if not isinstance(o, BaseException)]
    lost = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(won) == 1 and len(lost) == 1, outcomes
    assert isinstance(lost[0], AlreadyResolved)
    assert await balance(http, key) == paid + Decimal("30.00")
    assert (await counts(db, row["id"], reservation_no))["audit"] == 1
    assert [k for k, _ in await ledger_of(db, reservation_no)].count("incident_driver_late") == 1
