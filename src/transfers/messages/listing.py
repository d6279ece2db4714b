"""A booking's messages as the API, the pages and the command line show them (docs/rules/messages.md#seen):
``{"id", "template", "channel", "to" (masked), "language", "status", "reason", "scheduled_for",
"sent_at"}`` (``views.message_resource``), in the order they are due."""

from __future__ import annotations

from typing import Any

from transfers.bookings.client_queries import booking_to_act_on
from transfers.clients.models import ClientPrincipal
from transfers.messages import repository as repo
from transfers.messages.views import message_resource
from transfers.services import Services


async def of_booking(svc: Services, booking_id: int) -> list[dict[str, Any]]:
    """The booking's messages as shown."""
    async with svc.db.read() as conn:
        return [message_resource(m) for m in await repo.messages_of_booking(conn, booking_id)]


async def for_booking_page(svc: Services, booking_id: int, client_id: int) -> dict[str, Any]:
    """What the console's and the agency portal's booking pages show: ``messages`` (as the API shows
    them) and ``messages_on`` (whether the client has a channel on, to say why there are none)."""
    async with svc.db.read() as conn:
        found = [message_resource(m) for m in await repo.messages_of_booking(conn, booking_id)]
        settings = await repo.settings_of(conn, client_id)
    return {"messages": found, "messages_on": bool(settings and settings.channels)}


async def for_client(svc: Services, client: ClientPrincipal, reservation_no: str | None) -> list[dict[str, Any]]:
    """``GET /booking-api/booking/messages``: the client's own booking only, with the codes every action
    on a booking answers (``booking_to_act_on``: 1200 without a number, 1201 for one that is not the
    client's, byte-identical to one that does not exist)."""
    booking = await booking_to_act_on(svc, client, reservation_no)
    return await of_booking(svc, booking.id)
