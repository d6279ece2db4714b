"""``/r/{token}``: the traveller's rating page (docs/rules/ratings.md#rating-page), a route of the API
process. A plain form post (works without JavaScript); the token is the whole authorisation, as on the
ride pages (``tracking/pages.py``), so the answers carry the same headers: no referrer, never cached,
nothing loaded from anywhere (the ride pages' CSS and this page's, inlined under a CSP hash; no script).

An unknown token (the tracking token too: it is not signed as a rating link) is 404; before the drop-off
403; after its 7 days 410; a second rating 409, as the API's ``RATING_EXISTS``.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from jinja2 import ChoiceLoader, Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from transfers.bookings.models import Booking
from transfers.bookings.rating_link import RATING_PATH
from transfers.errors import DomainError, ErrorCode
from transfers.ratings import rules, service
from transfers.ratings.models import Rating
from transfers.services import Services
from transfers.tracking import pages as ride_pages

router = APIRouter(include_in_schema=False)

_ENV = Environment(
    loader=ChoiceLoader(
        [PackageLoader("transfers.ratings", "templates"), PackageLoader("transfers.tracking", "templates")]
    ),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_PAGE = _ENV.get_template("rating.html")
_MESSAGE = _ENV.get_template("message.html")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSS = ride_pages.CSS + resources.files("transfers.ratings").joinpath("static", "rating.css").read_text(encoding="utf-8")
HEADERS = {
    **ride_pages.HEADERS,
    "Content-Security-Policy": (
        f"default-src 'none'; style-src {_hash(CSS)}; img-src 'none'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
}
CHOICES = ((5, "excellent"), (4, "good"), (3, "fair"), (2, "poor"), (1, "very poor"))
UNKNOWN = "There is no rating page at this address. Check the link you were sent."
NOT_YET = "You can rate the ride once the driver has dropped you off."
CLOSED = "Rating closes 7 days after the drop-off."
KICKER = "Rate your transfer"


def _services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def _message(status: int, heading: str, message: str, *, tone: str = "done") -> Response:
    html = _MESSAGE.render(title=heading, css=CSS, heading=heading, message=message, kicker=KICKER, tone=tone)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def _page(
    token: str,
    booking: Booking,
    *,
    rating: Rating | None = None,
    status: int = 200,
    notice: str = "",
    problem: str = "",
    chosen: int | None = None,
    comment: str = "",
) -> Response:
    context: dict[str, Any] = {
        "title": f"Rate your transfer {booking.reservation_no}",
        "css": CSS,
        "refresh": 0,
        "tone": "done" if rating else "",
        "reservation_no": booking.reservation_no,
        "heading": "Thank you" if rating else "How was your transfer?",
        "sub": "" if rating else f"{booking.trip.route.pickup.name} to {booking.trip.route.dropoff.name}",
        "rating": rating,
        "form": rating is None,
        "action": f"{RATING_PATH}{token}",
        "choices": CHOICES,
        "chosen": chosen,
        "comment": comment,
        "max_comment": rules.MAX_COMMENT,
        "notice": notice,
        "problem": problem,
    }
    return HTMLResponse(_PAGE.render(**context), status_code=status, headers=HEADERS)


async def _open(request: Request, token: str) -> tuple[Booking | None, Rating | None, Response | None]:
    """The booking a link opens and its rating, or the page that says why it opens nothing."""
    svc = _services(request)
    booking = await service.booking_of_token(svc, token)
    if booking is None:
        return None, None, _message(404, "Page not found", UNKNOWN)
    rating = await service.rating_of(svc, booking.id)
    if rating is not None:
        return booking, rating, None
    now = svc.clock.now()
    if rules.window_closed(booking.trip.ride, now):
        return None, None, _message(410, "Rating has closed", CLOSED)
    if not rules.window_open(booking.trip.ride, now):
        return None, None, _message(403, "Not open yet", NOT_YET, tone="wait")
    return booking, None, None


@router.get(RATING_PATH + "{token}")
async def rating_page(request: Request, token: str) -> Response:
    booking, rating, refusal = await _open(request, token)
    if booking is None:
        return refusal or _message(404, "Page not found", UNKNOWN)
    notice = "Your rating was recorded." if rating is not None and request.query_params.get("done") else ""
    return _page(token, booking, rating=rating, notice=notice)


@router.post(RATING_PATH + "{token}")
async def rating_post(request: Request, token: str) -> Response:
    """The form's post; on success the page again (303), showing the rating."""
    booking, rating, refusal = await _open(request, token)
    if booking is None:
        return refusal or _message(404, "Page not found", UNKNOWN)
    if rating is not None:
        return _page(token, booking, rating=rating, status=409, problem="This ride was already rated.")
    form = await request.form()
    stars, comment = form.get("stars"), form.get("comment")
    try:
        await service.rate_from_page(_services(request), booking, stars, comment)
    except DomainError as exc:
        if exc.code is ErrorCode.RATING_EXISTS:
            again = await service.rating_of(_services(request), booking.id)
            return _page(token, booking, rating=again, status=409, problem="This ride was already rated.")
        if exc.code is ErrorCode.RATING_NOT_ALLOWED:
            return _message(422, "Rating has closed", CLOSED)
        chosen = int(stars) if isinstance(stars, str) and stars in {"1", "2", "3", "4", "5"} else None
        kept = comment if isinstance(comment, str) else ""
        return _page(token, booking, status=422, problem=exc.message, chosen=chosen, comment=kept)
    return RedirectResponse(f"{RATING_PATH}{token}?done=1", status_code=303)
