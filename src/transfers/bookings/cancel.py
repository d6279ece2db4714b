"""The one cancel use case, for every actor (docs/rules/cancellation.md#fees).

A client (booking API), a partner (reverse API, info sync), the hosted partner's portal and an
operator (console) all cancel through ``cancel_locked``, inside their caller's write transaction
on the locked booking row. What differs is a parameter, ``Actor``; what they share is here once:

=============  ==========================  =====================  ===================  =================
actor          may cancel                  already CANCELLED      fee (cancel_rules.py) partner told
=============  ==========================  =====================  ===================  =================
CLIENT         ``is_cancelable`` (pickup   a no-op for the same   the policy's          yes (outbox)
               ahead, PENDING_APPROVAL or  Idempotency-Key,
               APPROVED)                   else refused
PARTNER        the state table             a no-op                none (refund all)     no (it said so)
HOSTED_PORTAL  the state table             a no-op                none (refund all)     no (its portal)
OPERATOR       the state table (the        refused                none (refund all)     yes (outbox)
               pickup may be past)
=============  ==========================  =====================  ===================  =================

Each cancel rejects a pending amendment and withdraws its unsent message (``amend.withdraw``),
moves the booking through ``lifecycle.transition`` (whose ledger effect refunds
``cancellation_refund``: ``cancel_rules.refund_due``) and records who cancelled in
``cancelled_by``. The caller keeps what is its own: permissions, input checks, an audit row, and
how a refusal reads on its surface (``CancelRefused`` is a ``Refused``; the client's carries
``Code.CANCELLATION_FAILED``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import amend
from transfers.bookings.cancel_rules import Canceller, cancellation_fields
from transfers.bookings.lifecycle import transition
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus, can_transition, is_cancelable
from transfers.errors import Code, Refused

S = BookingStatus


class Actor(StrEnum):
    """Who cancels: decides whether it may, whether a repeat is a no-op, the fee and the notice."""

    CLIENT = "client"
    PARTNER = "partner"
    HOSTED_PORTAL = "hosted_portal"
    OPERATOR = "operator"

    @property
    def canceller(self) -> Canceller:
        """``cancelled_by`` (the BookingResource's ``cancellation.by``): the portal is the partner."""
        return {
            Actor.CLIENT: Canceller.CLIENT,
            Actor.PARTNER: Canceller.PARTNER,
            Actor.HOSTED_PORTAL: Canceller.PARTNER,
            Actor.OPERATOR: Canceller.OPERATOR,
        }[self]


class CancelRefused(Refused):
    """This actor may not cancel the booking in its present state; nothing was written."""

    def __init__(self, booking: Booking, actor: Actor) -> None:
        code = Code.CANCELLATION_FAILED if actor is Actor.CLIENT else None
        super().__init__(code, f"a {booking.status.value} booking cannot be cancelled")
        self.status = booking.status


@dataclass(frozen=True, slots=True)
class CancelRequest:
    """One cancellation. ``who``: the actor text of the story and audit rows (``client:7``,
    ``operator:a@example.com``...); ``reason``: the status change's reason; ``note``: ``cancel_note``;
    ``partner_reason``: the ``cancel_reason`` the partner is told (clients and operators only)."""

    actor: Actor
    who: str
    reason: str
    note: str | None = None
    partner_reason: str | None = None
    reason_id: int | None = None  # the client's cancellation reason (reference data)
    idempotency_key: str | None = None  # the client's Idempotency-Key


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The booking after the cancel; ``repeated``: it already was cancelled by this very request
    (or, for a partner, at all) and nothing was written."""

    booking: Booking
    repeated: bool


def _repeat(booking: Booking, request: CancelRequest) -> bool:
    if booking.status is not S.CANCELLED:
        return False
    if request.actor is Actor.CLIENT:
        return request.idempotency_key is not None and booking.cancel_idempotency_key == request.idempotency_key
    return request.actor in (Actor.PARTNER, Actor.HOSTED_PORTAL)


def may_cancel(booking: Booking, actor: Actor, now: datetime) -> bool:
    """Whether ``actor`` may cancel ``booking`` at ``now`` (the table above)."""
    if actor is Actor.CLIENT:
        return is_cancelable(booking.status, booking.pickup_at, now)
    return can_transition(booking.status, S.CANCELLED)


async def cancel_locked(conn: AsyncConnection, booking: Booking, request: CancelRequest, *, now: datetime) -> Cancelled:
    """Cancel the locked ``booking`` for ``request.actor`` at ``now`` (read by the caller with the row
    locked: a client's fee tier is decided by it). Raises ``CancelRefused``; ``transition`` may raise
    ``TransitionRefused`` or ``ConcurrentChange`` (the booking changed under a stale read)."""
    if _repeat(booking, request):
        return Cancelled(booking, repeated=True)
    if not may_cancel(booking, request.actor, now):
        raise CancelRefused(booking, request.actor)
    await amend.withdraw(conn, booking, now)  # a pending amendment is rejected with the booking
    fields: dict[str, Any] = {"cancel_note": request.note}
    if request.actor is Actor.CLIENT:
        fields.update(cancellation_reason_id=request.reason_id, cancel_idempotency_key=request.idempotency_key)
    fields.update(cancellation_fields(booking, request.actor.canceller, now))
    notice = None
    if request.actor in (Actor.CLIENT, Actor.OPERATOR):
        notice = {
            "reservation_no": booking.reservation_no,
            "status": "CANCELLED",
            "cancel_reason": request.partner_reason,
            "note": request.note,
        }
    moved = await transition(
        conn,
        booking,
        S.CANCELLED,
        actor=request.who,
        reason=request.reason,
        now=now,
        fields=fields,
        notify_partner=notice,
    )
    return Cancelled(moved, repeated=False)
