"""The side effects every booking status change writes, listed once in ``EFFECTS`` (the paths that
move a status, general and fast, are ``bookings/lifecycle.py`` and ``bookings/fast_paths.py``).

How to add a side effect of every status change (e.g. issue 14's ``client_events`` row with the
booking's ``sequence``):

1. Here (``bookings/effects.py``), write ``async def _x_write(conn, change)`` (the general path: insert its row(s) for
   ``change``; ``change.booking`` is the booking as moved, with its id), ``def _x_fragment(ctx)``
   (the fast path: ``{name: insert(...).from_select(..., select(ctx.moved.c.id, ...)).cte(name)}``,
   reading the moved row's columns from ``ctx.moved.c`` and its own values from bind parameters
   with a prefix of its own) and ``def _x_params(change, shape)`` (those bind values), and add
   ``SideEffect("x", _x_write, _x_fragment, _x_params)`` to ``EFFECTS``.
2. If the effect needs a column of the booking changed with the status (``sequence = sequence + 1``),
   add it to ``status_values`` (every UPDATE path uses it) and to the creation's values in
   ``bookings/service._booking_values``.
3. Nothing else: every general path calls ``write_effects`` and both fast statements compose
   ``fast_pieces``. ``tests/integration/test_outbox_and_jobs.py`` and ``tests/api`` check the rows
   on both databases; ``tests/unit/test_status_writers.py`` fails if ``bookings.status`` is
   written anywhere outside ``bookings/``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CTE, ColumnElement, bindparam, insert, literal, null, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import event_effects, hosted_capacity, journal_effects, ledger_effects
from transfers.bookings import repository as repo
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus
from transfers.db.tables import booking_transitions, outbox
from transfers.delivery import repository as outbox_repo
from transfers.delivery import statement_pieces
from transfers.delivery.models import NewMessage
from transfers.partners.calls import MessageKind

UPDATE_DEADLINE = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class Change:
    """One status change as its side effects see it. ``booking``: the booking as moved, with its id,
    on the general path. On a fast path what is known before the statement runs: a creation's
    booking from its values (``Booking.new``, its id ``UNASSIGNED_ID``: the statement's INSERT gives
    it, and every fragment reads it from the inserted row); None for the acknowledgement, which reads
    nothing before its UPDATE."""

    booking: Booking | None
    from_status: BookingStatus | None  # None: the booking is being created
    to_status: BookingStatus
    actor: str
    reason: str | None
    now: datetime
    messages: tuple[NewMessage, ...] = ()  # ``outbox.repository.new_message``
    # The booking before the change, when the path read it (issue 14: what the client events compare).
    previous: Booking | None = None

    @property
    def moved(self) -> Booking:
        """The booking as moved, for a side effect that needs it (every general path has it)."""
        if self.booking is None:
            raise ValueError("a fast acknowledgement's change carries no booking: its fragments read the moved row")
        return self.booking


@dataclass(frozen=True, slots=True)
class FastShape:
    """What a fast statement's pieces depend on, fixed when the statement is built."""

    from_status: BookingStatus | None
    to_status: BookingStatus
    messages: int = 0  # outbox messages written with the change: CTEs ``o0``, ``o1``, ...
    wallet: bool = False  # the statement moves the wallet first (CTE ``w``, the creation's debit)


@dataclass(frozen=True, slots=True)
class FastContext:
    """What a fragment builds on: the moved booking row (a CTE ``... RETURNING *`` of ``bookings``),
    the statement's shape, its ``now`` and, when ``shape.wallet``, the wallet move's CTE."""

    moved: CTE
    shape: FastShape
    now: ColumnElement[Any]
    wallet: CTE | None = None


@dataclass(frozen=True, slots=True)
class SideEffect:
    """One side effect of every status change, written the general way (``write``) or as pieces of
    a fast statement (``fragment`` once when it is built, ``params`` on every run)."""

    name: str
    write: Callable[[AsyncConnection, Change], Awaitable[None]]
    fragment: Callable[[FastContext], dict[str, CTE]]
    params: Callable[[Change, FastShape], dict[str, Any]]
    # Several changes at once (a return trip's two creations, ``write_effects_many``) in fewer round
    # trips; None: ``write`` for each change in turn. It may answer the ids of the rows it wrote by a
    # key of theirs (the outbox messages' by webhook id), which ``write_effects_many`` hands back.
    write_many: Callable[[AsyncConnection, Sequence[Change]], Awaitable[Mapping[str, int] | None]] | None = None


# --- the moved row -----------------------------------------------------------------------------------


def status_values(target: BookingStatus, now: Any, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The SET clause of every status UPDATE, general or fast (``now`` a value or a bind parameter)."""
    return {"status": target.value, "updated_at": now, **(fields or {})}


# --- audit -------------------------------------------------------------------------------------------


async def _audit_write(conn: AsyncConnection, change: Change) -> None:
    await repo.record_transition(
        conn,
        booking_id=change.moved.id,
        to_status=change.to_status.value,
        actor=change.actor,
        from_status=change.from_status.value if change.from_status is not None else None,
        reason=change.reason,
        now=change.now,
    )


async def _audit_write_many(conn: AsyncConnection, changes: Sequence[Change]) -> None:
    await repo.record_transitions(
        conn,
        [
            {
                "booking_id": change.moved.id,
                "from_status": change.from_status.value if change.from_status is not None else None,
                "to_status": change.to_status.value,
                "actor": change.actor,
                "reason": change.reason,
                "created_at": change.now,
            }
            for change in changes
        ],
    )


def _audit_fragment(ctx: FastContext) -> dict[str, CTE]:
    shape, types = ctx.shape, booking_transitions.c
    from_status = null() if shape.from_status is None else literal(shape.from_status.value, types.from_status.type)
    return {
        "t": insert(booking_transitions)
        .from_select(
            ["booking_id", "from_status", "to_status", "actor", "reason", "created_at"],
            select(
                ctx.moved.c.id,
                from_status,
                literal(shape.to_status.value, types.to_status.type),
                bindparam("t_actor", type_=types.actor.type),
                bindparam("t_reason", type_=types.reason.type),
                ctx.now,
            ),
        )
        .cte("t")
    }


def _audit_params(change: Change, shape: FastShape) -> dict[str, Any]:
    return {"t_actor": change.actor, "t_reason": change.reason}


# --- outbox messages ---------------------------------------------------------------------------------


async def _messages_write(conn: AsyncConnection, change: Change) -> None:
    for message in change.messages:
        await outbox_repo.insert_message(conn, message, booking_id=change.moved.id)


async def _messages_write_many(conn: AsyncConnection, changes: Sequence[Change]) -> Mapping[str, int]:
    return await outbox_repo.insert_messages(
        conn, [(message, change.moved.id) for change in changes for message in change.messages]
    )


def _messages_fragment(ctx: FastContext) -> dict[str, CTE]:
    pieces = {}
    for i in range(ctx.shape.messages):
        values = (bindparam(f"o{i}_{k}", type_=outbox.c[k].type) for k in statement_pieces.MESSAGE_KEYS)
        pieces[f"o{i}"] = (
            insert(outbox)
            .from_select(["booking_id", *statement_pieces.MESSAGE_KEYS], select(ctx.moved.c.id, *values))
            .returning(outbox.c.id)
            .cte(f"o{i}")
        )
    return pieces


def _messages_params(change: Change, shape: FastShape) -> dict[str, Any]:
    if len(change.messages) != shape.messages:
        raise ValueError(f"the statement writes {shape.messages} messages, the change has {len(change.messages)}")
    return {
        f"o{i}_{k}": getattr(message, k)
        for i, message in enumerate(change.messages)
        for k in statement_pieces.MESSAGE_KEYS
    }


def update_message(booking: Booking, payload: dict[str, Any], now: datetime) -> NewMessage:
    """The partner's ``PUT /booking/update`` for a change (a client's cancellation)."""
    return outbox_repo.new_message(
        partner_id=booking.partner_id,
        kind=MessageKind.UPDATE.value,
        payload=payload,
        now=now,
        deadline=now + UPDATE_DEADLINE,
        not_before=None,
        lease_until=None,
    )


# Order of the general path: the ledger last, since its wallet UPDATE holds the wallet row's lock
# until COMMIT (bench/README.md, "Profile").
# issue 16: a hosted partner's booking that ends without a ride gives its seat of the day back.
_SEAT_RELEASED = frozenset({BookingStatus.CANCELLED, BookingStatus.DECLINED, BookingStatus.FAILED})


def _releases_seat(from_status: BookingStatus | None, to_status: BookingStatus) -> bool:
    return from_status is not None and from_status != to_status and to_status in _SEAT_RELEASED


async def _capacity_write(conn: AsyncConnection, change: Change) -> None:
    """The seat a hosted vehicle's booking held on its local pickup date (``bookings/hosted_capacity.py``);
    for a server partner's booking there is no counter row and nothing changes."""
    if _releases_seat(change.from_status, change.to_status):
        await hosted_capacity.release(conn, change.moved)
    elif change.previous is not None and change.previous.pickup_at != change.moved.pickup_at:
        # issue 23: the hosted capacity day counts from the current pickup (docs/rules/flights.md#pickup-moves)
        await hosted_capacity.move(conn, change.previous, change.moved.pickup_at)


def _capacity_fragment(ctx: FastContext) -> dict[str, CTE]:
    # The fast statements (create: -> PENDING; acknowledgement: -> PENDING_APPROVAL) never end a
    # booking; one that did would need the counter's UPDATE here.
    if _releases_seat(ctx.shape.from_status, ctx.shape.to_status):
        raise NotImplementedError("a fast statement ending a booking must give back its hosted seat")
    return {}


def _capacity_params(change: Change, shape: FastShape) -> dict[str, Any]:
    return {}


EFFECTS: tuple[SideEffect, ...] = (
    SideEffect("audit", _audit_write, _audit_fragment, _audit_params, _audit_write_many),
    SideEffect("messages", _messages_write, _messages_fragment, _messages_params, _messages_write_many),
    SideEffect(
        "events",
        event_effects.events_write,
        event_effects.events_fragment,
        event_effects.events_params,
        event_effects.events_write_many,
    ),  # issue 14
    SideEffect(
        "ledger",
        ledger_effects.ledger_write,
        ledger_effects.ledger_fragment,
        ledger_effects.ledger_params,
        ledger_effects.ledger_write_many,
    ),
    # issue 24: third parties' payments and the partners' earnings (the wallet's own moves are journaled with them)
    SideEffect(
        "journal",
        journal_effects.journal_write,
        journal_effects.journal_fragment,
        journal_effects.journal_params,
        journal_effects.journal_write_many,
    ),
    SideEffect("capacity", _capacity_write, _capacity_fragment, _capacity_params),
)


async def write_effects(conn: AsyncConnection, change: Change) -> None:
    """Every side effect of ``change``, the general way, in the caller's transaction."""
    for effect in EFFECTS:
        await effect.write(conn, change)


async def write_effects_many(conn: AsyncConnection, changes: Sequence[Change]) -> dict[str, int]:
    """``write_effects`` of every one of ``changes`` (all in the caller's transaction, all ``now``
    alike), effect by effect, each effect's rows for all changes in one round trip where it can
    (a return trip's pair, docs/rules/return-trips.md#create; a flight watch pass's moves, bounded
    multi-row statements, docs/rules/flights.md#watching). Answers the ids the effects' statements
    returned by key: the outbox messages' ids by webhook id (a return trip's deliveries need them)."""
    ids: dict[str, int] = {}
    if not changes:
        return ids
    for effect in EFFECTS:
        if effect.write_many is not None:
            ids.update((await effect.write_many(conn, changes)) or {})
        else:
            for change in changes:
                await effect.write(conn, change)
    return ids


def fast_pieces(ctx: FastContext) -> dict[str, CTE]:
    """Every side effect's CTEs for a fast statement, by CTE name (``t``, ``o0``, ``l``, ...)."""
    pieces: dict[str, CTE] = {}
    for effect in EFFECTS:
        pieces.update(effect.fragment(ctx))
    return pieces


def fast_params(change: Change, shape: FastShape) -> dict[str, Any]:
    """The bind values of ``fast_pieces`` for one run."""
    params: dict[str, Any] = {}
    for effect in EFFECTS:
        params.update(effect.params(change, shape))
    return params
