"""The client's own booking named by a ``reservation_no`` query parameter, as the endpoints that
change or price one (cancel, cancellation quote, amend) resolve it before doing anything else.

One place so the rule cannot drift between them: a missing number is the endpoint's "required"
code, and a number that cannot exist, does not exist or belongs to another client is its "not
found" code alike (a foreign booking answers byte-identically to a missing one, so numbers cannot
be probed). The read is outside any write transaction; callers lock the row themselves before a
change (``lifecycle.lock_booking``)."""

from __future__ import annotations

from transfers.bookings import repository as repo
from transfers.bookings.models import Booking
from transfers.bookings.reservation import could_exist
from transfers.clients.models import ClientPrincipal
from transfers.errors import Code, Invalid, NotFound
from transfers.services import Services


async def client_booking(
    svc: Services, client: ClientPrincipal, reservation_no: str | None, *, required: Code, not_found: Code
) -> Booking:
    if not reservation_no:
        raise Invalid(required)
    if not could_exist(reservation_no):
        raise NotFound(not_found)
    async with svc.db.read() as conn:
        booking = await repo.get_for_client(conn, client.client_id, reservation_no)
    if booking is None:
        raise NotFound(not_found)
    return booking
