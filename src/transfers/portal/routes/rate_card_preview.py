"""The rate card's price preview: the card as typed in the form (saved or not) priced for one trip
exactly as searches price it (``ratecards/pricing.py``), with the partner's markup. Nothing is stored.

The destination is a place from the geocoder (``transfers/geo``, ``TRANSFERS_GEOCODER``) or typed
coordinates. Without JavaScript it is search-then-pick: ``Preview prices`` with a place typed
prices the best match at once and lists the other matches as choices (``pick``); with JavaScript,
``static/portal.js`` offers matches as the name is typed (``GET /partner/rate-card/places``) and
refreshes the table as fields change."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from transfers import money
from transfers.geo import GeocoderUnavailable, Place
from transfers.partners.models import sell_price
from transfers.portal import card_form
from transfers.portal.auth import Signed, services
from transfers.portal.routes.rate_card import checked, editor, partner_airports, signed_partner
from transfers.ratecards import card as cards
from transfers.ratecards import pricing
from transfers.ratecards import repository as repo
from transfers.reference.airports import Airport, find_airport, great_circle_km
from transfers.webauth.forms import text

router = APIRouter()
NOON = time(12, 0)
TRIP_FIELDS = ("airport", "place", "pick", "picked_for", "lat", "lng", "pickup")


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
    return None if lat is None or lng is None else (lat, lng, label)


async def _places(request: Request, query: str, airport: Airport | None) -> list[Place]:
    near = (airport.lat, airport.lng) if airport else None
    return await services(request).geocoder.search(query, near=near, limit=6)


async def _destination(
    request: Request, typed: dict[str, str], airport: Airport | None, problems: dict[str, str]
) -> tuple[float, float, str, list[Place]] | None:
    """Where the trip goes: typed coordinates win; else the picked match; else the best match of
    the typed place. Problems go beside the field that can fix them."""
    if typed["lat"] or typed["lng"]:
        lat, lng = _number(typed["lat"], -90, 90), _number(typed["lng"], -180, 180)
        if lat is None:
            problems["lat"] = "Enter a latitude between -90 and 90, like 51.5074."
        if lng is None:
            problems["lng"] = "Enter a longitude between -180 and 180, like -0.1278."
        if lat is None or lng is None:
            return None
        where = f"{lat:.4f}, {lng:.4f}"
        return lat, lng, f"{typed['place']} ({where})" if typed["place"] else where, []
    if not typed["place"]:
        problems["place"] = "Enter a place (a town, or an airport code), or its coordinates."
        return None
    try:
        matches = await _places(request, typed["place"], airport)
    except GeocoderUnavailable as exc:
        problems["place"] = f"{exc} Enter the coordinates instead."
        return None
    picked = _picked(typed["pick"]) if typed["pick"] and typed["picked_for"] == typed["place"] else None
    if picked is not None:
        return (*picked, matches)
    if not matches:
        problems["place"] = (
            f"No place called “{typed['place'][:60]}” was found: check the spelling, or enter coordinates."
        )
        return None
    best = matches[0]
    return best.lat, best.lng, best.label, matches


@router.post("/rate-card/preview")
async def rate_card_preview(request: Request, viewer: Signed) -> Response:
    posted = await viewer.form(request)
    viewer.require_hosted()
    svc = services(request)
    form = card_form.from_post(posted)
    typed = {name: text(posted.get(name), limit=200)[0] for name in TRIP_FIELDS}
    problems: dict[str, str] = {}
    airports, _ = await partner_airports(request, viewer)
    airport = find_airport(typed["airport"]) if typed["airport"] in airports else None
    if airport is None:
        problems["airport"] = "Choose one of your airports."
    destination = await _destination(request, typed, airport, problems)
    now = svc.clock.now()
    # No time typed: noon a week ahead at the airport, a day-time price whatever the hour of the preview
    # (a night surcharge shows only when a night time is typed).
    pickup_at = now + timedelta(days=7)
    if airport is not None:
        pickup_at = datetime.combine((now.astimezone(airport.tz) + timedelta(days=7)).date(), NOON, airport.tz)
    if typed["pickup"]:
        try:
            local = datetime.fromisoformat(typed["pickup"].replace(" ", "T"))
            pickup_at = local.replace(tzinfo=airport.tz) if airport and local.tzinfo is None else local
        except ValueError:
            problems["pickup"] = "Enter a local date and time, like 2027-03-01 14:30."
    document, errors, general = await checked(request, form)
    preview: dict[str, Any] = {"typed": typed, "problems": problems, "rows": [], "refusal": None, "matches": []}
    if destination is not None:
        lat, lng, label, matches = destination
        preview.update(place_label=label, matches=matches, chosen=f"{lat},{lng}")
    if not problems and not errors and not general and airport is not None and destination is not None:
        card = cards.load_stored(document)
        distance = round(great_circle_km(airport.lat, airport.lng, destination[0], destination[1]))
        trip = pricing.Trip(airport.iata, airport.tz, pickup_at, distance, now)
        async with svc.db.read() as conn:
            booked = await repo.booked_on(conn, viewer.partner_id, trip.local_date)
            markup = Decimal((await signed_partner(conn, viewer)).markup_percent)
        preview.update(
            distance=distance,
            local_pickup=trip.local_pickup.strftime("%Y-%m-%d %H:%M"),
            refusal=pricing.refusal(card, trip),
        )
        offered = {q.vehicle.id: q for q in pricing.quote(card, trip, booked)}
        for vehicle in card.vehicles:
            quote = offered.get(vehicle.id)
            preview["rows"].append(
                {
                    "vehicle": vehicle,
                    "net": money.text(quote.net_price, card.currency) if quote else None,
                    "sell": money.text(sell_price(quote.net_price, markup, card.currency), card.currency)
                    if quote
                    else None,
                    "currency": card.currency,
                    "booked": booked.get(vehicle.id, 0),
                }
            )
    return await editor(
        request,
        viewer,
        form,
        errors=errors,
        general=general,
        preview=preview,
        status_code=422 if problems or errors or general else 200,
    )


@router.get("/rate-card/places")
async def rate_card_places(request: Request, viewer: Signed) -> Response:
    """Matches for the place field as it is typed (JSON for ``portal.js``): ``{"places": [...]}``,
    or ``{"places": [], "problem": "..."}`` when the geocoder cannot answer now."""
    viewer.require_hosted()
    query, _ = text(request.query_params.get("q"), limit=200)
    airport = find_airport(request.query_params.get("airport", ""))
    if len(query.strip()) < 2:
        return JSONResponse({"places": []})
    try:
        places = await _places(request, query, airport)
    except GeocoderUnavailable as exc:
        return JSONResponse({"places": [], "problem": str(exc)})
    return JSONResponse({"places": [p.as_dict() for p in places]})
