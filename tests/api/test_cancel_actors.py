"""The one cancel use case (``bookings/cancel.py``) for each actor: who may cancel, what a repeat
does, the fee, the refund the ledger moves, ``cancelled_by`` and whether the partner is told.

Run on a real booking (booked through the API from a fake partner) in the last tier of its policy,
where a client pays the whole price and everyone else refunds it in full."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.api.test_cancellation_policies import book, luxury_vehicles, move_clock_to, pickup_in
from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import ledger_of, row_of
from transfers.bookings.cancel import Actor, Cancelled, CancelRefused, CancelRequest, cancel_locked
from transfers.bookings.cancel_rules import refund_due
from transfers.bookings.lifecycle import lock_booking
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import outbox
from transfers.errors import Code

PRICE = Decimal("56.05")


def request_of(actor: Actor, *, key: str = "cancel-key-1") -> CancelRequest:
    told = actor in (Actor.CLIENT, Actor.OPERATOR)
    return CancelRequest(
        actor,
        f"{actor.value}:tests",
        f"cancelled by {actor.value} in the matrix",
        note="a note",
        partner_reason="Change of plans" if told else None,
        reason_id=1 if actor is Actor.CLIENT else None,
        idempotency_key=key if actor is Actor.CLIENT else None,
    )


async def cancel_now(db: Database, clock: ShiftedClock, reservation_no: str, request: CancelRequest) -> Cancelled:
    booking_id = (await row_of(db, reservation_no))["id"]
    async with db.write() as conn:
        booking = await lock_booking(conn, booking_id)
        assert booking is not None
        return await cancel_locked(conn, booking, request, now=clock.now())


async def partner_notices(db: Database, reservation_no: str) -> list[dict[str, Any]]:
    booking_id = (await row_of(db, reservation_no))["id"]
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(outbox.c.payload)
                .where(outbox.c.booking_id == booking_id, outbox.c.kind == "booking.update")
                .order_by(outbox.c.id)
            )
        ).all()
    return [dict(row.payload) for row in rows]


# actor, fee kept, cancelled_by, the partner told, a repeat of the same request
MATRIX = [
    (Actor.CLIENT, PRICE, "client", True, "no-op"),
    (Actor.PARTNER, Decimal("0.00"), "partner", False, "no-op"),
    (Actor.HOSTED_PORTAL, Decimal("0.00"), "partner", False, "no-op"),
    (Actor.OPERATOR, Decimal("0.00"), "operator", True, "refused"),
]


@pytest.mark.parametrize(("actor", "fee", "by", "told", "repeat"), MATRIX, ids=[m[0].value for m in MATRIX])
async def test_each_actor_cancels_through_the_one_use_case(
    actor: Actor,
    fee: Decimal,
    by: str,
    told: bool,
    repeat: str,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner(vehicles=luxury_vehicles(str(PRICE)))
    _, key = await make_client()
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    pickup_at = (await row_of(db, reservation_no))["pickup_at"]
    move_clock_to(clock, pickup_at - timedelta(hours=2))  # the last tier: a client pays 100 %

    done = await cancel_now(db, clock, reservation_no, request_of(actor))

    assert not done.repeated
    row = await row_of(db, reservation_no)
    assert (row["status"], row["cancelled_by"]) == ("CANCELLED", by)
    assert (row["cancellation_fee"], row["cancellation_refund"]) == (fee, PRICE - fee)
    assert refund_due(done.booking) == PRICE - fee
    assert row["cancel_note"] == "a note"
    assert row["cancel_idempotency_key"] == ("cancel-key-1" if actor is Actor.CLIENT else None)
    refunds = [("credit_refund", PRICE - fee)] if PRICE - fee > 0 else []  # a fee of the whole price: no entry
    assert await ledger_of(db, reservation_no) == [("debit_booking", -PRICE), *refunds]
    notices = await partner_notices(db, reservation_no)
    if told:
        assert [(n["status"], n["cancel_reason"], n["note"]) for n in notices] == [
            ("CANCELLED", "Change of plans", "a note")
        ]
    else:
        assert notices == []

    if repeat == "no-op":
        again = await cancel_now(db, clock, reservation_no, request_of(actor))
        assert again.repeated
    else:
        with pytest.raises(CancelRefused) as refused:
            await cancel_now(db, clock, reservation_no, request_of(actor))
        assert refused.value.message == "a CANCELLED booking cannot be cancelled"
    assert await ledger_of(db, reservation_no) == [("debit_booking", -PRICE), *refunds]  # nothing twice
    assert len(await partner_notices(db, reservation_no)) == len(notices)


async def test_a_client_cancel_under_another_key_is_refused_with_1204(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner(vehicles=luxury_vehicles(str(PRICE)))
    _, key = await make_client()
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    await cancel_now(db, clock, reservation_no, request_of(Actor.CLIENT, key="first"))
    with pytest.raises(CancelRefused) as refused:
        await cancel_now(db, clock, reservation_no, request_of(Actor.CLIENT, key="second"))
    assert refused.value.code is Code.CANCELLATION_FAILED
    assert (await row_of(db, reservation_no))["cancel_idempotency_key"] == "first"


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [(Actor.CLIENT, False), (Actor.PARTNER, True), (Actor.HOSTED_PORTAL, True), (Actor.OPERATOR, True)],
    ids=lambda value: value.value if isinstance(value, Actor) else str(value),
)
async def test_after_the_pickup_only_the_client_may_not_cancel(
    actor: Actor,
    allowed: bool,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner(vehicles=luxury_vehicles(str(PRICE)))
    _, key = await make_client()
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    pickup_at = (await row_of(db, reservation_no))["pickup_at"]
    move_clock_to(clock, pickup_at + timedelta(hours=1))  # not yet COMPLETED (pickup + 12 h)
    if allowed:
        done = await cancel_now(db, clock, reservation_no, request_of(actor))
        assert done.booking.status.value == "CANCELLED"
        assert done.booking.cancellation_refund == PRICE  # in full, whoever else cancels
    else:
        with pytest.raises(CancelRefused):
            await cancel_now(db, clock, reservation_no, request_of(actor))
        assert (await row_of(db, reservation_no))["status"] != "CANCELLED"
        assert await ledger_of(db, reservation_no) == [("debit_booking", -PRICE)]
