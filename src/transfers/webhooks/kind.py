"""The delivery engine's ``client.webhook`` kind: every ``webhook_deliveries`` row is one of its
messages (docs/rules/webhooks.md).

* ``WebhookDelivery`` (``webhooks/models.py``): a claimed row with its event and endpoint;
* ``judge``: 2xx delivered; 410 gives up (``_gone`` disables the endpoint and stops its other
  pending deliveries, in the same transaction); anything else, a time-out or a connection error
  is retried on the standard schedule (about 10 s, 30 s, 2 min, 10 min, 30 min, then hourly:
  ``delivery/policy.next_attempt``) until 24 h after the event, then ``failed``;
* ``WebhookQueue``: the table as the engine's ``Queue`` (its kinds: this one and the driver
  positions, ``webhooks/positions.py``), with a claim fair between endpoints;
* ``record_fast``: an attempt's record in one unflushed statement on PostgreSQL.

The fan-out and the loop that keeps the slots full are ``webhooks/delivery.py``; the signed POST is
``webhooks/sender.py``, one sender (one HTTP session) for every kind of the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.engine import Database
from transfers.delivery.kinds import DeliveryKind, FastFinish, Judged
from transfers.delivery.models import EXPIRED, FAILED
from transfers.delivery.policy import Ending, Verdict, settle
from transfers.delivery.queue import Attempt
from transfers.delivery.transport import CallResult, Receiver
from transfers.webhooks import repository as repo
from transfers.webhooks.models import CLIENT_WEBHOOK, WebhookDelivery
from transfers.webhooks.sender import WebhookSender

GONE = 410


def judge(result: CallResult) -> Judged:
    """A 2xx is delivered, a 410 gives up (and disables the endpoint: ``_gone``), anything else, a
    time-out or a connection error is tried again until 24 h after the event."""
    if result.ok:
        return Judged(Verdict.DONE, result.http_status, None, result)
    if result.http_status == GONE:
        return Judged(Verdict.PERMANENT, result.http_status, result.error, result)
    return Judged(Verdict.RETRY, result.http_status, result.error, result)


async def _gone(
    conn: AsyncConnection, delivery: WebhookDelivery, ending: Ending, answer: object, error: str | None, now: datetime
) -> None:
    """410 (the only refusal): the endpoint disabled and its other pending deliveries stopped, in the
    transaction that failed this one."""
    if ending is Ending.REFUSED:
        reason = "the endpoint answered 410 Gone"
        await repo.disable_endpoint(conn, delivery.endpoint_id, reason=reason, now=now)
        await repo.fail_pending(conn, delivery.endpoint_id, reason=reason, now=now)


def record_fast(db: Database, *, once: bool = False) -> FastFinish[WebhookDelivery]:
    """PostgreSQL: an attempt that does not disable the endpoint is one autocommit statement, run
    unflushed (``repository.RECORD_STATEMENT``): a record lost in a crash only means the delivery is
    sent again after its lease, with the same webhook-id, which at-least-once allows anyway.
    ``once``: the kind is tried once (a failure ends the delivery)."""

    async def record(delivery: WebhookDelivery, attempt: Attempt, judged: Judged, now: datetime) -> object:
        if judged.verdict is Verdict.PERMANENT:
            return None  # 410: the general way, with the endpoint disabled in the same transaction
        settled = settle(
            judged.verdict, attempts_done=delivery.attempts + 1, now=now, deadline=delivery.deadline_at, once=once
        )
        status, error = WebhookQueue.status_of(settled.status, judged.error, once=once)
        await db.write_one_unflushed(
            repo.RECORD_STATEMENT,
            **repo.record_params(
                delivery.id,
                delivery.lease_until,
                status=status,
                now=now,
                http_status=attempt["http_status"],
                error=error,
                next_attempt_at=settled.retry_at,
            ),
        )
        return True

    return record


class InFlight(Protocol):
    """What a fair claim reads of the worker delivering (``webhooks/delivery.WebhookDispatcher``):
    how many deliveries one endpoint may have in flight, and how many each has now."""

    per_endpoint: int
    in_flight: dict[int, int]


class WebhookQueue:
    """The ``webhook_deliveries`` table as the engine's ``Queue``: a claim takes at most
    ``per_endpoint`` deliveries of any one endpoint and none of an endpoint that already has that
    many in flight here (kinds tried once first, within the same cap); a delivery's last HTTP status
    is kept on its row (no attempt log)."""

    name = "webhooks"
    log_event = "webhook_delivery"

    def __init__(self, owner: InFlight) -> None:
        self.owner = owner  # its ``per_endpoint`` and ``in_flight``, read at each claim

    @staticmethod
    def status_of(status: str, error: str | None, *, once: bool = False) -> tuple[str, str | None]:
        """The engine's statuses as this table keeps them: no ``expired``, a delivery that ran out of
        time (or, tried once, failed) is ``failed``, saying so."""
        if status == EXPIRED:
            return FAILED, f"{error}; tried once" if once else f"{error}; gave up 24 h after the event"
        return status, error

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str],
        first: Sequence[str],
    ) -> list[WebhookDelivery]:
        per_endpoint = self.owner.per_endpoint
        busy = [endpoint for endpoint, count in self.owner.in_flight.items() if count >= per_endpoint]
        taken: dict[int, int] = {}
        claimed: list[WebhookDelivery] = []
        for of_kinds in (first, kinds) if first else (kinds,):
            if len(claimed) < limit:
                claimed += await repo.claim_due(
                    conn,
                    now=now,
                    lease_until=lease_until,
                    limit=limit - len(claimed),
                    per_endpoint=per_endpoint,
                    busy=busy,
                    kinds=of_kinds,
                    taken=taken,
                )
        return claimed

    async def record_attempt(self, conn: AsyncConnection, message: WebhookDelivery, attempt: Attempt) -> None:
        return None  # the row keeps the last attempt's HTTP status and error (``finish``/``reschedule``)

    async def reschedule(
        self,
        conn: AsyncConnection,
        message: WebhookDelivery,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return await self._record(
            conn,
            message,
            repo.PENDING,
            now=next_attempt_at,
            error=error,
            http=attempt["http_status"],
            next_at=next_attempt_at,
        )

    async def finish(
        self,
        conn: AsyncConnection,
        message: WebhookDelivery,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        status, error = self.status_of(status, error, once=message.kind != CLIENT_WEBHOOK)
        return await self._record(conn, message, status, now=now, error=error, http=attempt["http_status"])

    async def _record(
        self,
        conn: AsyncConnection,
        delivery: WebhookDelivery,
        status: str,
        *,
        now: datetime,
        error: str | None,
        http: int | None,
        next_at: datetime | None = None,
    ) -> bool:
        """The attempt's outcome on a delivery still leased to us (``repository.record``): finished at
        ``now``, or still pending until ``next_at``."""
        return await repo.record(
            conn,
            delivery.id,
            delivery.lease_until,
            status=status,
            now=now,
            http_status=http,
            error=error,
            next_attempt_at=next_at,
        )

    async def drop(self, conn: AsyncConnection, message: WebhookDelivery, *, now: datetime, reason: str) -> bool:
        return await self._record(conn, message, FAILED, now=now, error=reason, http=None)

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[WebhookDelivery]:
        return []  # a delivery gives up at the attempt whose next one would fall past its deadline


def client_webhook_kind(db: Database, sender: WebhookSender) -> DeliveryKind[WebhookDelivery]:
    """The ``client.webhook`` kind (registered by ``transfers/deliveries.py``): every delivery goes
    through the table's one ``WebhookSender`` (its HTTP session lives as long as the webhook
    dispatcher), on the standard schedule until its deadline (24 h after the event), a 410
    disabling the endpoint."""
    receiver: Receiver[WebhookDelivery] = Receiver(sender)

    async def route(message: WebhookDelivery, hint: object) -> Receiver[WebhookDelivery]:
        return receiver

    return DeliveryKind(CLIENT_WEBHOOK, route, judge, _gone, fast_finish=record_fast(db))
