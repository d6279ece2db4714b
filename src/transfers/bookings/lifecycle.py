"""The only code that decides what a booking's status change writes.

Every change of ``bookings.status`` (the creation included: ``None -> PENDING``) is a ``Change``,
and every change writes the same side effects, listed once in ``EFFECTS`` (``bookings/effects.py``), among them:

    audit     a ``booking_transitions`` row (time, actor, from, to, reason)
    messages  the outbox messages the change sends to the partner (the create, a cancellation)
    ledger    the wallet move: the debit of a wallet-paid creation, the refund on entering a
              ``REFUNDING`` status (exactly once: ``UNIQUE (booking_id, kind)`` backs it up)

Two kinds of path write them, and both take them from here:

* the general path (SQLite and PostgreSQL, inside the caller's write transaction):
  ``transition`` / ``transition_unread`` / ``update_details`` / ``create`` move the row with a
  compare-and-set and call ``write_effects``, which runs each effect's ``write``;
* the PostgreSQL fast paths (``bookings/fast_paths.py``: the create, the partner's acknowledgement),
  one all-or-nothing statement of data-modifying CTEs each: the statement builds the row's INSERT or
  UPDATE ``... RETURNING *`` as a CTE (with ``status_values`` for the SET clause) and inserts the
  rows of ``effect_steps`` (every effect's rows for the change, computed by the same functions) from
  it, bound as parameters (``bookings/fast_rows.py``). A change with a step that has no SQL form
  takes the general path instead.

The effects themselves, and how to add one, are in ``bookings/effects.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as repo
from transfers.bookings.effects import (
    EFFECTS,
    UPDATE_DEADLINE,
    Change,
    effect_steps,
    status_values,
    update_message,
    write_effects,
    write_effects_many,
)
from transfers.bookings.ledger_effects import ledger_move
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus, check_transition
from transfers.delivery.models import NewMessage
from transfers.errors import Conflict

CREATED_REASON = "created"
CONCURRENT_CHANGE_ATTEMPTS = 3


class ConcurrentChange(Conflict):
    """Another transaction changed the booking's status first; the caller re-reads and decides."""

    default_message = "The booking changed concurrently; retry."


# --- the general path --------------------------------------------------------------------------------


async def lock_booking(conn: AsyncConnection, booking_id: int) -> Booking | None:
    """Read the booking under a row lock (PostgreSQL); SQLite's write transaction already excludes others."""
    return await repo.lock_by_id(conn, booking_id)


async def create(conn: AsyncConnection, values: dict[str, Any], *, actor: str, messages: tuple[NewMessage, ...]) -> int:
    """Insert a new booking and write its creation's side effects (audit row, ``messages``, the
    debit of a wallet payer, last). Raises InsufficientBalance when the debit does not fit: the
    caller's transaction then rolls back. Returns the booking's id."""
    booking_id = await repo.insert_booking(conn, values)
    await write_effects(
        conn,
        Change(
            Booking.new(values, booking_id),
            None,
            BookingStatus(values["status"]),
            actor,
            CREATED_REASON,
            values["created_at"],
            messages,
        ),
    )
    return booking_id


async def create_many(
    conn: AsyncConnection, rows: Sequence[tuple[dict[str, Any], tuple[NewMessage, ...]]], *, actor: str
) -> tuple[list[int], dict[str, int]]:
    """``create`` for several bookings (values, messages) in one transaction, in fewer round trips:
    one INSERT of the bookings, then each side effect's rows for all of them (``write_effects_many``:
    the debits of one wallet as one move of their sum, so all fit or InsufficientBalance). Their ids
    in the order of ``rows``, and their messages' ids by webhook id (from the messages' INSERT itself)."""
    columns = {key for values, _ in rows for key in values}
    ids = await repo.insert_bookings(conn, [{key: values.get(key) for key in columns} for values, _ in rows])
    changes = [
        Change(
            Booking.new(values, booking_id),
            None,
            BookingStatus(values["status"]),
            actor,
            CREATED_REASON,
            values["created_at"],
            messages,
        )
        for (values, messages), booking_id in zip(rows, ids, strict=True)
    ]
    message_ids = await write_effects_many(conn, changes)
    return ids, message_ids


async def transition(
    conn: AsyncConnection,
    booking: Booking,
    target: BookingStatus,
    *,
    actor: str,
    reason: str | None,
    now: datetime,
    fields: dict[str, Any] | None = None,
    notify_partner: dict[str, Any] | None = None,
) -> Booking:
    """Move ``booking`` (read under ``lock_booking``) to ``target`` by compare-and-set and write the
    change's side effects; ``notify_partner``: the payload of a ``PUT /booking/update`` to send.
    Answers the booking as moved."""
    current = booking.status
    check_transition(current, target)
    values = status_values(target, now, fields)
    if not await repo.set_status(conn, booking.id, current.value, values):
        raise ConcurrentChange()
    moved = booking.moved(values)
    messages = (update_message(moved, notify_partner, now),) if notify_partner is not None else ()
    await write_effects(conn, Change(moved, current, target, actor, reason, now, messages, booking))
    return moved


async def transition_unread(
    conn: AsyncConnection,
    booking_id: int,
    current: BookingStatus,
    target: BookingStatus,
    *,
    actor: str,
    reason: str | None,
    now: datetime,
    fields: dict[str, Any] | None = None,
) -> Booking | None:
    """``transition`` for a caller that expects the booking in ``current`` but has not read it: the
    compare-and-set UPDATE ... RETURNING locks and reads the row in the round trip the
    ``lock_booking`` SELECT would have taken. None when the booking is not in ``current`` (nothing
    written): the caller then reads it under ``lock_booking`` and decides as before."""
    check_transition(current, target)
    moved = await repo.move_status(conn, booking_id, current.value, status_values(target, now, fields))
    if moved is None:
        return None
    await write_effects(conn, Change(moved, current, target, actor, reason, now))
    return moved


async def update_details(
    conn: AsyncConnection,
    booking: Booking,
    fields: dict[str, Any],
    *,
    actor: str,
    reason: str,
    now: datetime,
    messages: tuple[NewMessage, ...] = (),
) -> Booking:
    """A change of the booking's details without a change of status (the driver of an APPROVED
    booking, an amendment requested or settled): an audit row from and to the same status, the
    outbox ``messages`` the change sends (an amendment's ``AMENDED`` update), and every other side
    effect a change has (none moves money: ``ledger_move`` needs a status change)."""
    status = booking.status
    values = {**fields, "updated_at": now}
    await repo.update_fields(conn, booking.id, values)
    moved = booking.moved(values)
    await write_effects(conn, Change(moved, status, status, actor, reason, now, messages, booking))
    return moved


@dataclass(frozen=True, slots=True)
class DetailChange:
    """One booking's ``update_details`` in ``update_details_many``."""

    booking: Booking
    fields: dict[str, Any]
    reason: str
    messages: tuple[NewMessage, ...] = ()


async def update_details_many(
    conn: AsyncConnection, changes: Sequence[DetailChange], *, actor: str, now: datetime
) -> list[Booking]:
    """``update_details`` for several bookings (each read under its lock in the caller's transaction, each
    once) with the same rows written, in bounded multi-row statements instead of a few statements per
    booking (the flight watch's pass: docs/rules/flights.md#watching). Answers the bookings as moved."""
    if len({c.booking.id for c in changes}) != len(changes):
        raise ValueError("update_details_many takes each booking once")
    moved_values = [(c.booking.id, {**c.fields, "updated_at": now}) for c in changes]
    await repo.update_fields_many(conn, moved_values)
    written = [
        Change(c.booking.moved(values), c.booking.status, c.booking.status, actor, c.reason, now, c.messages, c.booking)
        for c, (_, values) in zip(changes, moved_values, strict=True)
    ]
    await write_effects_many(conn, written)
    return [change.moved for change in written]


T = TypeVar("T")


async def retry_concurrent(attempt: Callable[[], Awaitable[T]]) -> T:
    """Run ``attempt`` (one whole write transaction, re-reading what it decides on) again when it
    raised ConcurrentChange, up to ``CONCURRENT_CHANGE_ATTEMPTS`` times; the last ConcurrentChange
    is raised to the caller."""
    for _ in range(CONCURRENT_CHANGE_ATTEMPTS - 1):
        try:
            return await attempt()
        except ConcurrentChange:
            continue
    return await attempt()


def driver_fields(driver: Any, meeting_point: str | None) -> dict[str, Any]:
    return {
        "driver_name": driver.name,
        "driver_phone": driver.phone,
        "driver_plate": driver.plate,
        "meeting_point": meeting_point,
    }


# Re-exported: callers name the side effects through the one status writer.
__all__ = [
    "CONCURRENT_CHANGE_ATTEMPTS",
    "CREATED_REASON",
    "EFFECTS",
    "UPDATE_DEADLINE",
    "Change",
    "ConcurrentChange",
    "DetailChange",
    "create",
    "create_many",
    "driver_fields",
    "effect_steps",
    "ledger_move",
    "lock_booking",
    "retry_concurrent",
    "status_values",
    "transition",
    "transition_unread",
    "update_details",
    "update_details_many",
    "update_message",
    "write_effects",
    "write_effects_many",
]
