"""The delivery engine: claim, lease, send, judge, record, retry or give up, for every kind.

Used two ways: ``deliver_leased`` by a writer that wrote its message already leased to itself
(create-booking's one attempt within its 2 s budget, so a fast partner's answer is already in the
response) and ``run_once`` by the worker loop (``worker.py``). No database transaction is open
while a receiver is being called.

One delivery, flat: the kind's router names the receiver (its ``Transport``), the transport sends,
the kind judges the result (answered / retry / give up), ``policy.settle`` decides what happens to
the message (finished, or pending until the schedule's next attempt, or expired at its deadline),
then one transaction records the attempt (the attempt log), finishes or reschedules the message
and, once finished, runs the kind's effect. A finishing transaction that keeps meeting a concurrent
change (the kind's ``unapplied`` errors) is not dropped: the attempt and the reason are recorded
on the message, which stays pending for a later claim, and ``outbox_answer_unapplied`` is logged.

The engine knows no consumer: kinds are registered by the application (``transfers/deliveries.py``,
in the registry of the queue that stores their messages), and the engine is typed by that message
(``Engine[M]``: an ``OutboxMessage``, a ``WebhookDelivery``, ...); ``import-linter`` keeps this
package from importing bookings, partners, hosted, webhooks or mail.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from functools import partial
from typing import Generic, TypeVar

import structlog

from transfers import failpoints
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.delivery.kinds import DeliveryKind, Judged, Registry
from transfers.delivery.policy import Ending, settle
from transfers.delivery.queue import Attempt, Message, Queue
from transfers.delivery.transport import CallResult, Receiver

log = structlog.get_logger("transfers.outbox")
UNAPPLIED = "the booking kept changing concurrently; the answer is applied on the next delivery"
STALE = "stale: tried once, dropped unsent after its deadline"
M = TypeVar("M", bound=Message)


class Engine(Generic[M]):
    """Delivers the messages ``M`` of one ``Queue`` for the kinds of ``registry`` (the kinds stored
    in that queue)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        registry: Registry[M],
        *,
        queue: Queue[M],
        lease_seconds: float,
        timeout: float,
        concurrency: int = 16,
    ) -> None:
        self.db = db
        self.clock = clock
        self.queue = queue
        self.registry = registry
        self.lease_seconds = lease_seconds
        self.timeout = timeout
        self._slots = asyncio.Semaphore(concurrency)

    async def run_once(self, limit: int = 32) -> int:
        """Claim due messages and deliver them concurrently; returns how many were attempted. Kinds
        tried once are claimed first, so a backlog of due retries never holds them up. Only kinds
        this process registered are claimed (an older worker beside a newer one leaves it the kinds
        it does not know)."""
        messages = await self.claim(limit)
        await asyncio.gather(*(self.deliver(m) for m in messages))
        return len(messages)

    async def claim(self, limit: int) -> list[M]:
        """Lease up to ``limit`` due messages (kinds tried once first), in one transaction."""
        now = self.clock.now()
        lease = now + timedelta(seconds=self.lease_seconds)
        first, known = self.registry.once_names(), self.registry.names()
        async with self.db.write() as conn:
            return await self.queue.claim(conn, now=now, lease_until=lease, limit=limit, kinds=known, first=first)

    async def deliver(self, message: M) -> object:
        """One attempt at a claimed message, with the engine's timeout."""
        return await self._deliver(message, self.timeout)

    async def deliver_leased(self, message: M, hint: object = None, *, budget: float) -> object:
        """Deliver a message written already leased to the caller (``lease_until`` set when it was
        inserted, so no worker claims it meanwhile), with no claim transaction. ``hint``: what the
        caller knows of the receiver already (a partner's endpoint). Answers what the kind's effect
        returned (None when nothing was applied)."""
        return await self._deliver(message, budget, hint)

    async def expire_overdue(self, *, limit: int) -> int:
        """Pending, unleased messages past their deadline: expired, each kind's effect run with
        ``Ending.EXPIRED`` in the same transaction (the scheduled ``expire_deliveries`` job)."""
        now = self.clock.now()
        async with self.db.write() as conn:
            expired = await self.queue.expire_overdue(conn, now=now, limit=limit)
            for message in expired:
                await self.registry[message.kind].effect(conn, message, Ending.EXPIRED, None, None, now)
        return len(expired)

    async def _deliver(self, message: M, timeout: float, hint: object = None) -> object:
        kind = self.registry[message.kind]
        async with self._slots:
            started = self.clock.now()
            if kind.once and started >= message.deadline_at:
                await self._drop_stale(message)
                return None
            receiver = await kind.router(message, hint)
            result = await receiver.transport.send(kind.name, message, timeout=timeout, target=receiver.target)
            if not receiver.in_process:
                failpoints.hit(f"{self.queue.name}.after_send")
            try:
                return await self._record(message, kind, receiver, result, started)
            except Exception:
                log.exception(f"{self.queue.name}_record_failed", **message.log_fields())
                return None

    async def _record(
        self, message: M, kind: DeliveryKind[M], receiver: Receiver[M], result: CallResult, started: datetime
    ) -> object:
        """The attempt, the message's new state and its kind's effect, in one transaction; returns
        what the effect returned (None when the message is still pending or nothing changed)."""
        now = self.clock.now()
        judged = kind.judge(result)
        result = judged.result
        if receiver.observe is not None:  # metrics: the call's final outcome (a contract breach counts as "invalid")
            receiver.observe(kind.name, result)
        attempt: Attempt = {
            "attempt_no": message.attempts + 1,
            "started_at": started,
            "duration_ms": result.duration_ms,
            "outcome": f"{judged.verdict.value}:{result.outcome}",
            "http_status": result.http_status,
            "error": judged.error,
            "answer_excerpt": result.excerpt,
        }
        applied: object = None
        if kind.fast_finish is not None and not receiver.in_process and not self.db.is_sqlite:
            # A kind's usual answer written in one all-or-nothing statement (PostgreSQL), run in
            # autocommit; None when it wrote nothing, and the general way below runs.
            applied = await kind.fast_finish(message, attempt, judged, now)
        if applied is None:
            try:
                applied = await kind.retrying(partial(self._apply, message, kind, receiver, attempt, judged, now))
            except kind.unapplied:
                await self._unapplied(message, kind, attempt, now)
        log.info(
            self.queue.log_event,
            kind=kind.name,
            verdict=judged.verdict.value,
            outcome=result.outcome,
            http_status=result.http_status,
            attempt=message.attempts + 1,
            duration_ms=result.duration_ms,
            error=judged.error,
            **message.log_fields(),
        )
        return applied

    async def _apply(
        self,
        message: M,
        kind: DeliveryKind[M],
        receiver: Receiver[M],
        attempt: Attempt,
        judged: Judged,
        now: datetime,
    ) -> object:
        """One write transaction: the attempt, the message rescheduled or finished and, once
        finished, the receiver's follow-up and the kind's effect."""
        async with self.db.write() as conn:
            await self.queue.record_attempt(conn, message, attempt)
            settled = settle(
                judged.verdict,
                attempts_done=message.attempts + 1,
                now=now,
                deadline=message.deadline_at,
                schedule=kind.schedule,
                once=kind.once,
            )
            if settled.ending is None or settled.retry_at is not None:
                await self.queue.reschedule(
                    conn, message, next_attempt_at=settled.retry_at or now, error=judged.error, attempt=attempt
                )
                return None
            if not await self.queue.finish(
                conn, message, status=settled.status, now=now, error=judged.error, attempt=attempt
            ):
                return None  # another worker owns this message now
            if settled.ending is Ending.ANSWERED and receiver.after_delivery is not None:
                await receiver.after_delivery(conn, kind.name, message, now)
            return await kind.effect(conn, message, settled.ending, judged.answer, judged.error, now)

    async def _unapplied(self, message: M, kind: DeliveryKind[M], attempt: Attempt, now: datetime) -> None:
        """Every try of ``_apply`` met a concurrent change: record the attempt with the reason and
        leave the message pending for the next claim (after the usual backoff), so the answer is
        applied on its next delivery (same webhook-id) rather than dropped."""
        when = kind.schedule.next_attempt(message.attempts + 1, now)
        async with self.db.write() as conn:
            unapplied: Attempt = {**attempt, "error": UNAPPLIED}
            await self.queue.record_attempt(conn, message, unapplied)
            kept = await self.queue.reschedule(conn, message, next_attempt_at=when, error=UNAPPLIED, attempt=unapplied)
        log.error(
            "outbox_answer_unapplied",
            kind=message.kind,
            rescheduled=kept,
            next_attempt_at=when.isoformat(),
            **message.log_fields(),
        )

    async def _drop_stale(self, message: M) -> None:
        """A kind tried once, claimed past its deadline: expired without an attempt (its news is old)."""
        async with self.db.write() as conn:
            dropped = await self.queue.drop(conn, message, now=self.clock.now(), reason=STALE)
        log.info("delivery_stale_dropped", kind=message.kind, dropped=dropped, **message.log_fields())
