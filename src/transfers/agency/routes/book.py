"""``Book`` (docs/rules/agency-portal.md#pages): airport, destination, pickup date and time (the
airport's clock), travellers -> the offers (vehicle, capacity, price, the cancellation policy in
words) -> passenger and flight -> ``Book`` -> the booking's page. Without JavaScript end to end.

The two steps are the API's own use cases with the agency's client (``search.service.search``,
``bookings.service.create_booking``): the same rules, codes and stored search, shown beside the
fields (``messages.py``). The booking form carries an idempotency key made when the form was shown,
so pressing ``Book`` twice (or reloading the answer) gives the one booking, as the API's
``Idempotency-Key`` does (``once.py``; the booking also keeps the key, as the API's create does);
the booking's creation is also written to the audit log, once, with the agency user as the actor.

The destination (docs/rules/agency-portal.md#geocoder): typed coordinates win; otherwise the place
typed is looked up by the geocoder near the airport, the best match used, and the other matches
offered as choices (``pick``) to search again; with JavaScript, ``static/agency.js`` offers matches
as the name is typed (``GET /agency/book/places``) and fills the coordinates."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from transfers.agency import forms
from transfers.agency.auth import AgencyViewer, Signed, services
from transfers.agency.messages import GENERAL, field_error
from transfers.agency.once import fresh_key, refused_status, submit_once
from transfers.agency.render import page
from transfers.bookings import repository as bookings_repo
from transfers.bookings import service as bookings
from transfers.clients.repository import record_admin_action
from transfers.errors import DomainError
from transfers.geo import GeocoderUnavailable, Place
from transfers.reference.airports import Airport, find_airport
from transfers.search import service as searching

router = APIRouter()
SEARCH_FIELDS = (
    "airport",
    "place",
    "lat",
    "lng",
    "pick",
    "picked_for",
    "pickup_date",
    "pickup_time",
    "adult",
    "children",
    "infant",
)
PASSENGER_FIELDS = ("name", "surname", "email", "phone", "flight", "suitcase", "small_bags", "notes", "key")
MAX_FIELD = 10_000  # longer than any rule allows: the API's own rules answer, never a silent cut


def _number(value: str, low: float, high: float) -> float | None:
    try:
        number = float(value.strip().replace(",", "."))
    except ValueError:
        return None
    return number if low <= number <= high else None


def _count(value: str) -> int | str:
    """A count as the API takes it: an integer, or the text as typed (the API refuses it with its code)."""
    text = value.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 6 else text


def _picked(value: str) -> tuple[float, float, str] | None:
    """A ``pick`` choice: "lat,lng|label" as the page wrote it."""
    point, _, label = value.partition("|")
    lat_text, _, lng_text = point.partition(",")
    lat, lng = _number(lat_text, -90, 90), _number(lng_text, -180, 180)
    return None if lat is None or lng is None or not label else (lat, lng, label)


async def _places(request: Request, query: str, airport: Airport | None) -> list[Place]:
    near = (airport.lat, airport.lng) if airport else None
    return await services(request).geocoder.search(query, near=near, limit=6)


async def _destination(
    request: Request, typed: dict[str, str], errors: dict[str, str]
) -> tuple[float, float, str, list[Place]] | None:
    """Where the trip goes: typed coordinates win; else the picked match; else the best match of
    the typed place. Problems go beside the field that can fix them."""
    airport = find_airport(typed["airport"].strip().upper()) if typed["airport"].strip() else None
    if typed["lat"].strip() or typed["lng"].strip():
        lat, lng = _number(typed["lat"], -90, 90), _number(typed["lng"], -180, 180)
        if lat is None:
            errors["lat"] = "Enter a latitude between -90 and 90, like 51.5074."
        if lng is None:
            errors["lng"] = "Enter a longitude between -180 and 180, like -0.1278."
        if lat is None or lng is None:
            return None
        label = typed["place"].strip() or f"{lat:.5f}, {lng:.5f}"
        return lat, lng, label, []
    if not typed["place"].strip():
        errors["place"] = "Enter the destination: a town or an address, or its coordinates."
        return None
    try:
        matches = await _places(request, typed["place"], airport)
    except GeocoderUnavailable as exc:
        errors["place"] = f"{exc} Enter the coordinates instead."
        return None
    picked = _picked(typed["pick"]) if typed["pick"] and typed["picked_for"] == typed["place"] else None
    if picked is not None:
        return (*picked, matches)
    if not matches:
        errors["place"] = (
            f"No place called “{typed['place'][:60]}” was found: check the spelling, or enter coordinates."
        )
        return None
    best = matches[0]
    return best.lat, best.lng, best.label, matches


def _limits(request: Request) -> dict[str, object]:
    settings = services(request).settings
    hours = settings.min_lead_time_seconds / 3600
    lead = f"{hours:g} hours" if hours >= 1 else f"{settings.min_lead_time_seconds // 60} minutes"
    return {"lead": lead, "ahead": settings.max_days_ahead, "most": settings.max_travelers}


def _book_page(
    request: Request,
    viewer: AgencyViewer,
    typed: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    found: dict[str, Any] | None = None,
    destination: tuple[float, float, str, list[Place]] | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "active": "Book",
        "typed": typed,
        "errors": errors or {},
        "found": found,
        "destination": destination,
        "airport": find_airport(typed.get("airport", "").strip().upper()),
    }
    return page(request, "book/search.html", context, viewer=viewer, status_code=status_code, title="Book a transfer")


@router.get("/book")
async def book_form(request: Request, viewer: Signed) -> Response:
    services(request).geocoder.start_warming()  # the gazetteer loads while the person types
    typed = {name: forms.text(request.query_params, name, 200) for name in SEARCH_FIELDS}
    typed["adult"] = typed["adult"] or "2"
    typed["children"] = typed["children"] or "0"
    typed["infant"] = typed["infant"] or "0"
    return _book_page(request, viewer, typed)


@router.post("/book")
async def book_search(request: Request, viewer: Signed) -> Response:
    form = await viewer.form(request)
    typed = {name: forms.text(form, name, MAX_FIELD) for name in SEARCH_FIELDS}
    viewer.require_active_client()
    errors: dict[str, str] = {}
    if not typed["pickup_date"].strip():
        errors["pickup_date"] = "Enter the pickup date."
    if not typed["pickup_time"].strip():
        errors["pickup_time"] = "Enter the pickup time at the airport, like 14:30."
    destination = await _destination(request, typed, errors)
    if errors or destination is None:
        return _book_page(request, viewer, typed, errors=errors, destination=destination, status_code=422)
    lat, lng, label, _ = destination
    time_text = typed["pickup_time"].strip()
    body = {
        "pickup_datetime": f"{typed['pickup_date'].strip()}T{time_text}{':00' if len(time_text) == 5 else ''}",
        "pickup_location": {"type": "AIRPORT", "iata_code": typed["airport"].strip().upper()},
        "dropoff_location": {"type": "POINT", "lat": lat, "lng": lng, "name": label},
        "travelers": {
            "adult": _count(typed["adult"]),
            "children": _count(typed["children"] or "0"),
            "infant": _count(typed["infant"] or "0"),
        },
    }
    try:
        found = await searching.search(services(request), viewer.client, body)
    except DomainError as exc:
        field, message = field_error(exc, **_limits(request))
        return _book_page(request, viewer, typed, errors={field: message}, destination=destination, status_code=422)
    return _book_page(request, viewer, typed, found=found, destination=destination)


async def _offer(request: Request, viewer: AgencyViewer, search_id: str, vehicle_id: str) -> dict[str, Any]:
    """The chosen offer of the agency's own, unexpired search; anything else: these offers expired."""
    svc = services(request)
    number = int(vehicle_id) if vehicle_id.isascii() and vehicle_id.isdigit() and len(vehicle_id) < 6 else None
    search, offer, _ = await bookings_repo.find_offer(
        svc.db, client_id=viewer.client_id, search_id=search_id[:64], vehicle_no=number, now=svc.clock.now()
    )
    return {"search": search, "offer": offer, "search_id": search_id[:64], "vehicle_id": vehicle_id[:8]}


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
    chosen = await _offer(request, viewer, search_id, vehicle_id)
    typed = {name: "" for name in PASSENGER_FIELDS}
    typed.update(suitcase="1", small_bags="0", key=fresh_key())
    status = 200 if chosen["offer"] is not None else 410
    return _passenger_page(request, viewer, chosen, typed, status_code=status)


@router.post("/book/{search_id}/{vehicle_id}")
async def book(request: Request, search_id: str, vehicle_id: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    typed = {name: forms.text(form, name, 1000 if name == "notes" else MAX_FIELD) for name in PASSENGER_FIELDS}
    viewer.require_active_client()
    chosen = await _offer(request, viewer, search_id, vehicle_id)
    key = typed["key"].strip()
    if not key or len(key) > 64:
        key = fresh_key()
        typed["key"] = key
    body: dict[str, Any] = {
        "search_id": search_id[:64],
        "vehicle_id": vehicle_id[:8],
        "suitcase": _count(typed["suitcase"] or "0"),
        "small_bags": _count(typed["small_bags"] or "0"),
        "passenger": {
            "name": typed["name"].strip(),
            "surname": typed["surname"].strip(),
            "phone": typed["phone"].strip(),
            "email": typed["email"].strip(),
        },
        "travel_details": {"flight_number": typed["flight"].strip(), "extra_requests": typed["notes"].strip() or None},
    }
    svc = services(request)

    async def book_once() -> str:
        booked = await bookings.create_booking(svc, viewer.client, body, f"agency:{viewer.user_id}:{key}")
        async with svc.db.write() as conn:
            await record_admin_action(
                conn,
                actor=viewer.actor,
                action="agency.booking.create",
                subject=f"booking:{booked.reservation_no}",
                details={"client_id": viewer.client_id, "search_id": body["search_id"]},
                now=svc.clock.now(),
            )
        return f"/agency/bookings/{booked.reservation_no}?booked=1"

    try:
        location = await submit_once(request, viewer, typed, book_once)
    except DomainError as exc:
        field, message = field_error(exc)
        errors = {field: message}
        return _passenger_page(request, viewer, chosen, typed, errors=errors, status_code=refused_status(exc))
    return RedirectResponse(location, status_code=303)


@router.get("/book/places")
async def places(request: Request, viewer: Signed) -> Response:
    """Matches for the destination as it is typed (JSON for ``agency.js``): ``{"places": [...]}``,
    or ``{"places": [], "problem": "..."}`` when the geocoder cannot answer now."""
    query = forms.text(request.query_params, "q", 200)
    airport = find_airport(forms.text(request.query_params, "airport", 3).upper())
    if len(query.strip()) < 2:
        return JSONResponse({"places": []})
    try:
        found = await _places(request, query, airport)
    except GeocoderUnavailable as exc:
        return JSONResponse({"places": [], "problem": str(exc)})
    return JSONResponse({"places": [p.as_dict() for p in found]})


__all__ = ["GENERAL", "router"]
