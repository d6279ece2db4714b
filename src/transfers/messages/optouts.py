"""The opt-out page's use cases (docs/rules/messages.md#opt-out): which booking, channel and address a
link opens, what is already stopped, and stopping messages for the booking or for every booking.

A link is signed over the address (``optout_link``); the address is found again among those the booking
was written to: the passenger's address on that channel now, and every address a message of the booking
on that channel went to (an address changed by an amendment still opens the link of a message sent to
it before). Writing goes through the repository's ``add_optout``, which keeps one active opt-out per
scope, so a second post (a double click, a reload) adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from transfers.bookings import repository as bookings_repo
from transfers.bookings.models import Booking
from transfers.messages import repository as repo
from transfers.messages.models import Channel, OptOutSource
from transfers.messages.optout_link import address_of, read_token
from transfers.services import Services

SCOPES = ("booking", "all")


@dataclass(frozen=True, slots=True)
class OptOutLink:
    """What a valid link opens, and what is stopped now."""

    booking: Booking
    channel: Channel
    address: str  # normalised (e-mail lowercased; E.164)
    brand: str | None  # the client's brand name, as its messages open with it
    stopped_booking: bool  # messages about this booking to the address are stopped
    stopped_all: bool  # messages about every booking to the address are stopped
    default_language: str | None  # the client's (the page's fallback before English)


def _addresses(booking: Booking, channel: Channel, sent_to: list[str | None]) -> list[str]:
    current = booking.passenger_email if channel is Channel.EMAIL else booking.passenger_phone
    found = [current, *sent_to]
    return list(dict.fromkeys(a for a in found if a))


async def open_link(svc: Services, token: str) -> OptOutLink | None:
    """The booking, channel and address ``token`` was signed for, or None (not a link the service made,
    or its booking is gone)."""
    named = read_token(token)
    if named is None:
        return None
    booking_id, channel_name = named
    channel = Channel(channel_name)
    async with svc.db.read() as conn:
        booking = await bookings_repo.get_by_id(conn, booking_id)
        if booking is None:
            return None
        sent = [m for m in await repo.messages_of_booking(conn, booking_id) if m.channel == channel]
        address = address_of(token, _addresses(booking, channel, [m.to_address for m in sent]))
        if address is None:
            return None
        settings = await repo.settings_of(conn, booking.client_id)
        for_all = await repo.active_optout(conn, channel, address, None)
        for_booking = for_all or await repo.active_optout(conn, channel, address, booking_id)
    return OptOutLink(
        booking=booking,
        channel=channel,
        address=address,
        brand=settings.brand_name if settings else None,
        stopped_booking=for_booking is not None,
        stopped_all=for_all is not None,
        default_language=settings.default_language if settings else None,
    )


async def stop(svc: Services, link: OptOutLink, scope: str) -> None:
    """Stop messages on the link's channel to its address: about its booking (``booking``) or about every
    booking (``all``). ``scope`` is checked by the caller (``SCOPES``)."""
    async with svc.db.write() as conn:
        await repo.add_optout(
            conn,
            link.channel,
            link.address,
            booking_id=link.booking.id if scope == "booking" else None,
            source=OptOutSource.PAGE,
            now=svc.clock.now(),
        )
