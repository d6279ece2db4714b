"""``/t/{token}`` (+ ``.json``) and ``/d/{token}``: the traveller's page and the driver page
(docs/rules/ride.md#tracking-page, docs/rules/ride.md#driver-page), routes of the API process.

Capability URLs: the token is the whole authorisation, so every answer says ``noindex``, sends no
referrer, is never cached, and loads nothing from anywhere (CSS and script are inlined under CSP
hashes: ``default-src 'none'`` allows nothing else). An unknown token is 404; a page past its window 410.

The traveller's page speaks the traveller's language (docs/rules/messages.md#page-language): ``?lang=``,
the booking's passenger language, ``Accept-Language``, the agency's default language, English; its
templates use Jinja's i18n extension over the catalogs of ``transfers/i18n``, one environment per
language. The driver page and ``/t/{token}.json`` stay in English.
"""

from __future__ import annotations

import base64
import hashlib
import math
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from jinja2 import Environment, PackageLoader, Template, select_autoescape
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from transfers.bookings.lifecycle import ConcurrentChange
from transfers.bookings.models import Booking
from transfers.bookings.reverse import BookingNotFound
from transfers.errors import DomainError
from transfers.i18n.catalogs import N_, Words, translations
from transfers.i18n.dates import clock, long_date
from transfers.i18n.languages import DEFAULT_LANGUAGE, LANGUAGES, page_language
from transfers.reference.airports import find_airport, local_time
from transfers.services import Services
from transfers.tracking import driver as steps
from transfers.tracking import repository as repo
from transfers.tracking.facts import RIDE_OVER, RideNow, place_point, traveller_facts
from transfers.tracking.rides import driver_actor, report_event, report_position, ride_now
from transfers.tracking.rules import (
    PHONE_BEFORE_PICKUP,
    POSITION_EVERY,
    driver_link_open,
    looks_like_token,
    traveller_page_gone,
)

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=len(LANGUAGES))
def _env(language: str) -> Environment:
    """The pages' templates speaking ``language`` (Jinja's i18n extension); one environment per language, built
    once. Old-style gettext: ``_()`` is the catalog's own function (a plain string, autoescaped like any
    value; a placeholder is filled with ``| format(x=...)``), which costs a page a third of what the
    newstyle wrapper does."""
    env = Environment(
        loader=PackageLoader("transfers.tracking", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
        auto_reload=False,  # templates ship in the package: no stat() per render
    )
    catalog = translations(language)
    env.install_gettext_translations(catalog, newstyle=False)  # type: ignore[attr-defined]
    env.globals["_"] = catalog.gettext  # the catalog's own function, not the extension's alias calling it
    return env


@lru_cache(maxsize=len(LANGUAGES))
def _traveller_template(language: str) -> Template:
    return _env(language).get_template("traveller.html")


@lru_cache(maxsize=len(LANGUAGES))
def _language_links(language: str) -> str:
    """The footer's links to the page in the other languages (HTML of our own autoescaped template): the
    same for every page of a language, so rendered once."""
    return _env(language).get_template("_languages.html").render(lang=language, languages=LANGUAGE_NAMES)


_ENV = _env(DEFAULT_LANGUAGE)
_DRIVER = _ENV.get_template("driver.html")
_MESSAGE = _ENV.get_template("message.html")
# Each language by its own name, for the page's language links.
LANGUAGE_NAMES = (
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
    ("it", "Italiano"),
    ("pt", "Português"),
    ("nl", "Nederlands"),
)


def _asset(name: str) -> str:
    return resources.files("transfers.tracking").joinpath("static", name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSS = _asset("ride.css")
SCRIPT = _asset("driver.js")
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {_hash(CSS)}; script-src {_hash(SCRIPT)}; connect-src 'self'; "
    "img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Robots-Tag": "noindex, nofollow",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
JSON_HEADERS = {k: v for k, v in HEADERS.items() if k not in ("Content-Security-Policy", "X-Frame-Options")}

UNKNOWN = N_("There is no transfer at this address. Check the link you were sent.")
GONE = N_("This transfer's page has closed: it is kept for 7 days after the pickup.")
TONES = {
    "EN_ROUTE_TO_PICKUP": "",
    "AT_PICKUP": "go",
    "ON_BOARD": "go",
    "DROPPED_OFF": "done",
    "CUSTOMER_NO_SHOW": "wait",
}
STATUS_TONES = {"PENDING": "wait", "PENDING_APPROVAL": "wait", "COMPLETED": "done"}


def _services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def _message(
    status: int, heading: str, message: str, *, kicker: str = "Your transfer", tone: str = "done", lang: str = "en"
) -> Response:
    html = _MESSAGE.render(
        title=heading, css=CSS, heading=heading, message=message, kicker=kicker, tone=tone, lang=lang
    )
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def _traveller_message(request: Request, status: int) -> Response:
    """The 404 and 410 of the traveller's page, in the language ``?lang=`` or the browser asks for (there is
    no booking to ask)."""
    language = page_language(request.query_params.get("lang"), None, request.headers.get("accept-language"), None)
    words = Words(language)
    if status == 404:
        heading, message = words("Transfer not found"), words(UNKNOWN)
    else:
        heading, message = words("This page has closed"), words(GONE)
    return _message(status, heading, message, kicker=words("Your transfer"), lang=language)


async def _traveller_booking(request: Request, token: str) -> tuple[repo.TravellerBooking | None, int]:
    """The booking of a traveller's token (with its agency's support phone and default language), and the
    answer's status: 200, 404 or 410."""
    if not looks_like_token(token):
        return None, 404
    svc = _services(request)
    found = await repo.booking_by_tracking_token(svc.db, token)
    if found is None:
        return None, 404
    if traveller_page_gone(found.booking.pickup_at, svc.clock.now()):
        return None, 410
    return found, 200


# Declared before ``/t/{token}``: that pattern would take ``x.json`` as a token.
@router.get("/t/{token}.json")
async def traveller_json(request: Request, token: str) -> Response:
    found, status = await _traveller_booking(request, token)
    if found is None:
        message = UNKNOWN if status == 404 else GONE
        return JSONResponse({"status": "Error", "message": message}, status_code=status, headers=JSON_HEADERS)
    booking = found.booking
    now = _services(request).clock.now()
    facts = traveller_facts(booking, ride_now(booking), now, support_phone=found.support_phone)
    return JSONResponse(facts, headers=JSON_HEADERS)


@router.get("/t/{token}")
async def traveller_page(request: Request, token: str) -> Response:
    found, status = await _traveller_booking(request, token)
    if found is None:
        return _traveller_message(request, status)
    booking = found.booking
    language = page_language(
        request.query_params.get("lang"),
        booking.passenger_language,
        request.headers.get("accept-language"),
        found.default_language,
    )
    now = _services(request).clock.now()
    ride = ride_now(booking)
    facts = traveller_facts(booking, ride, now, support_phone=found.support_phone, language=language)
    context = _traveller_context(booking, ride, facts, now, language)
    return HTMLResponse(_traveller_template(language).render(**context), headers=HEADERS)


def _traveller_context(
    booking: Booking, ride: RideNow, facts: dict[str, Any], now: datetime, language: str = "en"
) -> dict[str, Any]:
    words = Words(language)
    local = datetime.fromisoformat(facts["pickup"]["local_time"])
    stage = facts["stage"]
    tone = STATUS_TONES.get(facts["status"], "stop")
    if facts["status"] == "APPROVED":
        tone = TONES.get(stage or "", "")
    phone_note = ""
    driver = facts["driver"]
    if driver is not None and driver["phone"] is None and facts["status"] == "APPROVED" and ride.stage not in RIDE_OVER:
        opens = local_time(booking.airport_iata, booking.pickup_at - PHONE_BEFORE_PICKUP)
        phone_note = words(
            "The driver's phone number appears here from %(time)s (2 hours before pickup).",
            time=clock(opens, language),
        )
    checked = local_time(booking.airport_iata, now)
    return {
        "lang": language,
        "language_links": _language_links(language),
        "title": words("Your transfer %(reservation)s", reservation=booking.reservation_no),
        "css": CSS,
        "refresh": facts["refresh_seconds"],
        "f": facts,
        "tone": tone,
        "clock": clock(local, language),
        "day": f"{local:%A} {local.day} {local:%B %Y}" if language == "en" else long_date(local, language),
        "airport": _airport_name(booking.airport_iata),
        "phone_note": phone_note,
        "checked": f"{clock(checked, language)} {checked.tzname() or ''}".rstrip(),
        "dot": _dot(facts["position"]),
    }


def _airport_name(iata: str) -> str:
    airport = find_airport(iata)
    return f"{airport.name} ({iata})" if airport else iata


def _dot(position: dict[str, Any] | None) -> dict[str, float]:
    """Where the driver's dot sits in the 120 x 120 picture: the pickup point (on board: the drop-off) in the
    middle, north up,
    the distance on a log scale (30 km and more at the rim) so both 300 m and 20 km read."""
    km_key = "km_to_dropoff" if position and position["centre"] == "dropoff" else "km_from_pickup"
    if position is None or position[km_key] is None or position["bearing"] is None:
        return {"x": 60.0, "y": 60.0}
    km = float(position[km_key])
    radius = 0.0 if km < 0.1 else 12 + 44 * min(1.0, math.log1p(km) / math.log1p(30))
    angle = math.radians(float(position["bearing"]))
    return {"x": round(60 + radius * math.sin(angle), 1), "y": round(60 - radius * math.cos(angle), 1)}


# --- the driver page ----------------------------------------------------------------------------------


async def _driver_booking(request: Request, token: str) -> tuple[Booking | None, Response | None]:
    """The booking a driver link opens, or the page that says why it does not."""
    if not looks_like_token(token):
        return None, _message(404, "Link not found", "There is no ride at this address.", kicker="Driver")
    svc = _services(request)
    found = await repo.booking_by_driver_token(svc.db, token)
    if found is None:
        return None, _message(404, "Link not found", "There is no ride at this address.", kicker="Driver")
    booking, revoked = found
    if revoked:
        text = "The transport company withdrew this link. Ask them for a new one."
        return None, _message(410, "Link withdrawn", text, kicker="Driver")
    now = svc.clock.now()
    if not driver_link_open(booking.pickup_at, now):
        local = local_time(booking.airport_iata, booking.pickup_at)
        if now < booking.pickup_at:
            text = f"This link works from 24 hours before the pickup ({local:%d %b %H:%M %Z})."
            return None, _message(403, "Not open yet", text, kicker="Driver", tone="wait")
        return None, _message(410, "Link closed", "This link closed 24 hours after the pickup.", kicker="Driver")
    return booking, None


def driver_page(
    request: Request, token: str, booking: Booking, *, status: int = 200, notice: str = "", problem: str = ""
) -> Response:
    now = _services(request).clock.now()
    ride = ride_now(booking)
    approved = booking.status.value == "APPROVED"
    stage = ride.stage
    step = steps.next_step(stage) if approved else None
    local = local_time(booking.airport_iata, booking.pickup_at)
    free_wait = local_time(booking.airport_iata, booking.trip.free_wait_until)
    route = booking.trip.route
    flight = steps.flight_facts(booking.trip)
    if approved:
        headline = {
            "NOT_STARTED": "Ready to go",
            "EN_ROUTE_TO_PICKUP": "On the way to the pickup",
            "AT_PICKUP": "At the pickup",
            "ON_BOARD": "Passenger on board",
        }.get(stage, "Ride finished")
    elif booking.status.value == "COMPLETED":
        headline = "Ride finished"
    else:
        headline = {"CANCELLED": "Cancelled: do not go", "PENDING_APPROVAL": "Not accepted yet"}.get(
            booking.status.value, "Nothing to do"
        )
    context = {
        "title": f"Ride {booking.reservation_no}",
        "css": CSS,
        "script": SCRIPT,
        "b": booking,
        "tone": "go" if approved and stage in ("AT_PICKUP", "ON_BOARD") else ("" if approved else "done"),
        "headline": headline,
        "when": f"{local:%a} {local.day} {local:%b, %H:%M} {local.tzname() or ''}".rstrip(),
        "step": step,
        "done": steps.DONE_WORDS.get(stage, "") if stage in RIDE_OVER else "",
        "no_show": approved and steps.offers_no_show(stage),
        "no_show_open": now >= booking.trip.free_wait_until,
        "free_wait": f"{free_wait:%H:%M}",
        "ride_on": approved and stage in ("EN_ROUTE_TO_PICKUP", "AT_PICKUP", "ON_BOARD"),
        "party": ", ".join(
            part
            for part in (
                steps.counted(booking.adult, "adult"),
                steps.counted(booking.children, "child") if booking.children else "",
                steps.counted(booking.infant, "infant") if booking.infant else "",
                steps.counted(booking.suitcase, "suitcase"),
                steps.counted(booking.small_bags, "small bag"),
            )
            if part
        ),
        "flight": flight,
        "pickup": steps.stop(route.pickup, place_point(route.pickup), flight.terminal if flight else None),
        "dropoff": steps.stop(route.dropoff, place_point(route.dropoff)),
        "events_url": f"/d/{token}/events",
        "positions_url": f"/d/{token}/positions",
        "notice": notice,
        "problem": problem,
    }
    return HTMLResponse(_DRIVER.render(**context), status_code=status, headers=HEADERS)


@router.get("/d/{token}")
async def driver_get(request: Request, token: str) -> Response:
    booking, refusal = await _driver_booking(request, token)
    if booking is None or refusal is not None:
        return refusal or _message(404, "Link not found", "There is no ride at this address.", kicker="Driver")
    return driver_page(request, token, booking, notice=steps.DONE_NOTICES.get(request.query_params.get("done", ""), ""))


def _number(value: object) -> object:
    """A form's coordinate: empty is None, a number is a float, anything else is passed on as it is, for
    the ride's rules to refuse with their own words."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


@router.post("/d/{token}/events")
async def driver_event(request: Request, token: str) -> Response:
    """A press of the page's button (a plain form post: works without JavaScript), then the page again."""
    booking, refusal = await _driver_booking(request, token)
    if booking is None or refusal is not None:
        return refusal or _message(404, "Link not found", "There is no ride at this address.", kicker="Driver")
    form = await request.form()
    kind = form.get("type")
    svc = _services(request)
    try:
        await report_event(
            svc, booking, kind, _number(form.get("lat")), _number(form.get("lng")), actor=driver_actor(booking)
        )
    except BookingNotFound:
        return _message(404, "Link not found", "There is no ride at this address.", kicker="Driver")
    except ConcurrentChange:
        return driver_page(request, token, booking, status=409, problem="The ride changed meanwhile: press again.")
    except DomainError as exc:  # the ride's rules (RideInvalid, RideRefused): their message names the rule
        now_booking, _ = await _driver_booking(request, token)
        return driver_page(request, token, now_booking or booking, status=422, problem=f"Not sent: {exc.message}")
    return RedirectResponse(f"/d/{token}?done={kind}", status_code=303)


@router.post("/d/{token}/positions")
async def driver_position(request: Request, token: str) -> Response:
    """The page's script, every 10 s while the ride is on: one position, under the reverse API's rules, and at
    most one every 3 s per link (429 with ``Retry-After`` otherwise; docs/operations/security.md)."""
    booking, refusal = await _driver_booking(request, token)
    if booking is None or refusal is not None:
        status = refusal.status_code if refusal is not None else 404
        return JSONResponse({"status": "Error", "message": "This driver link is not open."}, status_code=status)
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return JSONResponse({"status": "Error", "message": "expected a JSON object: lat, lng, at"}, status_code=422)
    svc = _services(request)
    if not await repo.take_position_turn(svc.db, token, svc.clock.now(), POSITION_EVERY):
        seconds = int(POSITION_EVERY.total_seconds())
        message = f"One position every {seconds} s per driver link: this one was not recorded."
        return JSONResponse(
            {"status": "Error", "message": message}, status_code=429, headers={"Retry-After": str(seconds)}
        )
    try:
        accepted = await report_position(svc, booking, body)
    except BookingNotFound:
        return JSONResponse({"status": "Error", "message": "This driver link is not open."}, status_code=404)
    except DomainError as exc:
        return JSONResponse({"status": "Error", "message": exc.message}, status_code=422, headers=JSON_HEADERS)
    return JSONResponse({"status": "Success", "accepted": accepted}, headers=JSON_HEADERS)
