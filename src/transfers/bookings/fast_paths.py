"""The two booking writes that are one statement each on PostgreSQL, and their general fallbacks.

* ``store_created``: a new booking, its creation's side effects (audit row, the partner's create
  message, the wallet debit): one statement of data-modifying CTEs on PostgreSQL, one write
  transaction on SQLite (no DML in CTEs there).
* ``finish_acknowledged``: the partner's usual answer to a create (accepted, no driver yet):
  the attempt, the message finished, ``PENDING -> PENDING_APPROVAL`` with the partner's reference
  and that change's side effects, in one statement (PostgreSQL only; otherwise the dispatcher takes
  the general path).

Each statement is all-or-nothing by itself, so it runs in autocommit on the direct connections of
``db/direct.py`` (``Database.write_one``): they are the measured performance of a create
(docs/operations/performance.md). A return trip's pair (``store_created_many``) runs the create
statement once per leg, unchanged, in ONE transaction on a direct connection (``Database.write_all``:
BEGIN, leg 1, leg 2, COMMIT; ROLLBACK when a leg's debit does not fit, so 1101 is decided on the
sum): through the general path the pair cost 2.87x one create's CPU (8.08 / 2.82 ms, target 1.6x,
docs/operations/performance-history.md#return-trips), and reusing the frozen SQL adds no statement to keep equal
(tests/integration/test_fast_paths_equal.py compares a pair written both ways too). The side
effects are not written here: each statement binds the rows ``lifecycle.effect_steps`` gives (every
effect's own function, ``bookings/effects.py``) and takes from its CTEs only what it makes itself
(``bookings/fast_rows.py``), so a side effect added to ``EFFECTS`` is written by these statements
too, or makes them step aside for a change it has no SQL form for (the general path then).

FROZEN at these two statements (the pair runs the first of them once per leg). A new
booking write, however hot, takes the general path (``lifecycle.transition`` & co. in a
``Database.write()`` transaction). Why: each statement here is a second way to write the booking
row and to gate its side effects on it; keeping it equal to the general path costs a PostgreSQL
test per statement that compares every row both paths write (tests/integration/test_fast_paths_equal.py),
and these two were measured to matter (docs/operations/performance-history.md#profile, change 13: a create went from
~29 round trips to 5).
tests/unit/test_fast_paths_frozen.py fails when a third one appears, or another caller of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import FromClause, bindparam, exists, func, insert, select, true, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import lifecycle
from transfers.bookings.fast_rows import FastPlan, Shape, fast_plan, step_ctes
from transfers.bookings.lifecycle import CREATED_REASON, Change
from transfers.bookings.models import UNASSIGNED_ID, Booking
from transfers.bookings.state import BookingStatus
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import bookings, outbox
from transfers.delivery import repository as outbox_repo
from transfers.delivery import statement_pieces
from transfers.delivery.models import NewMessage, OutboxMessage
from transfers.delivery.queue import Attempt
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import InsufficientBalance

S = BookingStatus
ACKNOWLEDGED_REASON = "partner acknowledged"


# --- create ------------------------------------------------------------------------------------------


async def store_created(
    db: Database,
    values: dict[str, Any],
    *,
    actor: str,
    message: NewMessage,
    before: Callable[[AsyncConnection], Awaitable[None]] | None = None,
    created: Booking | None = None,
) -> tuple[int, OutboxMessage]:
    """Write a new booking (``values``: its columns, ``status`` PENDING), its "created" audit row,
    the partner's create message (``message``, from ``outbox.repository.new_message``) and, for a
    wallet payer, the debit with its ledger entry; returns (booking id, the message as stored).

    Raises InsufficientBalance when the debit does not fit, and then nothing is written. On
    PostgreSQL all of it is one statement (``_created_statement``): one round trip instead of six,
    atomic by itself. SQLite runs ``lifecycle.create`` (the same writes one by one, the debit last)
    in one write transaction, rolled back on InsufficientBalance.

    ``before``: a write that must commit with the booking or not at all, run first in the same
    transaction (a hosted vehicle's seat, ``bookings/hosted_capacity.py``; it raises to refuse the booking).
    With one, PostgreSQL takes the general transaction too: the counter's row lock is held until the
    booking commits, which is what makes the last seat go to exactly one booking.

    ``created``: ``Booking.new(values, UNASSIGNED_ID)`` when the caller built it already (for the
    partner's payload), so that it is not built twice."""
    step = None if db.is_sqlite or before is not None else _created_step(values, actor, message, created)
    if step is None:  # SQLite, a ``before``, or an effect with no SQL form for this creation
        async with db.write() as conn:
            if before is not None:
                await before(conn)
            booking_id = await lifecycle.create(conn, values, actor=actor, messages=(message,))
            message_id = await outbox_repo.id_of(conn, message.webhook_id)
        return booking_id, message.stored(message_id, booking_id)
    row = await db.write_one(step[0], **step[1])
    if row is None:  # the debit did not fit, so nothing was written
        raise InsufficientBalance()
    return _stored(row, message, step[2])


async def store_created_many(
    db: Database,
    legs: Sequence[tuple[dict[str, Any], NewMessage]],
    *,
    actor: str,
    before: Callable[[AsyncConnection], Awaitable[None]] | None = None,
) -> list[tuple[int, OutboxMessage]]:
    """``store_created`` for several bookings (a return trip's legs: (values, create message) each)
    all or nothing; (booking id, the message as stored) of each, in order. Raises
    InsufficientBalance when the debits do not fit together, and then nothing is written.

    On PostgreSQL the create statement (``_created_statement``, the same frozen SQL) runs once per
    leg in ONE transaction on a direct connection (``Database.write_all``): BEGIN, leg 1, leg 2,
    COMMIT, or ROLLBACK when a leg's statement answers no row. The second debit is taken after the
    first on the same wallet, so "each fits in turn" is exactly "their sum fits" (1101 on the sum,
    docs/rules/return-trips.md#create), and each ledger entry's ``balance_after`` is the balance
    after it. Why not the general path there: it cost 2.87x one create's CPU (8.08 / 2.82 ms,
    ~10 statements through the engine; docs/operations/performance-history.md#return-trips, target 1.6x).

    SQLite, or with ``before`` (the flight watches and a hosted leg's seats, which must commit with
    the bookings), runs ``lifecycle.create_many`` in one write transaction, as the single create's
    ``before`` does."""
    # Every leg with the same columns (a column one leg lacks is NULL, as ``lifecycle.create_many`` writes
    # it), so the legs share one statement and go to the server in one round trip (``write_all``).
    columns = dict.fromkeys(key for values, _ in legs for key in values)
    steps = (
        []
        if db.is_sqlite or before is not None
        else [_created_step({key: values.get(key) for key in columns}, actor, message) for values, message in legs]
    )
    if not steps or any(step is None for step in steps):
        async with db.write() as conn:
            if before is not None:
                await before(conn)
            ids, message_ids = await lifecycle.create_many(
                conn, [(values, (message,)) for values, message in legs], actor=actor
            )
        return [
            (booking_id, message.stored(message_ids[message.webhook_id], booking_id))
            for booking_id, (_, message) in zip(ids, legs, strict=True)
        ]
    ready = [step for step in steps if step is not None]
    rows = await db.write_all([(statement, params) for statement, params, _ in ready])
    if rows is None:  # a debit did not fit after the ones before it: nothing was written
        raise InsufficientBalance()
    return [_stored(row, message, step[2]) for row, (_, message), step in zip(rows, legs, ready, strict=True)]


def _created_step(
    values: dict[str, Any], actor: str, message: NewMessage, created: Booking | None = None
) -> tuple[DirectStatement, dict[str, Any], str] | None:
    """The create statement for ``values``, its bind values and the result column of the message's
    id (one booking's ``store_created``; ``created``: its ``Booking.new`` when the caller built it
    already); None when a side effect of this creation has no SQL form (the general path then)."""
    if created is None:
        created = Booking.new(values, UNASSIGNED_ID)
    change = Change(created, None, created.status, actor, CREATED_REASON, created.created_at, (message,))
    plan = fast_plan(lifecycle.effect_steps(change))
    if plan is None or plan.bumped:
        return None
    keys = tuple(values)
    names = _BOOKING_NAMES.get(keys)
    if names is None:
        names = _BOOKING_NAMES[keys] = tuple(f"bk_{k}" for k in keys)
    params = dict(zip(names, values.values()))  # noqa: B905 (the names are made from these very keys)
    params.update(plan.params)
    message_id = next(column for column, key in plan.keyed if key == message.webhook_id)
    return _created_statement(keys, plan), params, message_id


def _stored(row: dict[str, Any], message: NewMessage, message_id: str) -> tuple[int, OutboxMessage]:
    booking_id = int(row["booking_id"])
    return booking_id, message.stored(int(row[message_id]), booking_id)


_CREATED: dict[tuple[tuple[str, ...], Shape], DirectStatement] = {}
_BOOKING_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}  # the booking's bind names, by its columns


# Fast statement 1 of 2 (frozen: new writes take the general path, see the module docstring).
def _created_statement(keys: tuple[str, ...], plan: FastPlan) -> DirectStatement:
    """``store_created``'s PostgreSQL statement for this set of booking columns and this shape of
    side effects, built once.

    With a debit, the wallet UPDATE (``w``, the one "never below zero" move of
    ``wallet.repository``) comes first and the booking is inserted from its RETURNING row; every
    side effect's row is selected from the booking's. When the balance does not cover the price the
    UPDATE matches no row and nothing at all is written (the statement answers no row), so the
    statement is atomic and complete on its own, even in autocommit."""
    found = _CREATED.get((keys, plan.shape))
    if found is not None:
        return found
    now = bindparam("bk_created_at", type_=bookings.c.created_at.type)
    booking = {k: bindparam(f"bk_{k}", type_=bookings.c[k].type) for k in keys}
    wallet = None
    if plan.wallet:
        wallet = wallet_repo.MOVE_BY_CLIENT.values(updated_at=now).cte("w")
        b = (
            insert(bookings)
            .from_select(list(keys), select(*booking.values()).select_from(wallet))
            .returning(*bookings.c)
            .cte("b")
        )
    else:
        b = insert(bookings).values(booking).returning(*bookings.c).cte("b")
    ctes, keyed = step_ctes(plan.shape, b, wallet, now)
    answered: FromClause = b
    for cte in keyed.values():
        answered = answered.join(cte, true())
    statement = DirectStatement(
        select(b.c.id.label("booking_id"), *(cte.c.id.label(column) for column, cte in keyed.items()))
        .select_from(answered)
        .add_cte(*ctes)
    )
    _CREATED[(keys, plan.shape)] = statement
    return statement


# --- the partner's acknowledgement -------------------------------------------------------------------

# Fast statement 2 of 2 (frozen: new writes take the general path, see the module docstring).
_ACKNOWLEDGE: dict[Shape, DirectStatement] = {}


def _acknowledge_statement(plan: FastPlan) -> DirectStatement:
    """PostgreSQL, one statement: the booking moved PENDING -> PENDING_APPROVAL with the partner's
    reference and the change's side effects (``plan``), the message finished and the attempt
    recorded, or nothing at all; built once per shape of side effects.

    Everything hangs on the booking UPDATE (``b``), which only matches a PENDING booking whose
    message is still leased to the caller; the message's own UPDATE (``f``) re-checks the lease
    under its row lock. No row back: nothing was written (the booking was not PENDING, or the
    lease was gone). Being all-or-nothing it may run in autocommit."""
    found = _ACKNOWLEDGE.get(plan.shape)
    if found is not None:
        return found
    now = bindparam("m_now", type_=outbox.c.finished_at.type)
    reference = func.coalesce(bindparam("b_ref", type_=bookings.c.partner_reference.type), bookings.c.partner_reference)
    fields: dict[str, Any] = {"partner_reference": reference}
    if plan.bumped:  # the change's client events take their numbers here (``event_effects.event_rows``'s ``Bump``)
        fields["event_sequence"] = bookings.c.event_sequence + plan.bumped
    b = (
        update(bookings)
        .where(
            bookings.c.id == bindparam("b_id"),
            bookings.c.status == S.PENDING.value,
            exists(select(outbox.c.id).where(statement_pieces.held_by_caller())),
        )
        .values(lifecycle.status_values(S.PENDING_APPROVAL, now, fields))
        .returning(*bookings.c)
        .cte("b")
    )
    f = statement_pieces.delivered_fragment(b, now)
    ctes, _ = step_ctes(plan.shape, b, None, now)
    statement = DirectStatement(
        select(*b.c, f.c.id.label("finished_id"))
        .select_from(b.outerjoin(f, true()))
        .add_cte(statement_pieces.attempt_fragment(b), *ctes)
    )
    _ACKNOWLEDGE[plan.shape] = statement
    return statement


async def finish_acknowledged(
    db: Database,
    message: OutboxMessage,
    *,
    attempt: Attempt,
    partner_reference: str | None,
    actor: str,
    now: datetime,
) -> Booking | None:
    """``record_attempt`` + ``finish(DELIVERED)`` + ``partner_updates.acknowledge`` of a PENDING
    booking (the usual effect of an accepting create answer) in one round trip and in autocommit by
    the direct path (``Database.write_one``), PostgreSQL only (SQLite has no DML in CTEs). Returns
    the booking as moved, or None when nothing was written (or a side effect of the change has no
    SQL form): the caller then records and applies the answer the general way."""
    change = Change(None, S.PENDING, S.PENDING_APPROVAL, actor, ACKNOWLEDGED_REASON, now)
    plan = fast_plan(lifecycle.effect_steps(change))
    if plan is None or plan.wallet or plan.keyed:
        return None
    row = await db.write_one(
        _acknowledge_statement(plan),
        m_id=message.id,
        m_lease=message.lease_until,
        m_now=now,
        b_id=message.booking_id,
        b_ref=partner_reference or None,
        **statement_pieces.attempt_params(attempt),
        **plan.params,
    )
    # finished_id is NULL only if the lease was taken between the two UPDATEs' checks (a lease
    # outliving its 60 s): the answer is applied all the same, and the new holder's redelivery
    # (same webhook-id) finds the booking acknowledged already.
    return None if row is None else Booking.from_row(row)  # the booking's columns (and finished_id)
