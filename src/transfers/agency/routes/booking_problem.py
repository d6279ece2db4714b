"""``Report a problem`` on a booking's page (docs/rules/agency-portal.md#pages, docs/rules/incidents.md#report):
the API's incident use case (``incidents.service.report``) with the agency's client, its
rules and messages beside the fields (a type, a description of 1..2000 characters; only an APPROVED
or COMPLETED booking, from its pickup until 72 h after; one incident per type), audited with the
agency user. The form carries a one-time key (``once.py``): pressing the button twice reports once.
Another agency's booking is the 404 page."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.agency import forms
from transfers.agency.auth import AgencyViewer, Signed, services
from transfers.agency.messages import GENERAL, api_words
from transfers.agency.once import fresh_key, refused_status, submit_once
from transfers.agency.render import page
from transfers.agency.routes.booking_page import audit, client_booking_or_404
from transfers.bookings.models import Booking
from transfers.errors import DomainError, ErrorCode
from transfers.incidents import service as incidents

router = APIRouter()
PROBLEMS = (
    ("DRIVER_NO_SHOW", "The driver did not come"),
    ("DRIVER_LATE", "The driver was late"),
    ("WRONG_VEHICLE", "The vehicle was not the one booked"),
    ("OTHER", "Something else"),
)


def problem_error(exc: DomainError) -> tuple[str, str]:
    """(field, message): the API's INVALID_INCIDENT names its field; the window and the one per type
    go to the summary."""
    words = f"{exc.message} {api_words(exc)}".strip()
    if exc.code is ErrorCode.INVALID_INCIDENT:
        return ("description" if "description" in exc.message else "type"), words
    return GENERAL, words


def _problem_page(
    request: Request,
    viewer: AgencyViewer,
    booking: Booking,
    typed: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    context: dict[str, Any] = {
        "active": "Bookings",
        "b": booking,
        "typed": typed,
        "errors": errors or {},
        "problems": PROBLEMS,
    }
    return page(
        request, "bookings/problem.html", context, viewer=viewer, status_code=status_code, title="Report a problem"
    )


@router.get("/bookings/{reservation_no}/problem")
async def problem_form(request: Request, reservation_no: str, viewer: Signed) -> Response:
    booking = await client_booking_or_404(request, viewer, reservation_no)
    return _problem_page(request, viewer, booking, {"type": "", "description": "", "key": fresh_key()})


@router.post("/bookings/{reservation_no}/problem")
async def report_problem(request: Request, reservation_no: str, viewer: Signed) -> Response:
    form = await viewer.form(request)
    booking = await client_booking_or_404(request, viewer, reservation_no)
    typed = {
        "type": forms.text(form, "type", 40),
        "description": forms.text(form, "description", 10_000),
        "key": forms.text(form, "key", 200),
    }
    viewer.require_active_client()

    async def report_once() -> str:
        incident = await incidents.report(
            services(request),
            viewer.client,
            booking.reservation_no,
            {"type": typed["type"], "description": typed["description"]},
        )
        await audit(
            request, viewer, "incident", booking.reservation_no, incident=incident.public_id, type=typed["type"]
        )
        return f"/agency/bookings/{booking.reservation_no}?reported=1"

    try:
        location = await submit_once(request, viewer, typed, report_once)
    except DomainError as exc:
        field, message = problem_error(exc)
        return _problem_page(request, viewer, booking, typed, errors={field: message}, status_code=refused_status(exc))
    return RedirectResponse(location, status_code=303)
