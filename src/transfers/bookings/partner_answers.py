"""What a partner's answer to a partner call means for the booking (the effects of the partner-call
kinds the delivery engine runs, ``transfers/deliveries.py`` registers them).

Each effect runs in the transaction that finishes the message, with how it ended: answered (the
partner's answer, read by the call's answer model), refused, or expired (no answer until the
message's deadline). An answer the state machine refuses (an APPROVED for a booking the partner
already cancelled through the reverse API) is logged and not applied: the delivery itself is done,
and re-sending would not change the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

import structlog
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import amend, fast_paths, partner_updates
from transfers.bookings import repository as booking_repo
from transfers.bookings.lifecycle import lock_booking
from transfers.bookings.models import Booking
from transfers.db.engine import Database
from transfers.delivery.kinds import Effect, FastFinish, Judged
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import Ending, Verdict
from transfers.delivery.queue import Attempt
from transfers.partners.calls import MessageKind
from transfers.partners.wire import WireCreateAnswer

log = structlog.get_logger("transfers.outbox")
ACTOR = "system:outbox"


class _Closing(Protocol):
    """``partner_updates.decline`` / ``partner_updates.fail``."""

    async def __call__(
        self, conn: AsyncConnection, booking: Booking, reason: str, *, actor: str, now: datetime
    ) -> Booking: ...


PartnerEffect = Callable[
    [AsyncConnection, OutboxMessage, Ending, object, str | None, datetime], Awaitable[Booking | None]
]


async def _create_answered(
    conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: object, error: str | None, now: datetime
) -> Booking | None:
    """A create the partner answered, refused or never answered: the booking acknowledged (and
    approved, with a driver), declined, or failed (refunded)."""
    if ending is Ending.EXPIRED:
        return await _booking_to(
            conn, message, partner_updates.fail, "partner unreachable until the delivery deadline", now
        )
    if ending is Ending.REFUSED:
        return await _booking_to(
            conn, message, partner_updates.decline, f"partner refused the booking: {error or 'error'}", now
        )
    if not isinstance(answer, WireCreateAnswer):
        raise TypeError(f"a create's answer is a WireCreateAnswer, not {type(answer).__name__}")
    if answer.status == "DECLINED":
        return await _booking_to(conn, message, partner_updates.decline, answer.message or "declined by partner", now)
    # Usually the booking is still PENDING: acknowledge it without reading it first.
    booking = await partner_updates.acknowledge_pending(
        conn, message.booking, actor=ACTOR, now=now, partner_reference=answer.reservation_no
    )
    if booking is None:
        booking = await lock_booking(conn, message.booking)
        if booking is None:
            return None
        booking = await partner_updates.acknowledge(
            conn, booking, actor=ACTOR, now=now, partner_reference=answer.reservation_no
        )
    if answer.status == "APPROVED" and answer.driver_info is not None:
        booking = await partner_updates.approve(
            conn, booking, answer.driver_info, answer.meeting_point, actor=ACTOR, now=now, phone_as_sent=True
        )
    return booking


async def _update_answered(
    conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: object, error: str | None, now: datetime
) -> Booking | None:
    """A status update (a client's cancellation) changes nothing more on our side, whatever the
    partner answered: the booking changed when the message was written."""
    return None


async def _amend_answered(
    conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: object, error: str | None, now: datetime
) -> Booking | None:
    """An amendment (``"status": "AMENDED"``): the partner's Success applies it; an ``Error``, another
    4xx, or no answer until the deadline rejects it, with the partner's message (docs/rules/cancellation.md)."""
    if ending is Ending.ANSWERED and amend.accepted(answer):
        return await amend.settle(conn, message, accepted=True, partner_message=None, actor=ACTOR, now=now)
    reason = amend.EXPIRED_MESSAGE if ending is Ending.EXPIRED else (error or "refused by the partner")
    return await amend.settle(conn, message, accepted=False, partner_message=reason, actor=ACTOR, now=now)


async def _flight_answered(
    conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: object, error: str | None, now: datetime
) -> Booking | None:
    """A flight notice (docs/rules/flights.md#pickup-moves) cannot be refused: the pickup moved when it was
    written. A refusal or no answer is recorded in the booking's story (the attempts are the engine's) and
    undoes nothing."""
    if ending is Ending.ANSWERED and amend.accepted(answer):
        return None
    booking = await lock_booking(conn, message.booking)
    if booking is None:
        return None
    said = "no answer before the deadline" if ending is Ending.EXPIRED else (error or "refused")
    await booking_repo.record_transition(
        conn,
        booking_id=booking.id,
        to_status=booking.status.value,
        actor=ACTOR,
        from_status=booking.status.value,
        reason=f"flight notice not taken by the partner ({said}); the pickup stays moved",
        now=now,
    )
    return None


EFFECTS: dict[MessageKind, PartnerEffect] = {
    MessageKind.CREATE: _create_answered,
    MessageKind.UPDATE: _update_answered,
    MessageKind.AMEND: _amend_answered,
    MessageKind.FLIGHT: _flight_answered,  # docs/rules/flights.md
}


def effect_of(kind: MessageKind) -> Effect[OutboxMessage]:
    """The kind's effect as the engine runs it (looked up in ``EFFECTS`` at each call)."""

    async def effect(
        conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: object, error: str | None, now: datetime
    ) -> Booking | None:
        try:
            return await EFFECTS[kind](conn, message, ending, answer, error, now)
        except partner_updates.UpdateRefused as refused:
            log.warning(
                "partner_answer_not_applied",
                outbox_id=message.id,
                reason=str(refused),
                reservation_no=message.reservation_no,
            )
            return None

    return effect


async def _booking_to(
    conn: AsyncConnection, message: OutboxMessage, change: _Closing, reason: str, now: datetime
) -> Booking | None:
    """The message's booking, read under its row lock, moved by ``change`` (decline, fail)."""
    booking = await lock_booking(conn, message.booking)
    return None if booking is None else await change(conn, booking, reason, actor=ACTOR, now=now)


def acknowledges_only(judged: Judged) -> bool:
    """A create answer whose whole effect is PENDING -> PENDING_APPROVAL (accepted, no driver yet)."""
    answer = judged.answer
    return (
        judged.verdict is Verdict.DONE
        and isinstance(answer, WireCreateAnswer)
        and answer.status != "DECLINED"
        and not (answer.status == "APPROVED" and answer.driver_info is not None)
    )


def acknowledge_fast(db: Database) -> FastFinish[OutboxMessage]:
    """The usual answer to a create, written by ``bookings.fast_paths.finish_acknowledged`` in one
    all-or-nothing statement (PostgreSQL, autocommit). It writes nothing when the booking is not
    PENDING any more; the engine then records and applies the answer the general way."""

    async def finish(message: OutboxMessage, attempt: Attempt, judged: Judged, now: datetime) -> object:
        if not acknowledges_only(judged):
            return None
        answer = judged.answer
        return await fast_paths.finish_acknowledged(
            db,
            message,
            attempt=attempt,
            actor=ACTOR,
            now=now,
            partner_reference=answer.reservation_no if isinstance(answer, WireCreateAnswer) else None,
        )

    return finish
