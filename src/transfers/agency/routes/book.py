"""``Book``, its first step (docs/rules/agency-portal.md#pages): airport, from it or to it, the place,
pickup date and time (the airport's clock), the way back (optional), travellers -> the offers
(vehicle, capacity, price, the cancellation policy in words, the rate and its date when the price
was converted; with a way back, its offers too, chosen as a pair). An agency holding wallets in
several currencies chooses the search's currency (the default wallet's first). Without JavaScript
end to end. The second step (passenger, flight, extras, ``Book``) is ``book_passenger.py``.

The search is the API's own use case with the agency's client (``search.service.search``, the body
built by ``trip_form.py``): the same rules, codes and stored search, shown beside the fields
(``messages.py``).

The destination (docs/rules/agency-portal.md#geocoder): typed coordinates win; otherwise the place
typed is looked up by the geocoder near the airport, the best match used, and the other matches
offered as choices (``pick``) to search again; with JavaScript, ``static/agency.js`` offers matches
as the name is typed (``GET /agency/book/places``) and fills the coordinates."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from transfers.agency import forms, trip_form
from transfers.agency.auth import AgencyViewer, Signed, services
from transfers.agency.messages import GENERAL, field_error
from transfers.agency.render import page
from transfers.errors import DomainError
from transfers.geo import GeocoderUnavailable, Place
from transfers.reference.airports import Airport, find_airport
from transfers.search import service as searching
from transfers.wallet import statement

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
    "direction",
    "return_date",
    "return_time",
    "currency",
)
MAX_FIELD = 10_000  # longer than any rule allows: the API's own rules answer, never a silent cut


def _number(value: str, low: float, high: float) -> float | None:
    try:
        number = float(value.strip().replace(",", "."))
    except ValueError:
        return None
    return number if low <= number <= high else None


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
        errors["place"] = "Enter the destination: a town or a known place near the airport, or its coordinates."
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
            f"No town or place called “{typed['place'][:60]}” was found near the airport: check the spelling, "
            "try the town's name (hotels and street addresses are not known), or enter coordinates."
        )
        return None
    best = matches[0]
    return best.lat, best.lng, best.label, matches


def _limits(request: Request) -> dict[str, object]:
    settings = services(request).settings
    hours = settings.min_lead_time_seconds / 3600
    lead = f"{hours:g} hours" if hours >= 1 else f"{settings.min_lead_time_seconds // 60} minutes"
    return {"lead": lead, "ahead": settings.max_days_ahead, "most": settings.max_travelers}


async def _currencies(request: Request, viewer: AgencyViewer) -> list[str]:
    """The currencies the agency may search in, the default wallet's first (docs/rules/fx.md#search): the
    form asks for one only when there are several (a single wallet, or none, asks nothing)."""
    wallets = (await statement.every_wallet(services(request), viewer.client))["data"]
    return [w["currency"] for w in sorted(wallets, key=lambda w: not w["default"])]


async def _book_page(
    request: Request,
    viewer: AgencyViewer,
    typed: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    found: dict[str, Any] | None = None,
    destination: tuple[float, float, str, list[Place]] | None = None,
    status_code: int = 200,
) -> Response:
    currencies = await _currencies(request, viewer)
    context = {
        "currencies": currencies if len(currencies) > 1 else [],
        "active": "Book",
        "typed": typed,
        "errors": errors or {},
        "found": found,
        "destination": destination,
        "airport": find_airport(typed.get("airport", "").strip().upper()),
        "to_airport": trip_form.direction(typed) == trip_form.TO_AIRPORT,
    }
    return page(request, "book/search.html", context, viewer=viewer, status_code=status_code, title="Book a transfer")


@router.get("/book")
async def book_form(request: Request, viewer: Signed) -> Response:
    services(request).geocoder.start_warming()  # the gazetteer loads while the person types
    typed = {name: forms.text(request.query_params, name, 200) for name in SEARCH_FIELDS}
    typed["adult"] = typed["adult"] or "2"
    typed["children"] = typed["children"] or "0"
    typed["infant"] = typed["infant"] or "0"
    typed["direction"] = trip_form.direction(typed)
    return await _book_page(request, viewer, typed)


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
    errors.update(trip_form.return_problems(typed))
    destination = await _destination(request, typed, errors)
    if errors or destination is None:
        return await _book_page(request, viewer, typed, errors=errors, destination=destination, status_code=422)
    lat, lng, label, _ = destination
    body = trip_form.search_body(typed, lat, lng, label)
    try:
        found = await searching.search(services(request), viewer.client, body)
    except DomainError as exc:
        field, message = field_error(exc, **_limits(request))
        return await _book_page(
            request, viewer, typed, errors={field: message}, destination=destination, status_code=422
        )
    return await _book_page(request, viewer, typed, found=found, destination=destination)


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


@router.get("/book/{search_id}")
async def choose_pair(request: Request, search_id: str, viewer: Signed) -> Response:
    """The offers of a search with a way back are one form (a way out and a way back chosen with radio
    buttons, or the way out alone), sent here; its answer is the passenger step of that choice."""
    vehicle = forms.text(request.query_params, "vehicle", 8)
    back = forms.text(request.query_params, "back", 8)
    target = f"/agency/book/{quote(search_id[:64], safe='')}/{quote(vehicle or '0', safe='')}"
    if back and back != "none":
        target += f"?back={quote(back, safe='')}"
    return RedirectResponse(target, status_code=303)


__all__ = ["GENERAL", "router"]
