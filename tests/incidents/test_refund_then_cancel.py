"""A partial incident refund, then a client's fee-keeping cancel (docs/rules/incidents.md#refund-then-cancel),
on both databases: the client pays ``min(fee, total - incident refunds)``; the partner earns its
``CANCELLATION_FEE`` on the whole fee and carries, as ``RECOVERY``, its share (net / total) of the part of the
fee its own incidents refunded (responsible ``partner``, in proportion to the incidents' refunds); the rest
of that part is the platform's, and a recovery the cancel did not need is given back. Every journal entry
balances (``transfers ledger check``) and the partner's statement shows those figures."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

import httpx
import pytest
from sqlalchemy import select

from tests.api.test_cancellation_policies import book, cancel, pickup_in
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import ledger_of, row_of
from tests.incidents.helpers import at, report
from transfers.accounting import service as accounting
from transfers.accounting.check import first_difference
from transfers.bookings.lifecycle import lock_booking, update_details
from transfers.cancellation.policy import parse_spec
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import journal_entries, journal_lines
from transfers.incidents import service
from transfers.partners.service import set_cancellation_policy

WALLET = "/api/v1/booking-api/wallet"
PRICE = Decimal("60.00")  # the partner's net; 25 % markup: the client pays 75.00
CENT = Decimal("0.01")


def share(amount: Decimal, net: Decimal, total: Decimal) -> Decimal:
    return (amount * net / total).quantize(CENT, rounding=ROUND_HALF_UP)


async def balance(http: httpx.AsyncClient, key: str) -> Decimal:
    return Decimal((await http.get(WALLET, headers=bearer(key))).json()["balance"])


async def partner_lines(db: Database, booking_id: int, partner_id: int) -> dict[str, Decimal]:
    """The partner's lines of one booking, summed by entry kind."""
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(journal_entries.c.kind, journal_lines.c.amount)
                .join(journal_lines, journal_lines.c.entry_id == journal_entries.c.id)
                .where(
                    journal_entries.c.booking_id == booking_id,
                    journal_lines.c.account == "partner",
                    journal_lines.c.owner_id == partner_id,
                )
            )
        ).all()
    found: dict[str, Decimal] = {}
    for kind, amount in rows:
        found[str(kind).upper()] = found.get(str(kind).upper(), Decimal("0.00")) + Decimal(amount)
    return found


# (policy, the incidents' (type, responsible, refund), the RECOVERY the partner keeps, in the client's money)
CASES = [
    # the incident refunded 30.00 of a 75.00 fee: the partner carries its share of all of it
    ("24:0,0:100", [("DRIVER_LATE", "partner", "30.00")], Decimal("30.00")),
    # the same refund decided as nobody's fault: the platform carries it, the partner keeps its whole fee share
    ("24:0,0:100", [("DRIVER_LATE", "none", "30.00")], Decimal("0.00")),
    # a 50 % fee leaves 37.50 to refund: an incident refund of 30.00 took none of the fee, its recovery goes back
    ("24:0,0:50", [("DRIVER_LATE", "partner", "30.00")], Decimal("0.00")),
    # 20.00 of the 45.00 refunded took the fee (fee 50 % = 37.50, 75 - 37.50 = 37.50 < 45): the partner's
    # incident is 30 of the 45 refunded, so it carries 30 / 45 of those 7.50: 5.00
    ("24:0,0:50", [("DRIVER_LATE", "partner", "30.00"), ("WRONG_VEHICLE", "none", "15.00")], Decimal("5.00")),
]


@pytest.mark.parametrize(("policy", "refunds", "kept"), CASES)
async def test_a_partial_incident_refund_then_a_fee_keeping_cancel(
    policy: str,
    refunds: list[tuple[str, str, str]],
    kept: Decimal,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, partner_id, _ = await make_partner(
        vehicles=default_vehicles(str(PRICE)),
        markup="25",
        create_status="APPROVED",
        driver={"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"},
    )
    await set_cancellation_policy(db, clock, partner_id, parse_spec(policy), actor="tests")
    _, key = await make_client()
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    row = await row_of(db, reservation_no)
    total, net = Decimal(row["total"]), Decimal(row["net_total"])
    assert (total, net) == (Decimal("75.00"), PRICE) and row["status"] == "APPROVED"
    paid = await balance(http, key)

    at(clock, row["pickup_at"], timedelta(hours=1))  # incidents are reported from the pickup on
    for kind, responsible, refund in refunds:
        incident = (await report(http, key, reservation_no, {"type": kind, "description": "went wrong"})).json()
        await service.resolve(db, clock, incident["id"], responsible=responsible, refund=refund, note="n", actor="op")
    refunded = sum((Decimal(r) for _, _, r in refunds), Decimal("0.00"))
    async with db.write() as conn:  # the flight arrives later still: the pickup moves 3 h ahead (flights.md)
        booking = await lock_booking(conn, row["id"])
        assert booking is not None
        await update_details(
            conn,
            booking,
            {"pickup_at": clock.now() + timedelta(hours=3)},
            actor="tests",
            reason="late",
            now=clock.now(),
        )
    await cancel(http, key, reservation_no)  # 3 h before the pickup: the policy's last tier

    cancelled = await row_of(db, reservation_no)
    fee = Decimal(cancelled["cancellation_fee"])
    assert cancelled["status"] == "CANCELLED" and fee == (total * Decimal(policy.split(":")[-1]) / 100).quantize(CENT)
    client_paid = min(fee, total - refunded)
    assert await balance(http, key) - paid == total - client_paid  # the debit was before
    assert sum(amount for _, amount in await ledger_of(db, reservation_no)) == -client_paid

    lines = await partner_lines(db, row["id"], partner_id)
    assert lines.get("CANCELLATION_FEE") == share(fee, net, total)
    assert lines.get("RECOVERY", Decimal("0.00")) == -share(kept, net, total)
    assert "RIDE" not in lines
    earned = share(fee, net, total) - share(kept, net, total)
    statements = await accounting.statements(db, partner_id)
    assert sum((s.figures.earned for s in statements), Decimal("0.00")) == share(fee, net, total)
    assert sum((s.figures.recovered for s in statements), Decimal("0.00")) == -share(kept, net, total)
    assert sum((s.figures.closing - s.figures.opening for s in statements), Decimal("0.00")) == earned
    async with db.read() as conn:
        assert await first_difference(conn) is None  # every entry balances, accounts and statements agree
