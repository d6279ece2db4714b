"""The ride on a hosted partner's booking page (docs/rules/ride.md#driver-page): the driver link
(``/d/{token}``: created, shown, revoked) and the five driver-event buttons.

The buttons are the reverse API's own use case (``ride/service.record_event``) with the partner
user as the actor: the same rules, the same refusals in the same words, never a second implementation."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.bookings.lifecycle import ConcurrentChange
from transfers.bookings.reverse import BookingNotFound
from transfers.errors import DomainError
from transfers.portal.auth import PREFIX, PageNotFound, Signed, services
from transfers.portal.routes.bookings import booking_of, detail
from transfers.tracking import repository as links
from transfers.tracking.rides import report_event

router = APIRouter()


def _back(reservation_no: str, what: str) -> Response:
    return RedirectResponse(f"{PREFIX}/bookings/{reservation_no}?done={what}#ride", status_code=303)


@router.post("/bookings/{reservation_no}/driver-link")
async def create_driver_link(request: Request, reservation_no: str, viewer: Signed) -> Response:
    await viewer.form(request)
    viewer.require_hosted()
    booking = await booking_of(request, viewer, reservation_no)
    svc = services(request)
    if booking.status.value != "APPROVED":
        return _back(reservation_no, "driver-link-refused")
    now = svc.clock.now()
    async with svc.db.write() as conn:
        await links.issue_driver_link(conn, booking.id, actor=viewer.actor, now=now)
        await viewer.audit(conn, "driver_link.create", reservation_no, now)
    return _back(reservation_no, "driver-link")


@router.post("/bookings/{reservation_no}/driver-link/revoke")
async def revoke_driver_link(request: Request, reservation_no: str, viewer: Signed) -> Response:
    await viewer.form(request)
    viewer.require_hosted()
    booking = await booking_of(request, viewer, reservation_no)
    svc = services(request)
    now = svc.clock.now()
    async with svc.db.write() as conn:
        if await links.revoke_driver_link(conn, booking.id, now=now):
            await viewer.audit(conn, "driver_link.revoke", reservation_no, now)
    return _back(reservation_no, "driver-link-revoked")


@router.post("/bookings/{reservation_no}/ride-event")
async def ride_event(request: Request, reservation_no: str, viewer: Signed) -> Response:
    """One of the five buttons: the event now, through the reverse API's use case, the partner user the
    actor. A refusal re-renders the page with the rule's own words (422), nothing recorded."""
    form = await viewer.form(request)
    viewer.require_hosted()
    booking = await booking_of(request, viewer, reservation_no)
    kind = form.get("type")
    try:
        await report_event(services(request), booking, kind, None, None, actor=viewer.actor)
    except BookingNotFound:
        raise PageNotFound("There is no such booking.") from None
    except ConcurrentChange:
        return await detail(
            request, viewer, booking, status_code=409, problem="Nothing was done: the booking kept changing."
        )
    except DomainError as exc:  # the ride's rules (RideInvalid, RideRefused)
        current = await booking_of(request, viewer, reservation_no)
        return await detail(request, viewer, current, status_code=422, problem=f"Nothing was recorded: {exc.message}.")
    return _back(reservation_no, f"event-{kind}")
