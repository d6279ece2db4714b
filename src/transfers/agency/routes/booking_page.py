"""A booking's page (``/agency/bookings/{reservation_no}``, docs/rules/agency-portal.md#pages): every
field the API's GET answers (the BookingResource, so fields other features add to it, the ride
and its tracking link, the flight, show here as they land), the status story, the client events
sent for it with their deliveries, and the actions: ``Cancel booking`` (the fee shown first, from the
API's cancellation quote), ``Change`` (an amendment). Each action is the API's use case with the
agency's client, sent once by the one-time key made when its form was shown (``once.py``); each is also written to the
audit log with the agency user as the actor. Another agency's booking is the 404 page, exactly as
one that does not exist."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.agency import forms
from transfers.agency.auth import AgencyViewer, PageNotFound, Signed, services
from transfers.agency.messages import GENERAL, field_error
from transfers.agency.once import fresh_key, refused_status, submit_once
from transfers.agency.queries import events_of_booking
from transfers.agency.render import page
from transfers.bookings import amend
from transfers.bookings import repository as bookings_repo
from transfers.bookings import service as bookings
from transfers.bookings.models import Booking
from transfers.bookings.reservation import could_exist
from transfers.bookings.resource import booking_resource
from transfers.clients.repository import record_admin_action
from transfers.errors import DomainError, ErrorCode, Invalid
from transfers.flights.news import flight_news
from transfers.incidents import service as incidents
from transfers.messages import listing as traveller_messages
from transfers.reference.airports import find_airport
from transfers.reference.repository import active_cancellation_reasons

router = APIRouter()
NO_SUCH_BOOKING = "There is no booking with this reservation number in your agency."
CHANGE_FIELDS = ("pickup_date", "pickup_time", "name", "surname", "email", "phone", "flight", "notes", "key")


async def client_booking_or_404(request: Request, viewer: AgencyViewer, reservation_no: str) -> Booking:
    if not could_exist(reservation_no):
        raise PageNotFound(NO_SUCH_BOOKING)
    async with services(request).db.read() as conn:
        booking = await bookings_repo.get_for_client(conn, viewer.client_id, reservation_no)
    if booking is None:
        raise PageNotFound(NO_SUCH_BOOKING)
    return booking


def _tracking_link(request: Request, booking: Booking, resource: dict[str, Any]) -> str | None:
    """The traveller's page (docs/rules/ride.md#tracking-page) to copy for the traveller: the
    resource's ``ride.tracking_url`` when it gives one, else the page the booking's token opens on
    this service (``/t/{token}``), else None (a booking from before the ride's pages)."""
    ride = resource.get("ride")
    given = ride.get("tracking_url") if isinstance(ride, dict) else None
    if isinstance(given, str) and given.startswith(("http://", "https://", "/")):
        return given
    token = getattr(booking, "tracking_token", None)
    if isinstance(token, str) and token:
        return f"{request.url.scheme}://{request.url.netloc}/t/{token}"
    return None


async def audit(request: Request, viewer: AgencyViewer, action: str, reservation_no: str, **details: Any) -> None:
    svc = services(request)
    async with svc.db.write() as conn:
        await record_admin_action(
            conn,
            actor=viewer.actor,
            action=f"agency.booking.{action}",
            subject=f"booking:{reservation_no}",
            details={"client_id": viewer.client_id, **details},
            now=svc.clock.now(),
        )


@router.get("/bookings/{reservation_no}")
async def booking_page(request: Request, reservation_no: str, viewer: Signed) -> Response:
    booking = await client_booking_or_404(request, viewer, reservation_no)
    svc = services(request)
    now = svc.clock.now()
    resource = booking_resource(booking, now)
    async with svc.db.read() as conn:
        story = await bookings_repo.transitions_of(conn, booking.id)
        events = await events_of_booking(conn, viewer.client_id, booking.id)
        reported = [incident.resource() for incident in await incidents.of_booking(conn, booking.id)]
    quote = await bookings.cancellation_quote(svc, viewer.client, booking.reservation_no)
    # docs/rules/messages.md#seen: the messages written to the traveller in the agency's name
    to_traveller = await traveller_messages.for_booking_page(svc, booking.id, viewer.client_id)
    notice = {
        "booked": "Booked. The transport company confirms it shortly; this page shows when it does.",
        "cancelled": "Cancelled. The refund is in your wallet.",
        "changed": "The change is sent to the transport company; this page shows when it is confirmed.",
        "reported": "The problem is reported: the service's operators look into it; their decision shows here.",
    }
    shown = next((text for key, text in notice.items() if request.query_params.get(key)), "")
    context = {
        "active": "Bookings",
        "b": booking,
        "r": resource,
        "airport": find_airport(booking.airport_iata),
        "story": story,
        "events": events,
        "quote": quote,
        "tracking": _tracking_link(request, booking, resource),
        "notice": shown,
        "amendable": _amendable(booking, now),
        "incidents": reported,
        # docs/rules/flights.md#in-words: what happened to the flight; a disruption leads the page
        "news": flight_news(booking.trip, booking.status.value),
        **to_traveller,
    }
    return page(request, "bookings/detail.html", context, viewer=viewer, title=booking.reservation_no)


def _amendable(booking: Booking, now: Any) -> str:
    """ "" when a change may be asked now, else why not (the API's own check, read-only)."""
    try:
        amend.check_amendable(booking, now)
    except DomainError as exc:
        return exc.message
    return ""


# ---- Cancel booking: the fee first, then the reason and the button -------------------------------


async def _cancel_page(
    request: Request,
    viewer: AgencyViewer,
    booking: Booking,
    typed: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    svc = services(request)
    quote = await bookings.cancellation_quote(svc, viewer.client, booking.reservation_no)
    async with svc.db.read() as conn:
        reasons = await active_cancellation_reasons(conn)
    context = {
        "active": "Bookings",
        "b": booking,
        "quote": quote,
        "reasons": reasons,
        "typed": typed,
        "errors": errors or {},
        "news": flight_news(booking.trip, booking.status.value),
    }
    return page(
        request, "bookings/cancel.html", context, viewer=viewer, status_code=status_code, title="Cancel booking"
    )


@router.get("/bookings/{reservation_no}/cancel")
async def cancel_form(request: Request, reservation_no: str, viewer: Signed) -> Response:
    booking = await client_booking_or_404(request, viewer, reservation_no)
    return await _cancel_page(request, viewer, booking, {"key": fresh_key(), "reason": "", "note": ""})


@router.post("/bookings/{reservation_no}/cancel")
async def cancel(request: Request, reservation_no: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    booking = await client_booking_or_404(request, viewer, reservation_no)
    typed = {name: forms.text(form, name, 10_000) for name in ("reason", "note", "key")}
    viewer.require_active_client()
    svc = services(request)

    async def cancel_once() -> str:
        key = typed["key"].strip()[:64] or fresh_key()
        done = await bookings.cancel_booking(
            svc,
            viewer.client,
            booking.reservation_no,
            typed["reason"] or None,
            typed["note"] or None,
            f"agency:{viewer.user_id}:{key}",
        )
        await audit(request, viewer, "cancel", done.reservation_no, reason=typed["reason"][:20])
        return f"/agency/bookings/{done.reservation_no}?cancelled=1"

    try:
        location = await submit_once(request, viewer, typed, cancel_once)
    except DomainError as exc:
        field, message = field_error(exc)
        status = refused_status(exc)
        return await _cancel_page(request, viewer, booking, typed, errors={field: message}, status_code=status)
    return RedirectResponse(location, status_code=303)


# ---- Change: an amendment (only the fields that differ are sent) ---------------------------------


def _current(booking: Booking) -> dict[str, str]:
    airport = find_airport(booking.airport_iata)
    local = booking.pickup_at.astimezone(airport.tz) if airport else booking.pickup_at
    return {
        "pickup_date": local.strftime("%Y-%m-%d"),
        "pickup_time": local.strftime("%H:%M"),
        "name": booking.passenger_name,
        "surname": booking.passenger_surname,
        "email": booking.passenger_email,
        "phone": booking.passenger_phone,
        "flight": booking.flight_number,
        "notes": booking.extra_requests or "",
    }


def _change_page(
    request: Request,
    viewer: AgencyViewer,
    booking: Booking,
    typed: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "active": "Bookings",
        "b": booking,
        "typed": typed,
        "errors": errors or {},
        "refusal": _amendable(booking, services(request).clock.now()),
    }
    return page(request, "bookings/change.html", context, viewer=viewer, status_code=status_code, title="Change")


@router.get("/bookings/{reservation_no}/change")
async def change_form(request: Request, reservation_no: str, viewer: Signed) -> Response:
    booking = await client_booking_or_404(request, viewer, reservation_no)
    return _change_page(request, viewer, booking, {**_current(booking), "key": fresh_key()})


def _amendment_body(before: dict[str, str], typed: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if (typed["pickup_date"].strip(), typed["pickup_time"].strip()) != (before["pickup_date"], before["pickup_time"]):
        time_text = typed["pickup_time"].strip()
        body["pickup_datetime"] = f"{typed['pickup_date'].strip()}T{time_text}{':00' if len(time_text) == 5 else ''}"
    passenger = {
        api: typed[name].strip()
        for name, api in (("name", "name"), ("surname", "surname"), ("email", "email"), ("phone", "phone"))
        if typed[name].strip() != before[name]
    }
    if passenger:
        body["passenger"] = passenger
    travel: dict[str, Any] = {}
    if typed["flight"].strip() != before["flight"]:
        travel["flight_number"] = typed["flight"].strip()
    if typed["notes"].strip() != before["notes"]:
        travel["extra_requests"] = typed["notes"].strip() or None
    if travel:
        body["travel_details"] = travel
    return body


@router.post("/bookings/{reservation_no}/change")
async def change(request: Request, reservation_no: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    booking = await client_booking_or_404(request, viewer, reservation_no)
    typed = {name: forms.text(form, name, 10_000) for name in CHANGE_FIELDS}
    viewer.require_active_client()
    body = _amendment_body(_current(booking), typed)

    async def amend_once() -> str:
        if not body:  # checked here, so a repeat of a change already applied is its first answer again
            raise Invalid(ErrorCode.AMENDMENT_EMPTY, "Nothing was changed: edit a field first.")
        await amend.request_amendment(services(request), viewer.client, booking.reservation_no, body)
        await audit(request, viewer, "amend", booking.reservation_no, fields=sorted(body))
        return f"/agency/bookings/{booking.reservation_no}?changed=1"

    try:
        location = await submit_once(request, viewer, typed, amend_once)
    except DomainError as exc:
        field, message = field_error(exc)
        field = {"pickup_date": "pickup_date", "adult": GENERAL, "airport": GENERAL}.get(field, field)
        return _change_page(request, viewer, booking, typed, errors={field: message}, status_code=refused_status(exc))
    return RedirectResponse(location, status_code=303)
