"""The double-entry journal and what partners earn (docs/rules/statements.md), on both databases:
every path that moves money leaves its balanced entry in the same transaction, the partner lines
are DECISIONS' figures to the cent, and ``transfers ledger check`` finds nothing wrong."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from tests import ledger_world as world
from tests.conftest import ClientFactory, PartnerFactory
from transfers.accounting import check
from transfers.accounting.journal import PLATFORM, WORLD, Leg, NewEntry, Unbalanced
from transfers.bookings.cancel import Actor
from transfers.bookings.earnings import recover_partner_share
from transfers.bookings.state import BookingStatus
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, journal_entries, journal_lines, wallets
from transfers.incidents.rules import IncidentType
from transfers.wallet.ledger import InsufficientBalance

S = BookingStatus


async def lines_of(db: Database, booking_id: int) -> list[tuple[str, str, Decimal]]:
    """(entry kind, account, amount) of every journal line of the booking, in the order written."""
    async with db.read() as conn:
        rows = await conn.execute(
            select(journal_entries.c.kind, journal_lines.c.account, journal_lines.c.amount)
            .join(journal_lines, journal_lines.c.entry_id == journal_entries.c.id)
            .where(journal_entries.c.booking_id == booking_id)
            .order_by(journal_lines.c.id)
        )
        return [(str(k), str(a), Decimal(v)) for k, a, v in rows]


async def books_reconcile(db: Database) -> None:
    async with db.read() as conn:
        assert await check.first_difference(conn) is None


async def test_a_wallet_booking_completed_pays_the_partner_its_net(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner()
    booking_id = await world.book(
        db, world.values(client_id, partner_id, clock.now(), total="44.00", net="40.00"), clock.now()
    )
    assert await lines_of(db, booking_id) == [
        ("debit_booking", "wallet", Decimal("-44.00")),
        ("debit_booking", "platform", Decimal("44.00")),
    ]
    await world.complete(db, booking_id, clock.now())
    assert (await lines_of(db, booking_id))[2:] == [
        ("RIDE", "platform", Decimal("-40.00")),
        ("RIDE", "partner", Decimal("40.00")),
    ]
    await books_reconcile(db)


async def test_the_general_create_journals_the_debit_as_the_fast_one(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner()
    row = world.values(client_id, partner_id, clock.now(), total="44.00", net="40.00")
    booking_id = await world.book(db, row, clock.now(), general=True)
    assert await lines_of(db, booking_id) == [
        ("debit_booking", "wallet", Decimal("-44.00")),
        ("debit_booking", "platform", Decimal("44.00")),
    ]
    await books_reconcile(db)


async def test_a_short_balance_writes_no_journal_entry(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="10.00")
    _, partner_id, _ = await make_partner()
    async with db.read() as conn:
        before = len((await conn.execute(select(journal_entries.c.id))).all())
    for general in (False, True):
        row = world.values(client_id, partner_id, clock.now(), total="44.00", net="40.00")
        with pytest.raises(InsufficientBalance):
            await world.book(db, row, clock.now(), general=general)
    async with db.read() as conn:
        rows = await conn.execute(
            select(journal_lines.c.amount)
            .join(wallets, wallets.c.id == journal_lines.c.owner_id)
            .where(wallets.c.client_id == client_id, journal_lines.c.account == "wallet")
        )
        assert [Decimal(r[0]) for r in rows] == [Decimal("10.00")]  # the opening top-up only
        assert len((await conn.execute(select(journal_entries.c.id))).all()) >= before


@pytest.mark.parametrize(
    ("total", "net", "fee", "share"),
    [
        ("25.00", "20.00", "5.00", "4.00"),
        ("33.33", "22.22", "6.67", "4.45"),  # 6.67 x 22.22 / 33.33 = 4.4467 -> 4.45
        ("10.00", "3.35", "1.00", "0.34"),  # 0.335 half-up -> 0.34
    ],
)
async def test_a_client_cancel_keeping_a_fee_earns_the_partner_its_share_half_up(
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    total: str,
    net: str,
    fee: str,
    share: str,
) -> None:
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner()
    percent = (Decimal(fee) / Decimal(total) * 100).quantize(Decimal("0.01"))
    policy = [{"hours_before_pickup": 0, "fee_percent": str(percent)}]
    booking_id = await world.book(
        db, world.values(client_id, partner_id, clock.now(), total=total, net=net, policy=policy), clock.now()
    )
    await world.move(db, booking_id, S.PENDING_APPROVAL, clock.now())
    cancelled = await world.cancel(db, booking_id, clock.now())
    kept = cancelled.cancellation_fee
    assert kept is not None and kept > 0
    lines = await lines_of(db, booking_id)
    fee_lines = [(a, v) for k, a, v in lines if k == "CANCELLATION_FEE"]
    expected = (kept * Decimal(net) / Decimal(total)).quantize(Decimal("0.01"), rounding="ROUND_HALF_UP")
    assert fee_lines == [("platform", -expected), ("partner", expected)]
    if kept == Decimal(fee):
        assert expected == Decimal(share)
    refund = [(a, v) for k, a, v in lines if k == "credit_refund"]
    assert refund == [("wallet", Decimal(total) - kept), ("platform", kept - Decimal(total))]
    await books_reconcile(db)


async def test_partner_and_operator_cancels_earn_nothing_and_refund_all(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner()
    for actor in (Actor.PARTNER, Actor.OPERATOR):
        row = world.values(client_id, partner_id, clock.now(), total="25.00", net="20.00", policy=world.FEE_20)
        booking_id = await world.book(db, row, clock.now())
        await world.move(db, booking_id, S.PENDING_APPROVAL, clock.now())
        await world.cancel(db, booking_id, clock.now(), actor)
        kinds = [k for k, _, _ in await lines_of(db, booking_id)]
        assert kinds == ["debit_booking", "debit_booking", "credit_refund", "credit_refund"]
    await books_reconcile(db)


async def test_a_third_partys_booking_is_paid_from_the_world_and_refunded_there(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="0.00", pay_type="reverse_api")
    _, partner_id, _ = await make_partner()
    row = world.values(client_id, partner_id, clock.now(), total="30.00", net="24.00", pay_type="reverse_api")
    booking_id = await world.book(db, row, clock.now())
    await world.move(db, booking_id, S.PENDING_APPROVAL, clock.now())
    await world.move(db, booking_id, S.DECLINED, clock.now())
    assert await lines_of(db, booking_id) == [
        ("third_party_payment", "world", Decimal("-30.00")),
        ("third_party_payment", "platform", Decimal("30.00")),
        ("third_party_refund", "platform", Decimal("-30.00")),
        ("third_party_refund", "world", Decimal("30.00")),
    ]
    completed = world.values(client_id, partner_id, clock.now(), total="30.00", net="24.00", pay_type="reverse_api")
    completed_id = await world.book(db, completed, clock.now(), general=True)
    await world.complete(db, completed_id, clock.now())
    assert [(k, a, v) for k, a, v in await lines_of(db, completed_id) if k == "RIDE"] == [
        ("RIDE", "platform", Decimal("-24.00")),
        ("RIDE", "partner", Decimal("24.00")),
    ]
    await books_reconcile(db)


async def test_recovery_on_a_completed_ride_and_none_on_a_full_refund_before_it(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="200.00")
    _, partner_id, _ = await make_partner()
    now = clock.now()
    # completed, then 10.00 of 25.00 refunded for the partner's fault: -(10 x 20 / 25) = -8.00
    done_id = await world.book(db, world.values(client_id, partner_id, now, total="25.00", net="20.00"), now)
    done = await world.complete(db, done_id, now)
    async with db.write() as conn:
        assert await recover_partner_share(conn, done, Decimal("10.00"), now=now, note="inc_1") == Decimal("-8.00")
    assert [(a, v) for k, a, v in await lines_of(db, done_id) if k == "RECOVERY"] == [
        ("partner", Decimal("-8.00")),
        ("platform", Decimal("8.00")),
    ]
    # approved, refunded in full before it was completed (here by an operator's cancel; an incident's
    # full refund moves it to REFUNDED the same way): never a RIDE, no RECOVERY
    full_id = await world.book(db, world.values(client_id, partner_id, now, total="25.00", net="20.00"), now)
    await world.move(db, full_id, S.PENDING_APPROVAL, now)
    await world.move(db, full_id, S.APPROVED, now)
    refunded = await world.cancel(db, full_id, now, Actor.OPERATOR)
    async with db.write() as conn:
        assert await recover_partner_share(conn, refunded, Decimal("25.00"), now=now) == Decimal("0.00")
    assert [k for k, _, _ in await lines_of(db, full_id) if k in ("RIDE", "RECOVERY")] == []
    # approved, partly refunded (recovered: it will earn its RIDE), then cancelled: the recovery goes back
    part_id = await world.book(db, world.values(client_id, partner_id, now, total="25.00", net="20.00"), now)
    await world.move(db, part_id, S.PENDING_APPROVAL, now)
    approved = await world.move(db, part_id, S.APPROVED, now)
    async with db.write() as conn:
        assert await recover_partner_share(conn, approved, Decimal("5.00"), now=now) == Decimal("-4.00")
    await world.cancel(db, part_id, now, Actor.OPERATOR)
    recovered = [v for k, a, v in await lines_of(db, part_id) if k == "RECOVERY" and a == "partner"]
    assert recovered == [Decimal("-4.00"), Decimal("4.00")]
    await books_reconcile(db)


async def test_top_ups_come_from_the_world(db: Database, make_client: ClientFactory, clock: ShiftedClock) -> None:
    client_id, _ = await make_client(balance="12.00")
    await client_service.top_up(db, clock, client_id, Decimal("3.50"), actor="tests")
    async with db.read() as conn:
        wallet_id = (await conn.execute(select(wallets.c.id).where(wallets.c.client_id == client_id))).scalar_one()
        mine = select(journal_lines.c.entry_id).where(
            journal_lines.c.account == "wallet", journal_lines.c.owner_id == wallet_id
        )
        rows = await conn.execute(
            select(journal_entries.c.kind, journal_lines.c.account, journal_lines.c.amount)
            .join(journal_lines, journal_lines.c.entry_id == journal_entries.c.id)
            .where(journal_entries.c.id.in_(mine))
            .order_by(journal_lines.c.id)
        )
        assert [(str(k), str(a), Decimal(v)) for k, a, v in rows] == [
            ("credit_topup", "wallet", Decimal("12.00")),
            ("credit_topup", "world", Decimal("-12.00")),
            ("credit_topup", "wallet", Decimal("3.50")),
            ("credit_topup", "world", Decimal("-3.50")),
        ]
    await books_reconcile(db)


def test_an_unbalanced_entry_cannot_be_built() -> None:
    with pytest.raises(Unbalanced):
        NewEntry("x", "EUR", (Leg(PLATFORM, Decimal("1.00")), Leg(WORLD, Decimal("-0.99"))))
    with pytest.raises(Unbalanced):
        NewEntry("x", "EUR", (Leg(PLATFORM, Decimal("1.001")), Leg(WORLD, Decimal("-1.001"))))
    with pytest.raises(Unbalanced):
        NewEntry("x", "EUR", (Leg(PLATFORM, Decimal("0.00")),))


async def test_the_check_names_the_first_difference(
    db: Database, make_client: ClientFactory, clock: ShiftedClock
) -> None:
    """A wallet moved behind the journal's back is found (in a transaction rolled back after)."""
    client_id, _ = await make_client(balance="5.00")
    found: list[str | None] = []

    async def behind_the_journals_back() -> None:
        async with db.write() as conn:
            await conn.execute(wallets.update().where(wallets.c.client_id == client_id).values(balance=Decimal("6.00")))
            found.append(await check.first_difference(conn))
            raise Undo

    with pytest.raises(Undo):
        await behind_the_journals_back()
    assert found[0] is not None and "balance 6.00, its account 5.00" in found[0]
    await books_reconcile(db)


class Undo(Exception):
    """Rolls the test's write transaction back."""


async def test_a_third_partys_partial_incident_refund_goes_back_to_the_world(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    """docs/rules/statements.md#journal: a ``reverse_api`` booking's partial incident refund moves no
    wallet, yet the platform gives it back to the world in the resolution's transaction; the refund
    that completes the price gives the rest back, never more than was paid."""
    client_id, _ = await make_client(balance="0.00", pay_type="reverse_api")
    _, partner_id, _ = await make_partner()
    row = world.values(client_id, partner_id, clock.now(), total="33.33", net="22.22", pay_type="reverse_api")
    booking_id = await world.book(db, row, clock.now())
    await world.complete(db, booking_id, clock.now())
    late = await world.incident(db, clock, booking_id, IncidentType.DRIVER_LATE, responsible="partner", refund="10.01")
    assert late.status == "RESOLVED"
    # 10.01 back to the world; the partner's share -(10.01 x 22.22 / 33.33) = -6.673.. -> -6.67
    assert (await lines_of(db, booking_id))[4:] == [
        ("third_party_refund", "platform", Decimal("-10.01")),
        ("third_party_refund", "world", Decimal("10.01")),
        ("RECOVERY", "partner", Decimal("-6.67")),
        ("RECOVERY", "platform", Decimal("6.67")),
    ]
    await books_reconcile(db)
    await world.incident(db, clock, booking_id, IncidentType.OTHER, responsible="none", refund="23.32")
    lines = await lines_of(db, booking_id)
    refunds = [v for k, a, v in lines if k == "third_party_refund" and a == "world"]
    assert refunds == [Decimal("10.01"), Decimal("23.32")]  # 33.33 in all: the price, once
    assert sum(v for k, a, v in lines if a == "world") == Decimal("0.00")
    assert sum(v for k, a, v in lines if a == "partner") == Decimal("22.22") - Decimal("6.67")
    async with db.read() as conn:
        status = (await conn.execute(select(bookings.c.status).where(bookings.c.id == booking_id))).scalar_one()
    assert status == "REFUNDED"
    await books_reconcile(db)
