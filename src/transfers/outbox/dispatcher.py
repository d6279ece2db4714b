"""Delivers outbox messages to partners and applies what they answer.

Used two ways: ``deliver_leased`` by the create-booking request (one attempt within the 2 s budget
on the message it wrote already leased, so a fast partner's answer is already in the response) and
``run_once`` by the worker loop.
No database transaction is open while a partner is being called.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import structlog
from pydantic import ValidationError

from transfers import failpoints
from transfers.bookings import fast_paths, partner_updates
from transfers.bookings.lifecycle import ConcurrentChange, lock_booking
from transfers.observability.metrics import observe_partner_call
from transfers.outbox import repository as repo
from transfers.outbox.policy import Verdict, next_attempt, verdict
from transfers.partners.client import CallResult, PartnerEndpoint, info_path
from transfers.partners.service import endpoint_for
from transfers.partners.wire import WireCreateAnswer, WireResult
from transfers.services import Services

log = structlog.get_logger("transfers.outbox")
ACTOR = "system:outbox"


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

    async def deliver_leased(self, message: dict[str, Any], endpoint: PartnerEndpoint | None, *,
                             budget: float) -> dict[str, Any] | None:
        """Deliver a message written already leased to the caller (``lease_until`` set when it was
        inserted, so no worker claims it meanwhile): the create request's own attempt, with no claim
        transaction. ``endpoint``: the partner's, when the caller has read it already. Answers the
        booking as the partner's answer left it, or None when nothing was applied to it."""
        return await self._deliver(message, budget, endpoint)

    async def _deliver(self, message: dict[str, Any], timeout: float,
                       endpoint: PartnerEndpoint | None = None) -> dict[str, Any] | None:
        async with self._slots:
            if endpoint is None:
                endpoint = await endpoint_for(self.svc.db, self.svc.box, message["partner_id"])
            started = self.svc.clock.now()
            if endpoint is None:
                result = CallResult("connect_error", None, None, "partner not found", 0.0)
            else:
                result = await self._call(endpoint, message, timeout)
                failpoints.hit("outbox.after_send")
            try:
                return await self._record(message, result, started, partner_name=endpoint.name if endpoint else None)
            except Exception:
                log.exception("outbox_record_failed", outbox_id=message["id"])
                return None

    async def _call(self, endpoint: PartnerEndpoint, message: dict[str, Any], timeout: float) -> CallResult:
        client = self.svc.partner_client
        if message["kind"] == "booking.create":
            return await client.call(endpoint, "POST", "/booking/create", message["payload"], timeout=timeout,
                                     webhook_id=message["webhook_id"], observe=False)
        return await client.call(endpoint, "PUT", "/booking/update", message["payload"], timeout=timeout,
                                 webhook_id=message["webhook_id"], observe=False)

    async def _record(self, message: dict[str, Any], result: CallResult, started: Any,
                      partner_name: str | None = None) -> dict[str, Any] | None:
        """The attempt, the message's new state and the answer's effect on the booking, in one
        transaction; returns the booking as changed (None when the answer changed nothing)."""
        now = self.svc.clock.now()
        outcome = verdict(result)
        answer: WireCreateAnswer | WireResult | None = None
        if outcome is Verdict.DONE:
            try:
                answer = (WireCreateAnswer if message["kind"] == "booking.create" else WireResult).model_validate(
                    result.body)
            except ValidationError as exc:
                outcome, result = Verdict.RETRY, CallResult(
                    "invalid", result.http_status, None, f"answer breaks the contract: {exc.errors()[0]['msg']}",
                    result.duration_ms)
        if isinstance(answer, WireResult) and answer.status == "Error":
            outcome = Verdict.PERMANENT
        if partner_name is not None:  # metrics: the call's final outcome (a contract breach counts as "invalid")
            observe_partner_call(partner_name, "/booking/create" if message["kind"] == "booking.create"
                                 else "/booking/update", result.outcome, result.duration_ms)
        error = result.error or (answer.message if isinstance(answer, WireResult | WireCreateAnswer) else None)
        if outcome is Verdict.DONE:
            error = None  # a partner's success message is not an error worth showing operators
        attempt = {"attempt_no": message["attempts"] + 1, "started_at": started, "duration_ms": result.duration_ms,
                   "outcome": f"{outcome.value}:{result.outcome}", "http_status": result.http_status, "error": error}
        booking = None
        if self._acknowledges_only(message, outcome, answer):
            # The usual answer to a create: a single all-or-nothing statement (PostgreSQL), run in
            # autocommit. It writes nothing when the booking is not PENDING any more; the general
            # way below then records and applies the answer.
            assert isinstance(answer, WireCreateAnswer)
            booking = await fast_paths.finish_acknowledged(self.svc.db, message, attempt=attempt, actor=ACTOR, now=now,
                                                     partner_reference=answer.reservation_no)
        if booking is None:
            for _ in range(3):
                try:
                    async with self.svc.db.write() as conn:
                        await repo.record_attempt(conn, outbox_id=message["id"], **attempt)
                        booking = await self._apply(conn, message, outcome, answer, error, now)
                    break
                except ConcurrentChange:
                    booking = None
        log.info("outbox_delivery", outbox_id=message["id"], kind=message["kind"], verdict=outcome.value,
                 outcome=result.outcome, http_status=result.http_status, attempt=message["attempts"] + 1,
                 reservation_no=message["payload"].get("reservation_no"), partner_id=message["partner_id"])
        return booking

    async def _apply(self, conn: Any, message: dict[str, Any], outcome: Verdict,
                     answer: WireCreateAnswer | WireResult | None, error: str | None,
                     now: Any) -> dict[str, Any] | None:
        is_create = message["kind"] == "booking.create"
        if outcome is Verdict.RETRY:
            when = next_attempt(message["attempts"] + 1, now)
            if when < message["deadline_at"]:
                await repo.reschedule(conn, message, next_attempt_at=when, error=error)
                return None
            if not await repo.finish(conn, message, status=repo.EXPIRED, now=now, error=error):
                return None
            if is_create:
                return await self._on_booking(conn, message, lambda b: partner_updates.fail(
                    conn, b, "partner unreachable until the delivery deadline", actor=ACTOR, now=now))
            return None
        status = repo.DELIVERED if outcome is Verdict.DONE else repo.FAILED
        if not await repo.finish(conn, message, status=status, now=now, error=error):
            return None  # another worker owns this message now
        if not is_create:
            return None
        if outcome is Verdict.PERMANENT:
            return await self._on_booking(conn, message, lambda b: partner_updates.decline(
                conn, b, f"partner refused the booking: {error or 'error'}", actor=ACTOR, now=now))
        assert isinstance(answer, WireCreateAnswer)
        if answer.status == "DECLINED":
            return await self._on_booking(conn, message, lambda b: partner_updates.decline(
                conn, b, answer.message or "declined by partner", actor=ACTOR, now=now))

        # Usually the booking is still PENDING: acknowledge it without reading it first.
        pending = await partner_updates.acknowledge_pending(conn, message["booking_id"], actor=ACTOR, now=now,
                                                            partner_reference=answer.reservation_no)
        return await self._accepted(conn, message, answer, now, pending)

    def _acknowledges_only(self, message: dict[str, Any], outcome: Verdict,
                           answer: WireCreateAnswer | WireResult | None) -> bool:
        """A create answer whose whole effect is PENDING -> PENDING_APPROVAL (accepted, no driver
        yet), which ``bookings.fast_paths.finish_acknowledged`` writes in one statement on PostgreSQL."""
        return (outcome is Verdict.DONE and message["kind"] == "booking.create" and not self.svc.db.is_sqlite
                and isinstance(answer, WireCreateAnswer) and answer.status != "DECLINED"
                and not (answer.status == "APPROVED" and answer.driver_info is not None))

    async def _accepted(self, conn: Any, message: dict[str, Any], answer: WireCreateAnswer, now: Any,
                        pending: dict[str, Any] | None) -> dict[str, Any] | None:
        """The rest of an accepting answer: ``pending`` is the booking already acknowledged (and
        locked) from PENDING; None when it was not PENDING, so it is read and acknowledged here."""
        async def approved(booking: dict[str, Any]) -> dict[str, Any]:
            if answer.status == "APPROVED" and answer.driver_info is not None:
                booking = await partner_updates.approve(conn, booking, answer.driver_info, answer.meeting_point,
                                                        actor=ACTOR, now=now)
            return booking

        async def accepted(booking: dict[str, Any]) -> dict[str, Any]:
            return await approved(await partner_updates.acknowledge(
                conn, booking, actor=ACTOR, now=now, partner_reference=answer.reservation_no))

        if pending is not None:
            return await self._on_booking(conn, message, approved, locked=pending)
        return await self._on_booking(conn, message, accepted)

    @staticmethod
    async def _on_booking(conn: Any, message: dict[str, Any], change: Any,
                          locked: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Apply the partner's answer to the booking (``locked``: already read under its row lock).
        An answer the state machine refuses (an APPROVED for a booking the partner already
        cancelled through the reverse API) is logged and dropped: the delivery itself is done, and
        re-sending would not change the answer."""
        booking = locked if locked is not None else await lock_booking(conn, message["booking_id"])
        if booking is None:
            return None
        try:
            changed: dict[str, Any] = await change(booking)
            return changed
        except partner_updates.UpdateRefused as refused:
            log.warning("partner_answer_not_applied", outbox_id=message["id"], reason=str(refused),
                        reservation_no=booking["reservation_no"])
            return booking


__all__ = ["Dispatcher", "info_path"]
