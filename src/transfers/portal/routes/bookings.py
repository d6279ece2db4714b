"""The partner's bookings: ``New`` / ``Upcoming`` / ``Past`` and a booking's page
(``/partner/bookings/{reservation_no}``) with ``Accept`` (driver and meeting point -> APPROVED),
``Decline`` (a reason -> DECLINED, refunded) and ``Cancel`` (an accepted booking -> a partner
cancellation). The actions are the reverse API's use cases (``bookings/reverse.py``), recorded and
audited with the partner user; they are for hosted partners (a server partner answers from its
server: its bookings are read-only here)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.bookings import partner_updates, reverse
from transfers.bookings.lifecycle import ConcurrentChange
from transfers.bookings.models import Booking
from transfers.bookings.reservation import could_exist
from transfers.flights.news import flight_news
from transfers.hosted import repository as repo
from transfers.incidents import service as incidents
from transfers.incidents.models import Incident
from transfers.partners.wire import WireDriver
from transfers.portal.auth import PREFIX, PageNotFound, PartnerViewer, Signed, services
from transfers.portal.render import page
from transfers.portal.ride_panel import ride_panel
from transfers.portal.wording import accept_by
from transfers.reference.airports import country_of
from transfers.reference.phones import PhoneUnreadable, example
from transfers.services import Services
from transfers.text import REFUSED, refused_character
from transfers.tracking.driver import EVENT_LABELS, STAGE_LABELS
from transfers.webauth.forms import text

router = APIRouter()
LIMIT = 200
VIEWS = {"new": "New", "upcoming": "Upcoming", "past": "Past"}
INTROS = {
    "new": "Bookings waiting for you: accept each with a driver, or decline it.",
    "upcoming": "Accepted bookings, soonest pickup first.",
    "past": "Bookings that ended or whose pickup has passed, latest first.",
}
NOTICES = {
    "accepted": "Accepted: the client now sees the booking approved with your driver.",
    "declined": "Declined: the client is refunded in full.",
    "cancelled": "Cancelled: the client is refunded in full.",
    # docs/rules/ride.md#driver-page (portal/routes/ride.py)
    "driver-link": "Driver link ready: send it to your driver (it works from 24 h before to 24 h after pickup).",
    "driver-link-revoked": "Driver link revoked: it no longer opens anything.",
    "driver-link-refused": "Nothing was done: a driver link is for an accepted booking.",
    **{f"event-{kind}": f"Recorded: {label.lower()}." for kind, label in EVENT_LABELS.items()},
}
WAITING = ("PENDING", "PENDING_APPROVAL")
MAX_REASON = 1000


@router.get("/")
async def home(viewer: Signed) -> Response:
    return RedirectResponse(f"{PREFIX}/new", status_code=303)


async def _list(request: Request, viewer: PartnerViewer, view: str) -> Response:
    svc = services(request)
    async with svc.db.read() as conn:
        rows = await repo.portal_bookings(conn, viewer.partner_id, view, svc.clock.now(), LIMIT)
    return page(
        request,
        "bookings/list.html",
        {
            "active": VIEWS[view],
            "rows": rows,
            "intro": INTROS[view],
            "limit": LIMIT,
            "accept_by": {
                b.reservation_no: deadline for b in rows if (deadline := _accept_by(svc, viewer, b)) is not None
            },
        },
        viewer=viewer,
        title=VIEWS[view],
    )


@router.get("/new")
async def new_bookings(request: Request, viewer: Signed) -> Response:
    return await _list(request, viewer, "new")


@router.get("/upcoming")
async def upcoming_bookings(request: Request, viewer: Signed) -> Response:
    return await _list(request, viewer, "upcoming")


@router.get("/past")
async def past_bookings(request: Request, viewer: Signed) -> Response:
    return await _list(request, viewer, "past")


async def booking_of(request: Request, viewer: PartnerViewer, reservation_no: str) -> Booking:
    """The partner's own booking, or the 404 page (another partner's booking looks the same as none)."""
    if not could_exist(reservation_no):
        raise PageNotFound("There is no such booking.")
    async with services(request).db.read() as conn:
        booking = await repo.portal_booking(conn, viewer.partner_id, reservation_no)
    if booking is None:
        raise PageNotFound("There is no such booking.")
    return booking


def _accept_by(svc: Services, viewer: PartnerViewer, booking: Booking) -> datetime | None:
    """A hosted partner's waiting booking: when it is declined unless accepted (``hosted/jobs.py``)."""
    if not viewer.hosted or booking.status not in WAITING:
        return None
    return accept_by(
        booking.created_at,
        booking.pickup_at,
        accept_hours=svc.settings.hosted_accept_hours,
        before_pickup_hours=svc.settings.hosted_accept_before_pickup_hours,
    )


async def detail(
    request: Request,
    viewer: PartnerViewer,
    booking: Booking,
    *,
    status_code: int = 200,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    problem: str = "",
) -> Response:
    svc = services(request)
    now = svc.clock.now()
    status = booking.status
    can_answer = viewer.hosted and status in WAITING
    drivers: list[repo.UsedDriver] = []
    other_leg_yours = False  # docs/rules/return-trips.md#legs: a link to the other leg when it is this partner's too
    if can_answer or booking.trip_other_reservation_no:
        async with svc.db.read() as conn:
            if can_answer:
                drivers = await repo.drivers_used(conn, viewer.partner_id)
            if booking.trip_other_reservation_no:
                other = await repo.portal_booking(conn, viewer.partner_id, booking.trip_other_reservation_no)
                other_leg_yours = other is not None
    context = {
        "b": booking,
        "drivers": drivers,
        "other_leg_yours": other_leg_yours,
        "accept_by": _accept_by(svc, viewer, booking),
        "errors": errors or {},
        "typed": typed or {},
        "problem": problem,
        "notice": NOTICES.get(request.query_params.get("done", ""), ""),
        "can_answer": can_answer,
        "can_cancel": viewer.hosted and status == "APPROVED" and booking.pickup_at > now,
        "active": "Upcoming" if status == "APPROVED" else ("New" if status in WAITING else "Past"),
        "ride": await ride_panel(request, viewer, booking),  # docs/rules/ride.md#driver-page
        "stage_words": STAGE_LABELS,
        "incidents": await _incidents(svc, booking),  # docs/rules/incidents.md#resolve: the partner sees them
        "news": flight_news(booking.trip),  # docs/rules/flights.md#in-words: the flight's status, a moved pickup
        # docs/rules/partners.md#driver-phone: as dialled in the pickup airport's country (accepted as typed)
        "phone_example": example(country_of(booking.airport_iata)),
    }
    return page(
        request, "bookings/detail.html", context, viewer=viewer, status_code=status_code, title=booking.reservation_no
    )


async def _incidents(svc: Services, booking: Booking) -> list[Incident]:
    async with svc.db.read() as conn:
        return await incidents.of_booking(conn, booking.id)


@router.get("/bookings/{reservation_no}")
async def booking_page(request: Request, reservation_no: str, viewer: Signed) -> Response:
    return await detail(request, viewer, await booking_of(request, viewer, reservation_no))


def _done(reservation_no: str, what: str) -> Response:
    return RedirectResponse(f"{PREFIX}/bookings/{reservation_no}?done={what}", status_code=303)


async def _picked_driver(request: Request, viewer: PartnerViewer, value: object) -> dict[str, str] | None:
    """The driver chosen in "A driver you used before" (the option names a booking of this partner's
    that had that driver), as the accept form's fields; None when none was chosen."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or len(value) > 18:
        return None
    async with services(request).db.read() as conn:
        driver = await repo.driver_of(conn, viewer.partner_id, int(value))
    if driver is None:
        return None
    return {"driver_name": driver.name, "driver_phone": driver.phone or "", "plate": driver.plate or ""}


@router.post("/bookings/{reservation_no}/accept")
async def accept(request: Request, reservation_no: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    viewer.require_hosted()
    booking = await booking_of(request, viewer, reservation_no)
    typed: dict[str, str] = {}
    errors: dict[str, str] = {}
    picked = await _picked_driver(request, viewer, form.get("previous_driver"))
    for field, limit in (("driver_name", 200), ("driver_phone", 32), ("plate", 32), ("meeting_point", 1000)):
        typed[field], problem = text(form.get(field), limit=limit)
        if not typed[field] and not problem and picked and field in picked:
            typed[field] = picked[field]  # a driver used before, chosen from the list
        if problem:
            errors[field] = problem
        elif not typed[field] and field != "meeting_point":
            errors[field] = "Required."
    if not errors:
        try:  # the rule approve applies, checked first so its reason stands beside the field
            partner_updates.driver_phone(typed["driver_phone"], booking.airport_iata)
        except PhoneUnreadable as unreadable:
            errors["driver_phone"] = unreadable.reason[:1].upper() + unreadable.reason[1:] + "."
    update = None
    if not errors:
        try:  # the reverse API's own models: the same rules (docs/rules/booking.md#text), the same words
            driver = WireDriver(name=typed["driver_name"], phone=typed["driver_phone"], plate=typed["plate"])
            update = reverse.ReverseUpdate(
                reservation_no=reservation_no,
                status="APPROVED",
                driver_info=driver,
                meeting_point=typed["meeting_point"] or None,
            )
        except ValidationError as exc:
            names = {"name": "driver_name", "phone": "driver_phone", "plate": "plate", "meeting_point": "meeting_point"}
            for error in exc.errors():
                errors[names.get(str(error["loc"][0]), "driver_name")] = str(error["msg"]).removeprefix("Value error, ")
    if update is None:
        return await detail(request, viewer, booking, status_code=422, errors=errors, typed=typed)
    return await _apply(
        request,
        viewer,
        booking,
        "accepted",
        typed,
        reverse.apply_update(services(request), viewer.partner_id, update, user=viewer, expect=frozenset(WAITING)),
    )


async def _reason(
    request: Request, viewer: PartnerViewer, booking: Booking, form: Any
) -> tuple[str | None, Response | None]:
    reason, problem = text(form.get("reason"), limit=MAX_REASON)
    found = refused_character(reason, multiline=True)  # docs/rules/booking.md#text: the client reads it
    if found is not None:
        problem = f"May not contain {REFUSED} ({found})."
    if problem or not reason:
        errors = {"reason": problem or "Say why (the client's agency sees it in the booking's story)."}
        return None, await detail(request, viewer, booking, status_code=422, errors=errors, typed={"reason": reason})
    return reason, None


@router.post("/bookings/{reservation_no}/decline")
async def decline(request: Request, reservation_no: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    viewer.require_hosted()
    booking = await booking_of(request, viewer, reservation_no)
    reason, refused = await _reason(request, viewer, booking, form)
    if reason is None:
        return refused or await detail(request, viewer, booking)
    return await _apply(
        request,
        viewer,
        booking,
        "declined",
        {"reason": reason},
        reverse.decline_new(services(request), viewer.partner_id, reservation_no, reason, user=viewer),
    )


@router.post("/bookings/{reservation_no}/cancel")
async def cancel(request: Request, reservation_no: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    viewer.require_hosted()
    booking = await booking_of(request, viewer, reservation_no)
    reason, refused = await _reason(request, viewer, booking, form)
    if reason is None:
        return refused or await detail(request, viewer, booking)
    update = reverse.ReverseUpdate(reservation_no=reservation_no, status="CANCELLED", cancel_reason=reason)
    return await _apply(
        request,
        viewer,
        booking,
        "cancelled",
        {"reason": reason},
        reverse.apply_update(services(request), viewer.partner_id, update, user=viewer, expect=frozenset({"APPROVED"})),
    )


async def _apply(
    request: Request, viewer: PartnerViewer, booking: Booking, what: str, typed: dict[str, str], work: Any
) -> Response:
    """Run the use case; a booking that changed meanwhile (refused by the state machine) re-renders
    its page with the reason (409), nothing done."""
    try:
        await work
    except reverse.BookingNotFound:
        raise PageNotFound("There is no such booking.") from None
    except (partner_updates.UpdateRefused, ConcurrentChange) as exc:
        current = await booking_of(request, viewer, booking.reservation_no)
        problem = str(exc) if isinstance(exc, partner_updates.UpdateRefused) else "The booking kept changing."
        return await detail(
            request,
            viewer,
            current,
            status_code=409,
            typed=typed,
            problem=f"Nothing was done: {problem}. Here is the booking as it is now.",
        )
    return _done(booking.reservation_no, what)
