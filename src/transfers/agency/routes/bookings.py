"""``Bookings`` (docs/rules/agency-portal.md#pages): the agency's own bookings, searched and
filtered, paged by cursor; ``/agency/bookings/{reservation_no}`` is in ``booking_page.py``."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.agency import forms
from transfers.agency.auth import Signed, services
from transfers.agency.queries import MAX_SEARCH_CHARS, BookingQuery, agency_bookings
from transfers.agency.render import page
from transfers.agency.wording import STATUS_WORDS
from transfers.bookings.client_queries import Position, decode_cursor, encode_cursor
from transfers.errors import DomainError

router = APIRouter()
STATUS_CHOICES = tuple((status, words) for status, words in STATUS_WORDS.items() if status != "PENDING")


def _day(value: str, label: str, errors: dict[str, str], name: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        errors[name] = f"{label} must be a date like 2026-12-01."
        return None


@router.get("/bookings")
async def bookings_page(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    params = request.query_params
    typed = {
        "q": forms.text(params, "q", MAX_SEARCH_CHARS),
        "status": forms.text(params, "status", 32),
        "pickup_from": forms.text(params, "pickup_from", 32),
        "pickup_to": forms.text(params, "pickup_to", 32),
    }
    errors: dict[str, str] = {}
    if typed["status"] and typed["status"] not in STATUS_WORDS:
        errors["status"] = "Choose a status from the list."
    low = _day(typed["pickup_from"], "Pickup from", errors, "pickup_from")
    high = _day(typed["pickup_to"], "Pickup to", errors, "pickup_to")
    if low and high and low > high:
        errors["pickup_to"] = "Pickup to must be on or after pickup from."
    after: Position | None = None
    cursor = forms.text(params, "cursor", 2000)
    if cursor:
        try:
            after = decode_cursor(svc, viewer.client, cursor)
        except DomainError:
            errors["cursor"] = "That page link is not valid any more: the list starts from the newest booking."
    rows: list[dict[str, Any]] = []
    next_link = ""
    if not {k for k in errors if k != "cursor"}:
        statuses: tuple[str, ...] = ()
        if typed["status"]:
            statuses = ("PENDING", "PENDING_APPROVAL") if typed["status"] == "PENDING_APPROVAL" else (typed["status"],)
        wanted = BookingQuery(
            client_id=viewer.client_id,
            text=typed["q"],
            statuses=statuses,
            pickup_from=datetime.combine(low, datetime.min.time(), UTC) if low else None,
            pickup_to=datetime.combine(high, datetime.min.time(), UTC) + timedelta(days=1) if high else None,
            after=after,
        )
        async with svc.db.read() as conn:
            rows, more = await agency_bookings(conn, wanted)
        if more:
            last = rows[-1]
            token = encode_cursor(svc, viewer.client, Position(last["created_at"], int(last["id"])))
            next_link = "/agency/bookings?" + urlencode({**{k: v for k, v in typed.items() if v}, "cursor": token})
    context = {
        "active": "Bookings",
        "rows": rows,
        "typed": typed,
        "errors": errors,
        "statuses": STATUS_CHOICES,
        "next_link": next_link,
        "paged": after is not None,
        "first_link": "/agency/bookings?" + urlencode({k: v for k, v in typed.items() if v}),
        "searched": any(typed.values()),
    }
    return page(
        request,
        "bookings/list.html",
        context,
        viewer=viewer,
        status_code=422 if errors and "cursor" not in errors else 200,
        title="Bookings",
    )
