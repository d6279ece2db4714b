"""The reverse API's use cases (docs/rules/partners.md#reverse-api): a partner updates a booking it holds
(``apply_update``) or reads it (``partner_view``). ``api/routes/reverse.py`` only parses, calls
these and renders; the HTTP answers of the exceptions are chosen there."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import partner_payloads, partner_updates
from transfers.bookings import repository as repo
from transfers.bookings.cancel import Actor
from transfers.bookings.lifecycle import lock_booking, retry_concurrent
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus
from transfers.errors import NotFound
from transfers.partners.wire import FreeText, NoNul, WireDriver
from transfers.services import Services


class ReverseUpdate(BaseModel):
    """PUT /api/v1/reverse/booking/update. Unknown fields are ignored, never applied."""

    model_config = ConfigDict(extra="ignore")

    reservation_no: Annotated[str, NoNul, Field(min_length=1, max_length=255)]
    status: Literal["APPROVED", "CANCELLED"]
    driver_info: WireDriver | None = None
    # docs/rules/booking.md#text: shown to the traveller and the client
    meeting_point: Annotated[str, FreeText, Field(max_length=1000)] | None = None
    cancel_reason: Annotated[str, FreeText, Field(max_length=1000)] | None = None

    @model_validator(mode="after")
    def _driver_for_approval(self) -> ReverseUpdate:
        if self.status == "APPROVED" and self.driver_info is None:
            raise ValueError("APPROVED needs driver_info with name, phone and plate")
        return self


class BookingNotFound(NotFound):
    """No such booking, or another partner's."""

    default_message = "Booking not found"


async def apply_update(
    svc: Services,
    partner_id: int,
    update: ReverseUpdate,
    *,
    user: PortalUser | None = None,
    expect: frozenset[str] | None = None,
) -> None:
    """Apply a partner's ``PUT /booking/update`` to a booking it holds, in one write transaction
    (tried again up to ``lifecycle.CONCURRENT_CHANGE_ATTEMPTS`` times when another one changed the
    booking first). Raises BookingNotFound, ``partner_updates.UpdateRefused`` (the state machine
    refuses it) or, when every attempt met a concurrent change, ``lifecycle.ConcurrentChange``.

    ``user``: the partner portal's user doing it (Accept and Cancel are this same use
    case): the change is recorded with that user as its actor, plus an ``admin_audit`` row in the
    same transaction. ``expect``: the statuses the portal's button was shown for; another one
    (changed meanwhile) is refused rather than applied."""
    actor = user.actor if user is not None else f"partner:{partner_id}"

    async def attempt() -> None:
        now = svc.clock.now()
        async with svc.db.write() as conn:
            booking = await _locked_for_partner(conn, partner_id, update.reservation_no)
            if expect is not None and booking.status not in expect:
                raise partner_updates.UpdateRefused(f"the booking is {booking.status.value} now")
            if user is not None:
                await user.audit(
                    conn,
                    f"booking.{update.status.lower()}",
                    update.reservation_no,
                    now,
                    driver=update.driver_info.model_dump() if update.driver_info else None,
                    meeting_point=update.meeting_point,
                    reason=update.cancel_reason,
                )
            if update.status == "APPROVED":
                if update.driver_info is None:  # ReverseUpdate's validator already refused this
                    raise partner_updates.UpdateRefused("APPROVED needs driver_info")
                await partner_updates.approve(
                    conn, booking, update.driver_info, update.meeting_point, actor=actor, now=now
                )
            else:
                by = Actor.HOSTED_PORTAL if user is not None else Actor.PARTNER
                await partner_updates.cancel(conn, booking, update.cancel_reason, actor=actor, now=now, by=by)

    await retry_concurrent(attempt)


async def decline_new(svc: Services, partner_id: int, reservation_no: str, reason: str, *, user: PortalUser) -> None:
    """The portal's ``Decline`` (docs/rules/hosted-partners.md): a new booking (PENDING or PENDING_APPROVAL) the partner
    will not drive becomes DECLINED and the client is refunded in full, in one transaction with the
    audit row. Raises BookingNotFound, ``UpdateRefused`` (not a new booking any more) or
    ``ConcurrentChange``."""

    async def attempt() -> None:
        now = svc.clock.now()
        async with svc.db.write() as conn:
            booking = await _locked_for_partner(conn, partner_id, reservation_no)
            if booking.status not in (BookingStatus.PENDING, BookingStatus.PENDING_APPROVAL):
                raise partner_updates.UpdateRefused(f"only a new booking can be declined; it is {booking.status.value}")
            await user.audit(conn, "booking.decline", reservation_no, now, reason=reason)
            await partner_updates.decline(
                conn, booking, f"declined by the partner: {reason}", actor=user.actor, now=now
            )

    await retry_concurrent(attempt)


class PortalUser(Protocol):
    """Who acts in the partner portal (``portal/auth.py``'s viewer): its actor text and its audit row."""

    @property
    def actor(self) -> str: ...

    async def audit(
        self, conn: AsyncConnection, action: str, reservation_no: str, now: datetime, **details: Any
    ) -> None: ...


async def _locked_for_partner(conn: AsyncConnection, partner_id: int, reservation_no: str) -> Booking:
    found = await repo.get_for_partner(conn, partner_id, reservation_no)
    booking = await lock_booking(conn, found.id) if found is not None else None
    if booking is None:
        raise BookingNotFound()
    return booking


def partner_view(booking: Booking) -> dict[str, Any]:
    """What a partner may see of a booking it holds (``partner_payloads.partner_view``)."""
    return partner_payloads.partner_view(booking)
