"""What a hosted partner "answers" to the outbox's partner calls, without any HTTP (docs/rules/hosted-partners.md).

A hosted partner has no server: its staff answer in the portal. So the delivery engine sends
its messages here, in-process (``HostedPartner``, a ``Transport``), and records and applies the
answer like any partner's: a new booking is acknowledged (``PENDING -> PENDING_APPROVAL``, where it waits in the
portal's ``New`` list), and an update (a client's cancellation, an amendment) is taken as read.
What the partner's users must be told is e-mailed (``hosted/mail.py``), written in the same
transaction as the delivery (``email_users``, the receiver's ``after_delivery``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.delivery.models import OutboxMessage
from transfers.delivery.transport import CallResult
from transfers.hosted import mail

# The answer bodies a server partner would send (PARTNER_API.md): a create stays with the partner
# to accept (no driver yet), and an update is acknowledged.
_ANSWERS: dict[str, dict[str, Any]] = {
    "booking.create": {"status": "PENDING", "reservation_no": None},
    "booking.update": {"status": "Success", "message": "noted for the partner's portal"},
    # an amendment is accepted (the portal shows the booking as amended); a hosted
    # partner that cannot serve the new trip cancels it in the portal, refunding the client in full
    "booking.amend": {"status": "Success", "message": "amendment noted for the partner's portal"},
    # the pickup followed the flight; the portal shows the current pickup
    "booking.flight_update": {"status": "Success", "message": "new pickup time noted for the partner's portal"},
}


def answer(kind: str, payload: dict[str, Any]) -> CallResult:
    """The hosted partner's answer to a message of ``kind``. The attempt is recorded like any other
    (``done:ok``) but without an HTTP status, since nothing went over HTTP. A kind it cannot take
    (none today) is an ``invalid`` answer, retried until the deadline like a server's."""
    body = _ANSWERS.get(kind)
    if body is None:
        return CallResult("invalid", None, None, f"a hosted partner cannot take {kind}", 0.0)
    return CallResult("ok", None, dict(body), None, 0.0)  # no HTTP status: nothing went over HTTP


def mail_kind(kind: str, payload: dict[str, Any]) -> str | None:
    """The e-mail a delivered message sends the partner's users: a new booking, a cancellation (by the
    client or an operator; the partner's own cancellation is its users' doing), an amendment, a pickup
    that followed the flight."""
    if kind == "booking.create":
        return "booking.new"
    if kind == "booking.update" and payload.get("status") == "CANCELLED":
        return "booking.cancelled"
    if kind == "booking.amend":  # the client changed the trip: the drivers must know
        return "booking.amended"
    if kind == "booking.flight_update":  # docs/rules/flights.md#pickup-moves: the driver must go later (or earlier)
        return "booking.pickup_moved"
    return None


class HostedPartner:
    """The transport to a hosted partner: the answer above, no network."""

    async def send(self, kind: str, message: OutboxMessage, *, timeout: float, target: object) -> CallResult:
        return answer(kind, message.payload)


async def email_users(conn: AsyncConnection, kind: str, message: OutboxMessage, now: datetime) -> None:
    """A delivered message's e-mail to the partner's users, in the transaction that finishes it."""
    kind_of_mail = mail_kind(kind, message.payload)
    if kind_of_mail is not None:
        await mail.enqueue(conn, message, kind_of_mail, now)
