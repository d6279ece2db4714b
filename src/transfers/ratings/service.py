"""The rating use cases (docs/rules/ratings.md), each one write transaction with the booking's row
locked (``lifecycle.lock_booking``): the window is read at the clock's now under the lock, and the
table's primary key keeps one rating per booking even when two are sent at once.

* ``rate_as_client``: the agency passes on its traveller's rating (``POST /booking/rating``).
* ``booking_of_token`` and ``rate_from_page``: the rating page ``/r/{token}``.
"""

from __future__ import annotations

from typing import Any

from transfers.bookings import repository as booking_repo
from transfers.bookings.client_queries import booking_to_act_on
from transfers.bookings.lifecycle import lock_booking
from transfers.bookings.models import Booking
from transfers.bookings.rating_link import reservation_of
from transfers.clients.models import ClientPrincipal
from transfers.errors import Code, Conflict, ErrorCode, NotFound
from transfers.ratings import repository as repo
from transfers.ratings import rules
from transfers.ratings.models import Rating
from transfers.ratings.rules import Source
from transfers.services import Services


async def rate_as_client(
    svc: Services, client: ClientPrincipal, reservation_no: str | None, body: dict[str, Any]
) -> Rating:
    """``POST /booking/rating``. Order of the checks: the reservation (1200, 1201, as on cancel), the body
    (INVALID_RATING), one per booking (RATING_EXISTS), the window (RATING_NOT_ALLOWED)."""
    found = await booking_to_act_on(svc, client, reservation_no)
    stars, comment = rules.parse_body(body)
    return await _rate(svc, found.id, stars, comment, Source.CLIENT)


async def booking_of_token(svc: Services, token: str) -> Booking | None:
    """The booking a rating link opens, None for a token the service did not sign or a booking gone."""
    reservation_no = reservation_of(token)
    if reservation_no is None:
        return None
    async with svc.db.read() as conn:
        return await booking_repo.get_by_reservation(conn, reservation_no)


async def rating_of(svc: Services, booking_id: int) -> Rating | None:
    async with svc.db.read() as conn:
        return await repo.of_booking(conn, booking_id)


async def rate_from_page(svc: Services, booking: Booking, stars: object, comment: object) -> Rating:
    """The rating page's form: INVALID_RATING, RATING_EXISTS or RATING_NOT_ALLOWED as the API's."""
    parsed_stars, parsed_comment = rules.parse_form(stars, comment)
    return await _rate(svc, booking.id, parsed_stars, parsed_comment, Source.TRAVELLER)


async def _rate(svc: Services, booking_id: int, stars: int, comment: str | None, source: Source) -> Rating:
    try:
        async with svc.db.write() as conn:
            booking = await lock_booking(conn, booking_id)
            if booking is None:
                raise NotFound(Code.CANCELLATION_RESERVATION_NOT_FOUND)
            if await repo.of_booking(conn, booking.id) is not None:
                raise Conflict(ErrorCode.RATING_EXISTS)
            now = svc.clock.now()
            rules.check_open(booking.trip.ride, now)
            rating = Rating(booking.id, booking.partner_id, stars, comment, now, source.value)
            await repo.insert_rating(conn, rating)
    except repo.DuplicateRating:  # two at the same moment: the database kept one
        raise Conflict(ErrorCode.RATING_EXISTS) from None
    return rating
