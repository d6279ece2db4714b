"""``Book``, its second step (docs/rules/agency-portal.md#pages): the chosen offer (and, for a return
trip, the chosen way back) -> passenger, flight, luggage, the offer's extras with their quantities
(and the way back's departing flight) -> ``Book`` -> the booking's page. Without JavaScript.

The booking is the API's own use case with the agency's client (``bookings.service.create_booking``,
or ``returns.service.create_trip`` for the pair: two bookings in one transaction, both debits or
neither): the same rules and codes, shown beside the fields (``messages.py``). The form carries an
idempotency key made when it was shown, so pressing ``Book`` twice (or reloading the answer) gives the
one booking (or the one pair), as the API's ``Idempotency-Key`` does (``once.py``; the booking also
keeps the key, as the API's create does); each booking's creation is written to the audit log, once,
with the agency user as the actor."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.agency import forms, trip_form
from transfers.agency.auth import AgencyViewer, Signed, services
from transfers.agency.messages import field_error
from transfers.agency.once import fresh_key, refused_status, submit_once
from transfers.agency.render import page
from transfers.bookings import repository as bookings_repo
from transfers.bookings import service as bookings
from transfers.bookings.models import Booking
from transfers.clients.repository import record_admin_action
from transfers.errors import DomainError
from transfers.returns import service as returns

router = APIRouter()
PASSENGER_FIELDS = (
    "name",
    "surname",
    "email",
    "phone",
    "flight",
    "suitcase",
    "small_bags",
    "notes",
    "return_flight",
    "key",
)
MAX_FIELD = 10_000  # longer than any rule allows: the API's own rules answer, never a silent cut


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 6 else None


async def _offer(request: Request, viewer: AgencyViewer, search_id: str, vehicle_id: str, back: str) -> dict[str, Any]:
    """The chosen offer (and way back) of the agency's own, unexpired search; anything else: these
    offers expired. ``back`` "": a single booking."""
    svc = services(request)
    sid = search_id[:64]
    if back:
        search, (offer, _), (back_offer, _) = await bookings_repo.find_offers(
            svc.db,
            client_id=viewer.client_id,
            search_id=sid,
            vehicle_no=_number(vehicle_id),
            back_no=_number(back),
            now=svc.clock.now(),
        )
    else:
        search, offer, _ = await bookings_repo.find_offer(
            svc.db, client_id=viewer.client_id, search_id=sid, vehicle_no=_number(vehicle_id), now=svc.clock.now()
        )
        back_offer = None
    if back and back_offer is None:
        offer = None  # a way back that is not in the search: the pair has expired as a whole
    return {
        "search": search,
        "offer": offer,
        "back_offer": back_offer,
        "search_id": sid,
        "vehicle_id": vehicle_id[:8],
        "back": back[:8],
        "extras": list(offer.extras) if offer is not None else [],
    }


def _passenger_page(
    request: Request,
    viewer: AgencyViewer,
    chosen: dict[str, Any],
    typed: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    context = {"active": "Book", "typed": typed, "errors": errors or {}, **chosen}
    return page(request, "book/passenger.html", context, viewer=viewer, status_code=status_code, title="Passenger")


@router.get("/book/{search_id}/{vehicle_id}")
async def passenger_form(request: Request, search_id: str, vehicle_id: str, viewer: Signed) -> Response:
    back = forms.text(request.query_params, "back", 8)
    chosen = await _offer(request, viewer, search_id, vehicle_id, back)
    typed = {name: "" for name in PASSENGER_FIELDS}
    typed.update(suitcase="1", small_bags="0", key=fresh_key())
    typed.update({trip_form.extra_field(extra.id): "0" for extra in chosen["extras"]})
    status = 200 if chosen["offer"] is not None else 410
    return _passenger_page(request, viewer, chosen, typed, status_code=status)


def _body(chosen: dict[str, Any], typed: dict[str, str], extras: list[dict[str, Any]]) -> dict[str, Any]:
    """The API's create request for the form."""
    body: dict[str, Any] = {
        "search_id": chosen["search_id"],
        "vehicle_id": chosen["vehicle_id"],
        "suitcase": trip_form.count(typed["suitcase"] or "0"),
        "small_bags": trip_form.count(typed["small_bags"] or "0"),
        "passenger": {
            "name": typed["name"].strip(),
            "surname": typed["surname"].strip(),
            "phone": typed["phone"].strip(),
            "email": typed["email"].strip(),
        },
        "travel_details": {"flight_number": typed["flight"].strip(), "extra_requests": typed["notes"].strip() or None},
    }
    if extras:
        body["extra_services"] = extras
    if chosen["back"]:
        body["return_vehicle_id"] = trip_form.count(chosen["back"])
        if typed["return_flight"].strip():
            body["return_travel_details"] = {"flight_number": typed["return_flight"].strip()}
    return body


@router.post("/book/{search_id}/{vehicle_id}")
async def book(request: Request, search_id: str, vehicle_id: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    typed = {name: forms.text(form, name, 1000 if name == "notes" else MAX_FIELD) for name in PASSENGER_FIELDS}
    viewer.require_active_client()
    back = forms.text(form, "back", 8) or forms.text(request.query_params, "back", 8)
    chosen = await _offer(request, viewer, search_id, vehicle_id, back)
    extras, typed_extras = trip_form.chosen_extras(form, [extra.id for extra in chosen["extras"]])
    typed.update(typed_extras, back=chosen["back"])  # the way back chosen is part of the form sent once
    key = typed["key"].strip()
    if not key or len(key) > 64:
        key = fresh_key()
        typed["key"] = key
    body = _body(chosen, typed, extras)
    svc = services(request)

    async def book_once() -> str:
        idempotency_key = f"agency:{viewer.user_id}:{key}"
        legs: list[Booking]
        if chosen["back"]:
            legs = list(await returns.create_trip(svc, viewer.client, body, idempotency_key))
        else:
            legs = [await bookings.create_booking(svc, viewer.client, body, idempotency_key)]
        async with svc.db.write() as conn:
            for leg in legs:
                await record_admin_action(
                    conn,
                    actor=viewer.actor,
                    action="agency.booking.create",
                    subject=f"booking:{leg.reservation_no}",
                    details={"client_id": viewer.client_id, "search_id": body["search_id"]},
                    now=svc.clock.now(),
                )
        return f"/agency/bookings/{legs[0].reservation_no}?booked=1"

    try:
        location = await submit_once(request, viewer, typed, book_once)
    except DomainError as exc:
        field, message = field_error(exc)
        errors = {field: message}
        return _passenger_page(request, viewer, chosen, typed, errors=errors, status_code=refused_status(exc))
    return RedirectResponse(location, status_code=303)
