"""Delivers outbox messages to partners and applies what they answer.

Used two ways: ``deliver_leased`` by the create-booking request (one attempt within the 2 s budget
on the message it wrote already leased, so a fast partner's answer is already in the response) and
``run_once`` by the worker loop. No database transaction is open while a partner is being called.

One delivery, flat: call the partner (``MessageKind``: method, path), read the answer (its answer
model), take a ``Verdict`` (``policy.py``), then in one transaction record the attempt, finish or
reschedule the message and, when the message is finished, run its kind's effect on the booking
(``EFFECTS``). A transaction that keeps meeting a concurrent change of the booking
(``lifecycle.retry_concurrent``) is not dropped: the attempt and the reason are recorded on the
message, which stays pending for a later claim, and ``outbox_answer_unapplied`` is logged.

How to add a partner call (e.g. issue 15's ``AMENDED`` update):

1. ``outbox/kinds.py``: a ``MessageKind`` member ``"booking.x", METHOD, "/booking/x", WireXAnswer``.
2. ``partners/wire.py``: the answer model ``WireXAnswer`` (and the request body, if it is built
   as a model).
3. Here: ``async def _x_answered(conn, message, ending, answer, error, now)`` (what a delivered,
   refused or expired message does to the booking, through ``bookings/partner_updates`` /
   ``lifecycle``; None when nothing changed) and its line in ``EFFECTS``. The writer of the
   message calls ``outbox.repository.new_message(kind=MessageKind.X.value, ...)`` in its
   transaction (a status change: ``lifecycle``'s ``messages``).
4. Docs: PARTNER_API.md and ``openapi/partner.yaml`` (tested by tests/unit/test_partner_openapi.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any, Protocol

import structlog
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import failpoints
from transfers.bookings import amending, fast_paths, partner_updates
from transfers.bookings.lifecycle import ConcurrentChange, lock_booking, retry_concurrent
from transfers.bookings.models import Booking
from transfers.hosted import inprocess as hosted_inprocess
from transfers.hosted import mail as hosted_mail
from transfers.observability.metrics import observe_partner_call
from transfers.outbox import repository as repo
from transfers.outbox.kinds import MessageKind
from transfers.outbox.models import OutboxMessage
from transfers.outbox.policy import Verdict, next_attempt, verdict
from transfers.partners.client import CallResult, PartnerEndpoint, info_path
from transfers.partners.service import endpoint_for
from transfers.partners.wire import WireCreateAnswer, WireResult
from transfers.services import Services

log = structlog.get_logger("transfers.outbox")
ACTOR = "system:outbox"
UNAPPLIED = "the booking kept changing concurrently; the answer is applied on the next delivery"


class Ending(StrEnum):
    """How a finished message ended, for its kind's effect."""

    ANSWERED = "answered"  # the partner's answer was read (``answer``)
    REFUSED = "refused"  # a permanent refusal (4xx, or "status": "Error")
    EXPIRED = "expired"  # no answer until the message's deadline


class _Closing(Protocol):
    """``partner_updates.decline`` / ``partner_updates.fail``."""

    async def __call__(
        self, conn: AsyncConnection, booking: Booking, reason: str, *, actor: str, now: datetime
    ) -> Booking: ...


Effect = Callable[
    [AsyncConnection, OutboxMessage, Ending, BaseModel | None, str | None, datetime], Awaitable[Booking | None]
]


# --- the effects of a finished message, one per kind ----------------------------------------------


async def _create_answered(
    conn: AsyncConnection,
    message: OutboxMessage,
    ending: Ending,
    answer: BaseModel | None,
    error: str | None,
    now: datetime,
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
        conn, message.booking_id, actor=ACTOR, now=now, partner_reference=answer.reservation_no
    )
    if booking is None:
        booking = await lock_booking(conn, message.booking_id)
        if booking is None:
            return None
        booking = await partner_updates.acknowledge(
            conn, booking, actor=ACTOR, now=now, partner_reference=answer.reservation_no
        )
    if answer.status == "APPROVED" and answer.driver_info is not None:
        booking = await partner_updates.approve(
            conn, booking, answer.driver_info, answer.meeting_point, actor=ACTOR, now=now
        )
    return booking


async def _update_answered(
    conn: AsyncConnection,
    message: OutboxMessage,
    ending: Ending,
    answer: BaseModel | None,
    error: str | None,
    now: datetime,
) -> Booking | None:
    """A status update (a client's cancellation) changes nothing more on our side, whatever the
    partner answered: the booking changed when the message was written."""
    return None


async def _amend_answered(
    conn: AsyncConnection,
    message: OutboxMessage,
    ending: Ending,
    answer: BaseModel | None,
    error: str | None,
    now: datetime,
) -> Booking | None:
    """An amendment (``"status": "AMENDED"``): the partner's Success applies it; an ``Error``, another
    4xx, or no answer until the deadline rejects it, with the partner's message (issue 15)."""
    if ending is Ending.ANSWERED and amending.accepted(answer):
        return await amending.settle(conn, message, accepted=True, partner_message=None, actor=ACTOR, now=now)
    reason = amending.EXPIRED_MESSAGE if ending is Ending.EXPIRED else (error or "refused by the partner")
    return await amending.settle(conn, message, accepted=False, partner_message=reason, actor=ACTOR, now=now)


EFFECTS: dict[MessageKind, Effect] = {
    MessageKind.CREATE: _create_answered,
    MessageKind.UPDATE: _update_answered,
    MessageKind.AMEND: _amend_answered,
}


async def _booking_to(
    conn: AsyncConnection, message: OutboxMessage, change: _Closing, reason: str, now: datetime
) -> Booking | None:
    """The message's booking, read under its row lock, moved by ``change`` (decline, fail)."""
    booking = await lock_booking(conn, message.booking_id)
    return None if booking is None else await change(conn, booking, reason, actor=ACTOR, now=now)


def _refusal_message(body: Any) -> str | None:
    """The ``message`` of a partner's ``{"status": "Error", "message": ...}`` answer (shown to
    clients as an amendment's rejection, recorded on declines), bounded; None when it has none."""
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message.strip():
        return None
    return message.replace("\x00", "").strip()[:1000]


# --- delivery ------------------------------------------------------------------------------------


class Dispatcher:
    def __init__(self, svc: Services, *, concurrency: int = 16) -> None:
        self.svc = svc
        self._slots = asyncio.Semaphore(concurrency)

    async def run_once(self, limit: int = 32) -> int:
        """Claim due messages and deliver them concurrently; returns how many were attempted."""
        now = self.svc.clock.now()
        lease = now + timedelta(seconds=self.svc.settings.outbox_lease_seconds)
        async with self.svc.db.write() as conn:
            messages = await repo.claim_due(conn, now=now, lease_until=lease, limit=limit)
        await asyncio.gather(*(self._deliver(m, self.svc.settings.partner_timeout_seconds) for m in messages))
        return len(messages)

    async def deliver_leased(
        self, message: OutboxMessage, endpoint: PartnerEndpoint | None, *, budget: float
    ) -> Booking | None:
        """Deliver a message written already leased to the caller (``lease_until`` set when it was
        inserted, so no worker claims it meanwhile): the create request's own attempt, with no claim
        transaction. ``endpoint``: the partner's, when the caller has read it already. Answers the
        booking as the partner's answer left it, or None when nothing was applied to it."""
        return await self._deliver(message, budget, endpoint)

    async def _deliver(
        self, message: OutboxMessage, timeout: float, endpoint: PartnerEndpoint | None = None
    ) -> Booking | None:
        kind = MessageKind.of(message.kind)
        async with self._slots:
            if endpoint is None:
                endpoint = await endpoint_for(self.svc.db, self.svc.box, message.partner_id)
            started = self.svc.clock.now()
            if endpoint is None:
                result = CallResult("connect_error", None, None, "partner not found", 0.0)
            elif endpoint.hosted:  # issue 16: no server to call; the portal is where it answers
                result = hosted_inprocess.answer(kind.value, message.payload)
            else:
                result = await self.svc.partner_client.call(
                    endpoint,
                    kind.method,
                    kind.path,
                    message.payload,
                    timeout=timeout,
                    webhook_id=message.webhook_id,
                    observe=False,
                )
                failpoints.hit("outbox.after_send")
            try:
                return await self._record(
                    message,
                    kind,
                    result,
                    started,
                    partner_name=endpoint.name if endpoint and not endpoint.hosted else None,
                    hosted=endpoint is not None and endpoint.hosted,
                )
            except Exception:
                log.exception("outbox_record_failed", outbox_id=message.id)
                return None

    async def _record(
        self,
        message: OutboxMessage,
        kind: MessageKind,
        result: CallResult,
        started: datetime,
        partner_name: str | None = None,
        hosted: bool = False,
    ) -> Booking | None:
        """The attempt, the message's new state and the answer's effect on the booking, in one
        transaction; returns the booking as changed (None when the answer changed nothing)."""
        now = self.svc.clock.now()
        outcome = verdict(result)
        answer: BaseModel | None = None
        if outcome is Verdict.DONE:
            try:
                answer = kind.answer.model_validate(result.body)
            except ValidationError as exc:
                outcome, result = (
                    Verdict.RETRY,
                    CallResult(
                        "invalid",
                        result.http_status,
                        None,
                        f"answer breaks the contract: {exc.errors()[0]['msg']}",
                        result.duration_ms,
                        result.raw,
                    ),
                )
        if isinstance(answer, WireResult) and answer.status == "Error":
            outcome = Verdict.PERMANENT
        if partner_name is not None:  # metrics: the call's final outcome (a contract breach counts as "invalid")
            observe_partner_call(partner_name, kind.path, result.outcome, result.duration_ms)
        error = result.error or (answer.message if isinstance(answer, WireResult | WireCreateAnswer) else None)
        if error is None and outcome is Verdict.PERMANENT:  # an "Error" body: keep the partner's own words
            error = _refusal_message(result.body)
        if outcome is Verdict.DONE:
            error = None  # a partner's success message is not an error worth showing operators
        attempt = {
            "attempt_no": message.attempts + 1,
            "started_at": started,
            "duration_ms": result.duration_ms,
            "outcome": f"{outcome.value}:{result.outcome}",
            "http_status": result.http_status,
            "error": error,
            "answer_excerpt": result.excerpt,
        }
        booking = None
        if not hosted and self._acknowledges_only(kind, outcome, answer):
            # The usual answer to a create: a single all-or-nothing statement (PostgreSQL), run in
            # autocommit. It writes nothing when the booking is not PENDING any more; the general
            # way below then records and applies the answer.
            booking = await fast_paths.finish_acknowledged(
                self.svc.db,
                message,
                attempt=attempt,
                actor=ACTOR,
                now=now,
                partner_reference=answer.reservation_no if isinstance(answer, WireCreateAnswer) else None,
            )
        if booking is None:
            try:
                booking = await retry_concurrent(
                    partial(self._apply, message, kind, attempt, outcome, answer, error, now, hosted)
                )
            except ConcurrentChange:
                await self._unapplied(message, attempt, now)
        log.info(
            "outbox_delivery",
            outbox_id=message.id,
            kind=kind.value,
            verdict=outcome.value,
            outcome=result.outcome,
            http_status=result.http_status,
            attempt=message.attempts + 1,
            reservation_no=message.reservation_no,
            partner_id=message.partner_id,
        )
        return booking

    async def _apply(
        self,
        message: OutboxMessage,
        kind: MessageKind,
        attempt: dict[str, Any],
        outcome: Verdict,
        answer: BaseModel | None,
        error: str | None,
        now: datetime,
        hosted: bool = False,
    ) -> Booking | None:
        """One write transaction: the attempt, the message rescheduled or finished and, once
        finished, its kind's effect. An answer the state machine refuses (an APPROVED for a booking
        the partner already cancelled through the reverse API) is logged and not applied: the
        delivery itself is done, and re-sending would not change the answer."""
        async with self.svc.db.write() as conn:
            await repo.record_attempt(conn, outbox_id=message.id, **attempt)
            if outcome is Verdict.RETRY:
                when = next_attempt(message.attempts + 1, now)
                if when < message.deadline_at:
                    await repo.reschedule(conn, message, next_attempt_at=when, error=error)
                    return None
                status, ending = repo.EXPIRED, Ending.EXPIRED
            elif outcome is Verdict.PERMANENT:
                status, ending = repo.FAILED, Ending.REFUSED
            else:
                status, ending = repo.DELIVERED, Ending.ANSWERED
            if not await repo.finish(conn, message, status=status, now=now, error=error):
                return None  # another worker owns this message now
            mail = hosted_inprocess.mail_kind(kind.value, message.payload) if hosted else None
            if mail is not None and status == repo.DELIVERED:  # the partner's users are told by e-mail
                await hosted_mail.enqueue(conn, message, mail, now)
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

    async def _unapplied(self, message: OutboxMessage, attempt: dict[str, Any], now: datetime) -> None:
        """Every try of ``_apply`` met a concurrent change of the booking: record the attempt with
        the reason and leave the message pending for the next claim (after the usual backoff), so
        the answer is applied on its next delivery (same webhook-id) rather than dropped."""
        when = next_attempt(message.attempts + 1, now)
        async with self.svc.db.write() as conn:
            await repo.record_attempt(conn, outbox_id=message.id, **{**attempt, "error": UNAPPLIED})
            kept = await repo.reschedule(conn, message, next_attempt_at=when, error=UNAPPLIED)
        log.error(
            "outbox_answer_unapplied",
            outbox_id=message.id,
            kind=message.kind,
            rescheduled=kept,
            next_attempt_at=when.isoformat(),
            reservation_no=message.reservation_no,
        )

    def _acknowledges_only(self, kind: MessageKind, outcome: Verdict, answer: BaseModel | None) -> bool:
        """A create answer whose whole effect is PENDING -> PENDING_APPROVAL (accepted, no driver
        yet), which ``bookings.fast_paths.finish_acknowledged`` writes in one statement on PostgreSQL."""
        return (
            outcome is Verdict.DONE
            and kind is MessageKind.CREATE
            and not self.svc.db.is_sqlite
            and isinstance(answer, WireCreateAnswer)
            and answer.status != "DECLINED"
            and not (answer.status == "APPROVED" and answer.driver_info is not None)
        )


__all__ = ["EFFECTS", "Dispatcher", "Ending", "info_path"]
