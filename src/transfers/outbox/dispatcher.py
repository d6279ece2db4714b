"""Delivers outbox messages to partners and applies what they answer.

Used two ways: ``deliver_now`` by the create-booking request (one attempt within the 2 s budget,
so a fast partner's answer is already in the response) and ``run_once`` by the worker loop.
No database transaction is open while a partner is being called.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import structlog
from pydantic import ValidationError

from transfers import failpoints
from transfers.bookings import partner_updates
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

    async def deliver_now(self, outbox_id: int, *, budget: float) -> None:
        now = self.svc.clock.now()
        lease = now + timedelta(seconds=self.svc.settings.outbox_lease_seconds)
        async with self.svc.db.write() as conn:
            message = await repo.claim_one(conn, outbox_id, now=now, lease_until=lease)
        if message is not None:
            await self._deliver(message, budget)

    async def _deliver(self, message: dict[str, Any], timeout: float) -> None:
        async with self._slots:
            endpoint = await endpoint_for(self.svc.db, self.svc.box, message["partner_id"])
            started = self.svc.clock.now()
            if endpoint is None:
                result = CallResult("connect_error", None, None, "partner not found", 0.0)
            else:
                result = await self._call(endpoint, message, timeout)
                failpoints.hit("outbox.after_send")
            try:
                await self._record(message, result, started, partner_name=endpoint.name if endpoint else None)
            except Exception:
                log.exception("outbox_record_failed", outbox_id=message["id"])

    async def _call(self, endpoint: PartnerEndpoint, message: dict[str, Any], timeout: float) -> CallResult:
        client = self.svc.partner_client
        if message["kind"] == "booking.create":
            return await client.call(endpoint, "POST", "/booking/create", message["payload"], timeout=timeout,
                                     webhook_id=message["webhook_id"], observe=False)
        return await client.call(endpoint, "PUT", "/booking/update", message["payload"], timeout=timeout,
                                 webhook_id=message["webhook_id"], observe=False)

    async def _record(self, message: dict[str, Any], result: CallResult, started: Any,
                      partner_name: str | None = None) -> None:
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
        for _ in range(3):
            try:
                async with self.svc.db.write() as conn:
                    await repo.record_attempt(conn, outbox_id=message["id"], attempt_no=message["attempts"] + 1,
                                              started_at=started, duration_ms=result.duration_ms,
                                              outcome=f"{outcome.value}:{result.outcome}",
                                              http_status=result.http_status, error=error)
                    await self._apply(conn, message, outcome, answer, error, now)
                break
            except ConcurrentChange:
                continue
        log.info("outbox_delivery", outbox_id=message["id"], kind=message["kind"], verdict=outcome.value,
                 outcome=result.outcome, http_status=result.http_status, attempt=message["attempts"] + 1,
                 reservation_no=message["payload"].get("reservation_no"), partner_id=message["partner_id"])

    async def _apply(self, conn: Any, message: dict[str, Any], outcome: Verdict,
                     answer: WireCreateAnswer | WireResult | None, error: str | None, now: Any) -> None:
        is_create = message["kind"] == "booking.create"
        if outcome is Verdict.RETRY:
            when = next_attempt(message["attempts"] + 1, now)
            if when < message["deadline_at"]:
                await repo.reschedule(conn, message, next_attempt_at=when, error=error)
                return
            if not await repo.finish(conn, message, status=repo.EXPIRED, now=now, error=error):
                return
            if is_create:
                await self._on_booking(conn, message, lambda b: partner_updates.fail(
                    conn, b, "partner unreachable until the delivery deadline", actor=ACTOR, now=now))
            return
        status = repo.DELIVERED if outcome is Verdict.DONE else repo.FAILED
        if not await repo.finish(conn, message, status=status, now=now, error=error):
            return  # another worker owns this message now
        if not is_create:
            return
        if outcome is Verdict.PERMANENT:
            await self._on_booking(conn, message, lambda b: partner_updates.decline(
                conn, b, f"partner refused the booking: {error or 'error'}", actor=ACTOR, now=now))
            return
        assert isinstance(answer, WireCreateAnswer)
        if answer.status == "DECLINED":
            await self._on_booking(conn, message, lambda b: partner_updates.decline(
                conn, b, answer.message or "declined by partner", actor=ACTOR, now=now))
            return

        async def accepted(booking: dict[str, Any]) -> Any:
            booking = await partner_updates.acknowledge(conn, booking, actor=ACTOR, now=now,
                                                        partner_reference=answer.reservation_no)
            if answer.status == "APPROVED" and answer.driver_info is not None:
                booking = await partner_updates.approve(conn, booking, answer.driver_info, answer.meeting_point,
                                                        actor=ACTOR, now=now)
            return booking

        await self._on_booking(conn, message, accepted)

    @staticmethod
    async def _on_booking(conn: Any, message: dict[str, Any], change: Any) -> None:
        """Apply the partner's answer to the booking. An answer the state machine refuses (an
        APPROVED for a booking the partner already cancelled through the reverse API) is logged and
        dropped: the delivery itself is done, and re-sending would not change the answer."""
        booking = await lock_booking(conn, message["booking_id"])
        if booking is None:
            return
        try:
            await change(booking)
        except partner_updates.UpdateRefused as refused:
            log.warning("partner_answer_not_applied", outbox_id=message["id"], reason=str(refused),
                        reservation_no=booking["reservation_no"])


__all__ = ["Dispatcher", "info_path"]
