"""The hosted partner's rate card: the JSON editor (``/partner/rate-card``; every problem listed
with its path and reason, nothing saved then) and the live price preview for an airport and an
address, priced exactly as searches price it (``hosted/pricing.py``), with the partner's markup.

The preview works without JavaScript (the ``Preview prices`` button renders the page with the
table); ``static/portal.js`` refreshes the table as the fields change."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.console.forms import text
from transfers.hosted import card as cards
from transfers.hosted import pricing
from transfers.hosted import repository as repo
from transfers.hosted import service as hosted_service
from transfers.partners.models import sell_price
from transfers.portal.auth import PREFIX, PartnerViewer, Signed, services
from transfers.portal.render import page
from transfers.search.airports import find_airport, great_circle_km

router = APIRouter()
MAX_CARD_CHARS = 200_000


def _pretty(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


async def _partner(request: Request, viewer: PartnerViewer) -> Any:
    async with services(request).db.read() as conn:
        return await repo.partner_record(conn, viewer.partner_id)


def _airports(partner: Any) -> list[str]:
    return [code for code in str(partner.airports).split(",") if code and code != "*"]


async def _editor(
    request: Request,
    viewer: PartnerViewer,
    *,
    card_text: str,
    status_code: int = 200,
    errors: list[cards.CardError] | None = None,
    preview: dict[str, Any] | None = None,
    notice: str = "",
) -> Response:
    partner = await _partner(request, viewer)
    airports = _airports(partner)
    values = preview or {}
    typed = values.get("typed") or {
        "airport": airports[0] if airports else "",
        "address": "",
        "lat": "",
        "lng": "",
        "pickup": "",
    }
    context = {
        "active": "Rate card",
        "card_text": card_text,
        "errors": errors or [],
        "airports": airports,
        "typed": typed,
        "preview": values,
        "notice": notice,
        "markup": partner.markup_percent,
    }
    if request.query_params.get("fragment") == "preview":
        return page(request, "preview.html", context, viewer=viewer, status_code=status_code)
    return page(request, "rate_card.html", context, viewer=viewer, status_code=status_code, title="Rate card")


@router.get("/rate-card")
async def rate_card_page(request: Request, viewer: Signed) -> Response:
    viewer.require_hosted()
    stored = await hosted_service.get_rate_card(services(request).db, viewer.partner_id)
    notice = "Saved: searches use the new card from now on." if request.query_params.get("saved") else ""
    return await _editor(request, viewer, card_text=_pretty(stored) if stored is not None else "", notice=notice)


def _parse_text(card_text: str) -> tuple[Any, list[cards.CardError]]:
    if len(card_text) > MAX_CARD_CHARS:
        return None, [cards.CardError("$", f"the card is over {MAX_CARD_CHARS} characters")]
    try:
        return json.loads(card_text), []
    except json.JSONDecodeError as exc:
        return None, [cards.CardError("$", f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")]


@router.post("/rate-card")
async def rate_card_save(request: Request, viewer: Signed) -> Response:
    form = await viewer.form(request)
    viewer.require_hosted()
    card_text = form.get("card")
    card_text = card_text if isinstance(card_text, str) else ""
    document, errors = _parse_text(card_text)
    if not errors:
        svc = services(request)
        try:
            await hosted_service.set_rate_card(svc.db, svc.clock, viewer.partner_id, document, actor=viewer.actor)
        except cards.InvalidRateCard as exc:
            errors = exc.errors
    if errors:
        return await _editor(request, viewer, card_text=card_text[:MAX_CARD_CHARS], status_code=422, errors=errors)
    return RedirectResponse(f"{PREFIX}/rate-card?saved=1", status_code=303)


def _number(value: str, low: float, high: float) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if low <= number <= high else None


@router.post("/rate-card/preview")
async def rate_card_preview(request: Request, viewer: Signed) -> Response:
    """Prices of the card as typed in the editor (saved or not) for one trip; nothing is stored."""
    form = await viewer.form(request)
    viewer.require_hosted()
    svc = services(request)
    card_text = form.get("card")
    card_text = card_text if isinstance(card_text, str) else ""
    typed = {name: text(form.get(name), limit=200)[0] for name in ("airport", "address", "lat", "lng", "pickup")}
    problems: dict[str, str] = {}
    airport = find_airport(typed["airport"]) if typed["airport"] else None
    if airport is None:
        problems["airport"] = "Choose one of your airports."
    lat, lng = _number(typed["lat"], -90, 90), _number(typed["lng"], -180, 180)
    if lat is None:
        problems["lat"] = "A latitude between -90 and 90, like 51.5074."
    if lng is None:
        problems["lng"] = "A longitude between -180 and 180, like -0.1278."
    now = svc.clock.now()
    pickup_at = now + timedelta(days=7)
    if typed["pickup"]:
        try:
            local = datetime.fromisoformat(typed["pickup"].replace(" ", "T"))
            pickup_at = local.replace(tzinfo=airport.tz) if airport and local.tzinfo is None else local
        except ValueError:
            problems["pickup"] = "A local date and time like 2027-03-01 14:30."
    document, errors = _parse_text(card_text)
    if not errors:
        errors = cards.validate(document, vehicle_types=await hosted_service.vehicle_types(svc.db))
    preview: dict[str, Any] = {"typed": typed, "problems": problems, "rows": [], "refusal": None}
    if not problems and not errors and airport is not None and lat is not None and lng is not None:
        card = cards.load_stored(document)
        distance = round(great_circle_km(airport.lat, airport.lng, lat, lng))
        trip = pricing.Trip(airport.iata, airport.tz, pickup_at, distance, now)
        async with svc.db.read() as conn:
            booked = await repo.booked_on(conn, viewer.partner_id, trip.local_date)
            markup = Decimal((await repo.partner_record(conn, viewer.partner_id)).markup_percent)
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
                    "net": quote.net_price if quote else None,
                    "sell": sell_price(quote.net_price, markup) if quote else None,
                    "currency": card.currency,
                    "booked": booked.get(vehicle.id, 0),
                }
            )
    return await _editor(
        request,
        viewer,
        card_text=card_text[:MAX_CARD_CHARS],
        status_code=422 if problems else 200,
        errors=errors,
        preview=preview,
    )
