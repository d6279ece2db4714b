"""Sending a failed client webhook delivery again: the one use case behind ``transfers outbox retry
--webhook ID`` and the console's ``Retry`` on a client webhook delivery (docs/rules/console.md), the webhook
twin of ``outbox/retry.py``.

A failed delivery goes back to pending, due now, with a new deadline (now + 24 h, the delivery
window of docs/rules/webhooks.md) and the same event (same ``webhook-id``, same body, so a receiver that did
get an earlier attempt drops the repeat). Refused: a delivery already delivered or still pending,
and one whose endpoint is disabled or deleted (the worker never sends to those; the client enables
the endpoint again first).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from transfers.clients.repository import record_admin_action
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.outbox.retry import MessageNotFound, RetryRefused
from transfers.webhooks import operators
from transfers.webhooks import repository as repo

RETRY_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class RetriedWebhook:
    delivery_id: int
    event_id: str
    type: str
    reservation_no: str | None
    next_attempt_at: datetime
    deadline: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "webhook_delivery_id": self.delivery_id,
            "event_id": self.event_id,
            "type": self.type,
            "status": repo.PENDING,
            "previous_status": repo.FAILED,
            "reservation_no": self.reservation_no,
            "next_attempt_at": self.next_attempt_at.isoformat(),
            "deadline": self.deadline.isoformat(),
        }


def _when(value: datetime | None) -> str:
    return "-" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


async def retry_webhook_delivery(db: Database, clock: Clock, delivery_id: int, *, actor: str) -> RetriedWebhook:
    """Put the delivery back to pending and write ``webhook.retry`` to the audit, in one transaction
    (the delivery's row locked). ``MessageNotFound`` / ``RetryRefused`` say why not."""
    now = clock.now()
    async with db.write() as conn:
        found = await operators.lock_for_retry(conn, delivery_id)
        if found is None:
            raise MessageNotFound(f"no webhook delivery {delivery_id}")
        if found.status == repo.DELIVERED:
            raise RetryRefused(
                f"webhook delivery {delivery_id} was delivered at {_when(found.finished_at)}; nothing to retry"
            )
        if found.status == repo.PENDING:
            raise RetryRefused(
                f"webhook delivery {delivery_id} is still pending (next attempt at "
                f"{_when(found.next_attempt_at)}); nothing to retry"
            )
        if found.endpoint_deleted_at is not None or found.endpoint_status != repo.ENABLED:
            raise RetryRefused(
                f"webhook delivery {delivery_id}: endpoint {found.endpoint_id} is "
                f"{'deleted' if found.endpoint_deleted_at is not None else 'disabled'}; "
                "the client enables it first"
            )
        deadline = now + RETRY_WINDOW
        if not await operators.retry(conn, delivery_id, now=now, deadline=deadline):
            raise RetryRefused(f"webhook delivery {delivery_id} changed meanwhile; try again")
        await record_admin_action(
            conn,
            actor=actor,
            action="webhook.retry",
            subject=f"webhook_delivery:{delivery_id}",
            details={
                "event_id": found.event_id,
                "type": found.type,
                "client_id": found.client_id,
                "endpoint_id": found.endpoint_id,
                "reservation_no": found.reservation_no,
                "attempts": found.attempts,
                "last_error": found.last_error,
                "deadline": deadline.isoformat(),
            },
            now=now,
        )
    return RetriedWebhook(delivery_id, found.event_id, found.type, found.reservation_no, now, deadline)
