"""What an operator may do to a booking (console, docs/rules/console.md), through the same status writer as
every other path (``lifecycle.transition``), each with its ``admin_audit`` row in the same
transaction:

* ``cancel``: any booking the state table lets become CANCELLED (PENDING, PENDING_APPROVAL,
  APPROVED; the pickup need not be ahead: an operator may clean up after it), refunded by the
  lifecycle's ledger effect, the partner told by ``PUT /booking/update`` through the outbox.
* ``refund``: COMPLETED -> REFUNDED with a ledger refund of the full price (admin only: the caller
  checks the role). A ``reverse_api`` client paid the partner directly: the status moves, no money.
* ``sync``: ask the partner ``GET /booking/info`` now and apply what it says, as the reconcile job does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import partner_updates
from transfers.bookings import repository as repo
from transfers.bookings.cancel import Actor, CancelRefused, CancelRequest, cancel_locked
from transfers.bookings.cancel_rules import refund_due
from transfers.bookings.lifecycle import ConcurrentChange, lock_booking, transition
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus, TransitionRefused
from transfers.clients.repository import record_admin_action
from transfers.errors import NotFound, Refused
from transfers.partners.client import info_path
from transfers.partners.service import endpoint_for
from transfers.partners.wire import WireInfoAnswer
from transfers.services import Services

log = structlog.get_logger("transfers.bookings")
MAX_REASON_CHARS = 1000
S = BookingStatus


class ActionRefused(Refused):
    """The booking is not in a state for this action (or changed meanwhile): nothing was written."""


class NoSuchBooking(NotFound):
    """No booking has that number (the console shows its 404 page)."""

    def __init__(self, reservation_no: str) -> None:
        super().__init__(f"There is no booking {reservation_no}.")


def clean_reason(reason: object) -> str:
    """A reason is required: 1..1000 characters after trimming, NULs dropped (ActionRefused otherwise)."""
    text = reason.replace("\x00", "").strip() if isinstance(reason, str) else ""
    if not text:
        raise ActionRefused("Give a reason.")
    if len(text) > MAX_REASON_CHARS:
        raise ActionRefused(f"A reason has at most {MAX_REASON_CHARS} characters.")
    return text


async def _locked(conn: AsyncConnection, reservation_no: str) -> Booking:
    found = await repo.get_by_reservation(conn, reservation_no)
    booking = await lock_booking(conn, found.id) if found is not None else None
    if booking is None:
        raise NoSuchBooking(reservation_no)
    return booking


async def cancel(svc: Services, reservation_no: str, reason: str, *, actor: str) -> Booking:
    now = svc.clock.now()
    text = clean_reason(reason)
    # the one cancel use case (bookings/cancel.py): recorded as the operator's cancellation, refunded
    # in full (docs/rules/cancellation.md#fees), the partner told
    request = CancelRequest(
        Actor.OPERATOR, actor, f"cancelled by operator: {text}", note=text, partner_reason="Cancelled by the operator"
    )
    async with svc.db.write() as conn:
        booking = await _locked(conn, reservation_no)
        current = booking.status
        try:
            moved = (await cancel_locked(conn, booking, request, now=now)).booking
        except CancelRefused:
            raise ActionRefused(f"A {current.value} booking cannot be cancelled.") from None
        except (TransitionRefused, ConcurrentChange):
            raise ActionRefused("The booking changed meanwhile; nothing was done. Look again.") from None
        await record_admin_action(
            conn,
            actor=actor,
            action="booking.cancel",
            subject=f"booking:{reservation_no}",
            details={"from_status": current.value, "reason": text, "refund": str(refund_due(moved))},
            now=now,
        )
    return moved


async def refund(svc: Services, reservation_no: str, reason: str, *, actor: str) -> Booking:
    now = svc.clock.now()
    text = clean_reason(reason)
    async with svc.db.write() as conn:
        booking = await _locked(conn, reservation_no)
        if booking.status is not S.COMPLETED:
            raise ActionRefused(f"Only a COMPLETED booking can be refunded; this one is {booking.status.value}.")
        try:
            moved = await transition(
                conn, booking, S.REFUNDED, actor=actor, reason=f"refunded by operator: {text}", now=now
            )
        except (TransitionRefused, ConcurrentChange):
            raise ActionRefused("The booking changed meanwhile; nothing was done. Look again.") from None
        await record_admin_action(
            conn,
            actor=actor,
            action="booking.refund",
            subject=f"booking:{reservation_no}",
            details={
                "amount": str(refund_due(moved)),
                "currency": booking.currency,
                "pay_type": booking.pay_type,
                "reason": text,
            },
            now=now,
        )
    return moved


@dataclass(frozen=True, slots=True)
class SyncResult:
    reached: bool  # the partner answered with a valid body
    partner_status: str | None  # what it said
    before: str | None  # the booking's status before / after applying it
    after: str | None
    problem: str | None = None


async def sync_booking(
    svc: Services, booking_id: int, reservation_no: str, partner_id: int, *, actor: str
) -> SyncResult:
    """``GET /booking/info`` now, and the partner's word applied through ``partner_updates`` (the
    reconcile job's step, also the console's ``Sync with partner``). Never raises for the partner's
    failures: they come back as ``problem``."""
    endpoint = await endpoint_for(svc.db, svc.box, partner_id)
    if endpoint is None:
        return SyncResult(False, None, None, None, "the partner is unknown")
    if endpoint.hosted:  # a hosted partner answers in the portal, not by GET /booking/info
        return SyncResult(False, None, None, None, "a hosted partner answers in its portal, not by a sync")
    result = await svc.partner_client.call(
        endpoint, "GET", info_path(reservation_no), None, timeout=svc.settings.partner_timeout_seconds
    )
    if not result.ok:
        return SyncResult(
            False,
            None,
            None,
            None,
            f"the partner did not answer usefully ({result.outcome}"
            + (f", HTTP {result.http_status}" if result.http_status else "")
            + ")",
        )
    try:
        info = WireInfoAnswer.model_validate(result.body)
    except ValidationError as exc:
        reason = str(exc.errors()[0]["msg"])
        log.warning("partner_info_rejected", partner_id=partner_id, reservation_no=reservation_no, reason=reason)
        return SyncResult(False, None, None, None, f"the partner's answer breaks the contract: {reason}")
    now = svc.clock.now()
    try:
        async with svc.db.write() as conn:
            booking = await lock_booking(conn, booking_id)
            if booking is None:
                return SyncResult(True, info.status, None, None, "the booking is gone")
            before = booking.status.value
            moved = await partner_updates.apply_reported_status(
                conn, booking, info.status, info.driver_info, info.meeting_point, actor=actor, now=now
            )
    except (ConcurrentChange, partner_updates.UpdateRefused) as exc:
        log.info("reconcile_skipped", reservation_no=reservation_no, reason=type(exc).__name__)
        return SyncResult(True, info.status, None, None, "the booking changed meanwhile; nothing applied")
    return SyncResult(True, info.status, before, moved.status.value)


async def sync(svc: Services, reservation_no: str, *, actor: str) -> SyncResult:
    """The console's ``Sync with partner``: ``sync_booking`` plus its audit row."""
    async with svc.db.read() as conn:
        booking = await repo.get_by_reservation(conn, reservation_no)
    if booking is None:
        raise NoSuchBooking(reservation_no)
    outcome = await sync_booking(svc, booking.id, reservation_no, booking.partner_id, actor=actor)
    now: datetime = svc.clock.now()
    async with svc.db.write() as conn:
        await record_admin_action(
            conn,
            actor=actor,
            action="booking.sync",
            subject=f"booking:{reservation_no}",
            details={
                "partner_status": outcome.partner_status,
                "before": outcome.before,
                "after": outcome.after,
                "problem": outcome.problem,
            },
            now=now,
        )
    return outcome
