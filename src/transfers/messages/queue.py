"""The ``traveller_messages`` table as the delivery engine's queue (docs/rules/messages.md#sending): a
claimed row (``QueuedMessage``, with the booking as it is now and the address's opt-outs, read in the
claim's transaction for the batch) and the claim, reschedule and drop under the lease (``TravellerQueue``).
The send itself is ``transport.py``'s; the end of a message is written by ``delivery.effect``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as bookings_repo
from transfers.bookings.models import Booking
from transfers.delivery.queue import Attempt
from transfers.messages import queue_repository as queue_repo
from transfers.messages import repository as messages_repo
from transfers.rows import row_type

TRAVELLER_MESSAGE = "traveller.message"  # the delivery engine's kind of every traveller_messages row


@row_type
class QueuedMessage(queue_repo.QueueRow):
    """A claimed ``traveller_messages`` row (its columns are ``QueueRow``'s): a message of the engine's
    ``traveller.message`` kind, given up at its ``expires_at``. Read in the claim's transaction, for the
    whole batch at once: the booking as it is now (None: gone) and whether the address is stopped for it."""

    booking: Booking | None = None
    stopped: bool = False
    kind: str = TRAVELLER_MESSAGE

    @classmethod
    def from_row(cls, row: queue_repo.QueueRow, booking: Booking | None = None, stopped: bool = False) -> QueuedMessage:
        columns = {f.name: getattr(row, f.name) for f in fields(queue_repo.QueueRow)}
        return cls(**columns, booking=booking, stopped=stopped)

    @property
    def deadline_at(self) -> datetime:
        return self.expires_at or self.created_at + timedelta(days=1)

    @property
    def recipient(self) -> str:
        return f"traveller:{self.booking_id}:{self.channel}"

    def log_fields(self) -> dict[str, object]:
        return {
            "message_id": self.id,
            "template": self.template,
            "channel": self.channel,
            "booking_id": self.booking_id,
        }


def _stopped(row: queue_repo.QueueRow, optouts: set[tuple[int | None, str, str]]) -> bool:
    if not row.to_address:
        return False
    address = messages_repo.normalize_address(row.channel, row.to_address)
    return (None, row.channel, address) in optouts or (row.booking_id, row.channel, address) in optouts


class TravellerQueue:
    """The ``traveller_messages`` table as the engine's ``Queue``: no attempt log (the row keeps the count
    and the last error); the end of a message is written by the kind's effect, which reads the outcome."""

    name = "traveller_messages"
    log_event = "traveller_message_delivery"

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str],
        first: Sequence[str],
    ) -> list[QueuedMessage]:
        rows = await queue_repo.claim_due(conn, now=now, lease_until=lease_until, limit=limit)
        if not rows:
            return []
        bookings: dict[int, Booking | None] = {}
        for booking_id in sorted({r.booking_id for r in rows}):
            bookings[booking_id] = await bookings_repo.get_by_id(conn, booking_id)
        addresses = {
            (r.channel, messages_repo.normalize_address(r.channel, r.to_address)) for r in rows if r.to_address
        }
        stopped = await messages_repo.stopped(conn, addresses, list(bookings))
        return [QueuedMessage.from_row(r, bookings.get(r.booking_id), _stopped(r, stopped)) for r in rows]

    async def record_attempt(self, conn: AsyncConnection, message: QueuedMessage, attempt: Attempt) -> None:
        return None

    async def reschedule(
        self,
        conn: AsyncConnection,
        message: QueuedMessage,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return await queue_repo.reschedule(conn, message.id, message.lease_until, when=next_attempt_at, error=error)

    async def finish(
        self,
        conn: AsyncConnection,
        message: QueuedMessage,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return True  # the effect writes the end, with the outcome's status and reason, under the lease

    async def drop(self, conn: AsyncConnection, message: QueuedMessage, *, now: datetime, reason: str) -> bool:
        return await queue_repo.finish(
            conn, message.id, message.lease_until, status="expired", reason=None, error=reason, now=now
        )

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[QueuedMessage]:
        return []  # ``sweep`` ends them (expired, or ambiguous when a send began)
