"""Sending a given-up partner delivery again: the one use case behind ``transfers outbox retry`` and
the console's ``Retry`` button (docs/rules/console.md), so both refuse the same things and audit the same way.

A failed (refused) or expired message goes back to pending, due now, with a new deadline (now +
24 h; for a ``booking.create`` also no later than the pickup's delivery cut-off) and the same
``webhook-id``, so a partner that did receive an earlier attempt recognises the repeat. Delivered
and still-pending messages are refused, and so is a ``booking.create`` whose booking already ended:
re-sending it would ask the partner for a ride the booking no longer pays for (a retry never
revives a booking). ``booking.update`` messages can always be retried; ``booking.amend`` messages
never (a given-up amendment was rejected; the client asks again).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from transfers.bookings import repository as bookings_repo
from transfers.bookings.state import TERMINAL
from transfers.clients.repository import record_admin_action
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.delivery import operators as repo
from transfers.delivery.models import DELIVERED, PENDING
from transfers.delivery.policy import delivery_deadline
from transfers.errors import Refused
from transfers.partners.calls import MessageKind

RETRY_WINDOW = timedelta(hours=24)


class RetryRefused(Refused):
    """The message cannot (or must not) be sent again; the text says why."""


class MessageNotFound(RetryRefused):
    """No outbox message has that id."""


@dataclass(frozen=True)
class Retried:
    outbox_id: int
    kind: str
    previous_status: str
    webhook_id: str
    reservation_no: str | None
    next_attempt_at: datetime
    deadline: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "outbox_id": self.outbox_id,
            "kind": self.kind,
            "status": PENDING,
            "previous_status": self.previous_status,
            "webhook_id": self.webhook_id,
            "reservation_no": self.reservation_no,
            "next_attempt_at": self.next_attempt_at.isoformat(),
            "deadline": self.deadline.isoformat(),
        }


def _when(value: datetime | None) -> str:
    """As the CLI's tables show an instant (``cli/tables.cell``)."""
    return "-" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


async def retry_message(
    db: Database, clock: Clock, outbox_id: int, *, before_pickup_hours: float, actor: str
) -> Retried:
    """Put the message back to pending and write ``outbox.retry`` to the audit, in one transaction
    (the message row locked). ``before_pickup_hours``: ``TRANSFERS_DELIVERY_DEADLINE_BEFORE_PICKUP_HOURS``."""
    now = clock.now()
    async with db.write() as conn:
        message = await repo.get_for_update(conn, outbox_id)
        if message is None:
            raise MessageNotFound(f"no outbox message {outbox_id}")
        status = message.status
        if status == DELIVERED:
            raise RetryRefused(
                f"outbox message {outbox_id} was delivered at {_when(message.finished_at)}; nothing to retry"
            )
        if status == PENDING:
            raise RetryRefused(
                f"outbox message {outbox_id} is still pending (next attempt at "
                f"{_when(message.next_attempt_at)}); nothing to retry"
            )
        if status not in repo.GAVE_UP:
            raise RetryRefused(f"outbox message {outbox_id} has the unexpected status {status!r}")
        booking = None if message.booking_id is None else await bookings_repo.get_by_id(conn, message.booking_id)
        deadline = now + RETRY_WINDOW
        if message.kind == MessageKind.CREATE and booking is not None:
            if booking.status in TERMINAL:
                raise RetryRefused(
                    f"outbox message {outbox_id} creates booking {booking.reservation_no}, which is "
                    f"{booking.status.value} (and refunded): a retry would ask the partner for a ride the "
                    "booking no longer pays for. Book again instead."
                )
            deadline = delivery_deadline(
                now,
                booking.pickup_at,
                hours_after_creation=RETRY_WINDOW.total_seconds() / 3600,
                hours_before_pickup=before_pickup_hours,
            )
            if deadline <= now:
                raise RetryRefused(
                    f"outbox message {outbox_id}: the pickup of booking "
                    f"{booking.reservation_no} is too close to deliver a create now"
                )
        if message.kind == MessageKind.AMEND and booking is not None:
            amendment = booking.amendment or {}
            # the amendment was settled (rejected) when this message gave up; sending it
            # now could make the partner apply changes the booking no longer asks for
            raise RetryRefused(
                f"outbox message {outbox_id} is an amendment of booking {booking.reservation_no}, which "
                f"was {str(amendment.get('status', 'settled')).lower()} when its delivery stopped: the client "
                "amends again if it still wants the change."
            )
        if not await repo.retry(conn, outbox_id, now=now, deadline=deadline):
            raise RetryRefused(f"outbox message {outbox_id} changed meanwhile; try again")
        reservation_no = booking.reservation_no if booking else None
        details = {
            "kind": message.kind,
            "previous_status": status,
            "attempts": message.attempts,
            "last_error": message.last_error,
            "webhook_id": message.webhook_id,
            "reservation_no": reservation_no,
            "deadline": deadline.isoformat(),
        }
        await record_admin_action(
            conn, actor=actor, action="outbox.retry", subject=f"outbox:{outbox_id}", details=details, now=now
        )
    return Retried(outbox_id, message.kind, status, message.webhook_id, reservation_no, now, deadline)
