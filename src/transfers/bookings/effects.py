"""The side effects every booking status change writes, listed once in ``EFFECTS`` (the paths that
move a status, general and fast, are ``bookings/lifecycle.py`` and ``bookings/fast_paths.py``).

A side effect is ONE pure function of the change that answers what it writes
(``bookings/effect_rows.py``): ``Insert(table, {column: value})`` rows, in order, where a value the
write itself makes is named, not known (``Of(MOVED, "id")`` / ``BOOKING_ID``: the booking's id, which
a creation only learns from its INSERT; ``Of(step, "id")``: an earlier row's id; a ``WalletMove``'s
outcome; a ``Bump``'s event numbers). The general path runs those steps (``write_effects``); the
PostgreSQL one-statement create and acknowledgement bind the same rows as parameters and take the
named values from their CTEs (``bookings/fast_rows.py``). No rule exists twice.

How to add a side effect of every status change (docs/architecture/how-to-add.md, "A side effect"):

1. Write ``def x_rows(change: Change) -> list[Step]`` (here, or in a module of its own beside
   ``event_effects.py``): the rows it writes for ``change`` (``[]``: none for this change).
   ``change.booking`` is the booking as moved (None on the fast acknowledgement, which reads nothing:
   use ``Of(MOVED, column)`` for a column of the moved row); name its id ``BOOKING_ID``, never
   ``change.moved.id`` (a creation's is not known yet on the fast path).
2. Add ``SideEffect("x", x_rows)`` to ``EFFECTS``.
3. If its rows need the database first (a read, a counter's UPDATE), answer a ``Call``: the general
   path runs it, and the fast statements step aside (take the general path) for a change that has
   one. If it needs a column of the booking changed with the status, add it to ``status_values``
   and the creation's values (``bookings/service._booking_values``).

Nothing else: every general path calls ``write_effects`` and both fast statements write
``effect_steps``. ``tests/integration/test_effect_rows.py`` checks that each effect's rows are what
both paths write, ``tests/integration/test_fast_paths_equal.py`` that both paths write the same rows
(PostgreSQL), and ``tests/unit/test_status_writers.py`` that ``bookings.status`` is written nowhere
outside ``bookings/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import effects_repository, event_effects, hosted_capacity, journal_effects, ledger_effects
from transfers.bookings.effect_rows import BOOKING_ID, NOW, Call, Insert, Step
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus
from transfers.delivery import repository as outbox_repo
from transfers.delivery.models import NewMessage
from transfers.partners.calls import MessageKind

UPDATE_DEADLINE = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class Change:
    """One status change as its side effects see it. ``booking``: the booking as moved, with its id,
    on the general path. On a fast path what is known before the statement runs: a creation's
    booking from its values (``Booking.new``, its id ``UNASSIGNED_ID``: the statement's INSERT gives
    it, so the rows name it ``BOOKING_ID``); None for the acknowledgement, which reads nothing
    before its UPDATE (its rows name the moved row's columns ``Of(MOVED, ...)``)."""

    booking: Booking | None
    from_status: BookingStatus | None  # None: the booking is being created
    to_status: BookingStatus
    actor: str
    reason: str | None
    now: datetime
    messages: tuple[NewMessage, ...] = ()  # ``outbox.repository.new_message``
    # The booking before the change, when the path read it (what the client events compare).
    previous: Booking | None = None

    @property
    def moved(self) -> Booking:
        """The booking as moved, for a side effect that needs it (every general path has it)."""
        if self.booking is None:
            raise ValueError("a fast acknowledgement's change carries no booking: name the moved row's columns (Of)")
        return self.booking


@dataclass(frozen=True, slots=True)
class SideEffect:
    """One side effect of every status change: ``rows``, the rule, answers what it writes for a
    change (``effect_rows``: rows to insert, and the values the write makes); both paths write it."""

    name: str
    rows: Callable[[Change], Sequence[Step]]


# --- the moved row -----------------------------------------------------------------------------------


def status_values(target: BookingStatus, now: Any, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The SET clause of every status UPDATE, general or fast (``now`` a value or a bind parameter)."""
    return {"status": target.value, "updated_at": now, **(fields or {})}


# --- audit -------------------------------------------------------------------------------------------


def audit_rows(change: Change) -> list[Step]:
    """The ``booking_transitions`` row: when, who, from, to, why."""
    known = {
        "from_status": change.from_status.value if change.from_status is not None else None,
        "to_status": change.to_status.value,
        "actor": change.actor,
        "reason": change.reason,
    }
    return [Insert("booking_transitions", known, _OF_THE_CHANGE)]


_OF_THE_CHANGE = {"booking_id": BOOKING_ID, "created_at": NOW}
_OF_THE_BOOKING = {"booking_id": BOOKING_ID}


# --- outbox messages ---------------------------------------------------------------------------------


def message_rows(change: Change) -> list[Step]:
    """The outbox messages the change sends to the partner, each answered by its ``webhook_id``."""
    return [Insert("outbox", message.values(), _OF_THE_BOOKING, key="webhook_id") for message in change.messages]


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


# --- a hosted vehicle's seat -------------------------------------------------------------------------
# docs/rules/hosted-partners.md: a hosted partner's booking that ends without a ride gives its seat of the day back.
_SEAT_RELEASED = frozenset({BookingStatus.CANCELLED, BookingStatus.DECLINED, BookingStatus.FAILED})


def capacity_rows(change: Change) -> list[Step]:
    """The seat a hosted vehicle's booking held on its local pickup date (``bookings/hosted_capacity.py``),
    given back or moved: a counter's UPDATE, so a ``Call`` (no fast form; no fast statement ends a
    booking or moves its pickup). For a server partner's booking there is no counter row and nothing changes."""
    if change.from_status is not None and change.from_status != change.to_status and change.to_status in _SEAT_RELEASED:
        moved = change.moved
        return [Call(lambda conn: hosted_capacity.release(conn, moved))]
    previous = change.previous
    if previous is not None and previous.pickup_at != change.moved.pickup_at:
        # the hosted capacity day counts from the current pickup (docs/rules/flights.md#pickup-moves)
        pickup_at = change.moved.pickup_at
        return [Call(lambda conn: hosted_capacity.move(conn, previous, pickup_at))]
    return []


# The order of the general path: the ledger after the others, since its wallet UPDATE holds the wallet
# row's lock until COMMIT (docs/operations/performance.md).
EFFECTS: tuple[SideEffect, ...] = (
    SideEffect("audit", audit_rows),
    SideEffect("messages", message_rows),
    SideEffect("events", event_effects.event_rows),  # docs/rules/webhooks.md
    SideEffect("ledger", ledger_effects.ledger_rows),
    # third parties' payments and the partners' earnings (the wallet's own moves are journaled with them)
    SideEffect("journal", journal_effects.journal_rows),
    SideEffect("capacity", capacity_rows),
)


def effect_steps(change: Change) -> list[Step]:
    """Every side effect's steps for ``change``, in ``EFFECTS`` order (what a fast statement writes)."""
    return [step for effect in EFFECTS for step in effect.rows(change)]


async def write_effects(conn: AsyncConnection, change: Change) -> dict[str, int]:
    """Every side effect of ``change``, the general way, in the caller's transaction; the ids of the
    outbox messages it wrote, by webhook id."""
    ids: dict[str, int] = {}
    for effect in EFFECTS:
        steps = effect.rows(change)
        if steps:
            ids.update(await effects_repository.write_steps(conn, change, steps))
    return ids


async def write_effects_many(conn: AsyncConnection, changes: Sequence[Change]) -> dict[str, int]:
    """``write_effects`` of every one of ``changes`` (all in the caller's transaction, all ``now``
    alike), effect by effect, each effect's rows for all changes in as few statements as it can
    (``effects_repository.write_steps_many``: a return trip's pair, docs/rules/return-trips.md#create; a
    flight watch pass's moves, docs/rules/flights.md#watching). Answers the ids of the outbox
    messages by webhook id (a return trip's deliveries need them)."""
    ids: dict[str, int] = {}
    if not changes:
        return ids
    for effect in EFFECTS:
        planned = [(change, steps) for change in changes if (steps := effect.rows(change))]
        if planned:
            ids.update(await effects_repository.write_steps_many(conn, planned, now=changes[0].now))
    return ids
