"""``Bookings``: the list (``Search bookings``, filters, newest first, cursor paging) and a booking's
page (every field, the driver, its story) with ``Cancel booking``, ``Refund`` and ``Sync with
partner``. Every action goes through ``bookings.operator_actions`` (the same lifecycle as the API
and the jobs) and is audited with the operator."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.bookings import operator_actions as actions
from transfers.bookings.cancel_rules import refund_due
from transfers.bookings.reservation import could_exist
from transfers.bookings.state import BookingStatus, can_transition
from transfers.cancellation.views import cancel_refund
from transfers.console import counted as counting
from transfers.console import queries
from transfers.console.auth import PREFIX, PageNotFound, Signed, Viewer, services
from transfers.console.forms import (
    MAX_SEARCH_CHARS,
    day,
    day_end,
    day_start,
    decode_cursor,
    encode_cursor,
    positive_id,
    text,
)
from transfers.console.render import page
from transfers.console.rows import BookingLine
from transfers.flights.news import flight_news
from transfers.incidents import service as incidents
from transfers.incidents.rules import InvalidResolution, unrefunded
from transfers.messages import listing as traveller_messages
from transfers.operators.booking_story import load_detail
from transfers.operators.models import Capability

router = APIRouter()
PAGE_SIZE = 50
STATUSES = [s.value for s in BookingStatus if s is not BookingStatus.DEFAULT]
MAX_RESERVATION_CHARS = 64
NOTICES = {
    "cancelled": "The booking is cancelled; the client is refunded and the partner will be told.",
    "refunded": "The booking is refunded.",
    "resolved": "The incident is resolved; the client and the partner can read the decision.",
}


@router.get("/bookings")
async def bookings_list(request: Request, viewer: Signed) -> Response:
    params = request.query_params
    search, search_error = text(params.get("q"), limit=MAX_SEARCH_CHARS)
    status = params.get("status") or None
    status_error = None
    if status is not None and status not in STATUSES:
        status, status_error = None, "Choose one from the list."
    client_id, client_error = positive_id(params.get("client"))
    partner_id, partner_error = positive_id(params.get("partner"))
    pickup_from, from_error = day(params.get("pickup_from"))
    pickup_to, to_error = day(params.get("pickup_to"))
    if search_error:
        search_error = f"Search is limited to {MAX_SEARCH_CHARS} characters; nothing was searched."
    errors = {
        field: message
        for field, message in (
            ("q", search_error),
            ("status", status_error),
            ("client", client_error),
            ("partner", partner_error),
            ("pickup_from", from_error),
            ("pickup_to", to_error),
        )
        if message
    }
    narrowed, narrow_errors = counting.wanted(params, partner_id)
    errors.update(narrow_errors)
    cursor_value = params.get("cursor")
    before = decode_cursor(cursor_value)
    notice = "That page link is out of date; showing the newest bookings." if cursor_value and before is None else ""
    wanted = queries.BookingFilter(
        search=search or None,
        status=status,
        client_id=client_id,
        partner_id=partner_id,
        pickup_from=day_start(pickup_from) if pickup_from else None,
        pickup_to=day_end(pickup_to) if pickup_to else None,
        before=before,
    )
    svc = services(request)
    rows: list[BookingLine] = []
    async with svc.db.read() as conn:
        clients = await queries.client_choices(conn)
        partners = await queries.partner_choices(conn)
        if narrowed is not None:
            ids, total = await counting.page_ids(conn, narrowed, before, PAGE_SIZE + 1)
            wanted = queries.BookingFilter(ids=ids)
            name = next((p.name for p in partners if p.id == narrowed.partner_id), f"partner {narrowed.partner_id}")
            notice = counting.description(narrowed, name, total)
        if not errors:
            rows = await queries.list_bookings(conn, wanted, limit=PAGE_SIZE + 1)
    next_link = None
    kept = {k: v[:MAX_SEARCH_CHARS] for k, v in params.items() if k != "cursor" and v}
    if len(rows) > PAGE_SIZE:
        rows = rows[:PAGE_SIZE]
        last = rows[-1]
        next_link = f"{PREFIX}/bookings?" + urlencode({**kept, "cursor": encode_cursor(last.created_at, last.id)})
    typed = {
        k: params.get(k, "")[: MAX_SEARCH_CHARS + 1]
        for k in ("q", "status", "client", "partner", "pickup_from", "pickup_to")
    }
    return page(
        request,
        "bookings/list.html",
        {
            "active": "Bookings",
            "rows": rows,
            "errors": errors,
            "typed": typed,
            "statuses": STATUSES,
            "clients": clients,
            "partners": partners,
            "next_link": next_link,
            "notice": notice,
            "newest_link": f"{PREFIX}/bookings?" + urlencode(kept),
            "first_page": before is None,
        },
        viewer=viewer,
        title="Bookings",
        status_code=400 if errors else 200,
    )


def _wanted_number(reservation_no: str) -> str:
    number = reservation_no.strip()
    if not number or len(number) > MAX_RESERVATION_CHARS or not could_exist(number):
        raise PageNotFound("There is no booking with that number.")
    return number


async def _booking_page(
    request: Request,
    viewer: Viewer,
    reservation_no: str,
    *,
    status_code: int = 200,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    notice: str = "",
    problem: str = "",
) -> Response:
    svc = services(request)
    detail = await load_detail(svc.db, _wanted_number(reservation_no))
    if detail is None:
        raise PageNotFound(f"There is no booking {reservation_no[:MAX_RESERVATION_CHARS]}.")
    booking = detail.booking
    status = booking.status
    found, proof = await incidents.for_operator(svc.db, booking)
    # docs/rules/messages.md#seen: the messages written to the traveller, with their status
    shown = await traveller_messages.for_booking_page(svc, booking.id, booking.client_id)
    return page(
        request,
        "bookings/detail.html",
        {
            "active": "Bookings",
            "d": detail,
            "b": booking,
            "can_cancel": can_transition(status, BookingStatus.CANCELLED) and viewer.may(Capability.CANCEL_BOOKING),
            "can_refund": status is BookingStatus.COMPLETED and viewer.may(Capability.MOVE_MONEY),
            "refund_amount": refund_due(booking),
            # docs/rules/incidents.md#refund-then-cancel: what the cancel gave back, as the BookingResource shows it
            "cancel_refund": cancel_refund(booking),
            "can_sync": viewer.may(Capability.SYNC_BOOKING),
            # docs/rules/incidents.md#resolve: the incidents, their evidence, Resolve for admins
            "incidents": found,
            "evidence": proof,
            "can_resolve": viewer.may(Capability.MOVE_MONEY),
            "unrefunded": unrefunded(status, booking.total, booking.incident_refunded),
            "news": flight_news(booking.trip),  # docs/rules/flights.md#in-words
            **shown,
            "errors": errors or {},
            "typed": typed or {},
            "notice": notice,
            "problem": problem,
        },
        viewer=viewer,
        title=f"Booking {booking.reservation_no}",
        status_code=status_code,
    )


@router.get("/bookings/{reservation_no}")
async def booking_detail(request: Request, reservation_no: str, viewer: Signed) -> Response:
    notice = NOTICES.get(request.query_params.get("done", ""), "")
    return await _booking_page(request, viewer, reservation_no, notice=notice)


def _same_booking(form: FormData, reservation_no: str) -> None:
    """The form names the booking it was rendered for; a number edited in the form (or in its
    address) that disagrees is refused with nothing done."""
    named = form.get("reservation_no")
    if not isinstance(named, str) or named.strip() != reservation_no.strip():
        raise _Mismatch()


class _Mismatch(Exception):
    pass


async def _act(
    request: Request, viewer: Viewer, reservation_no: str, capability: Capability, action: str, done: str
) -> Response:
    viewer.require(capability)
    form = await viewer.form(request)
    number = _wanted_number(reservation_no)
    typed_reason = form.get("reason")
    typed = {"reason": typed_reason[: actions.MAX_REASON_CHARS + 100] if isinstance(typed_reason, str) else ""}
    try:
        _same_booking(form, number)
    except _Mismatch:
        return await _booking_page(
            request,
            viewer,
            number,
            status_code=400,
            problem="The form does not belong to this booking; nothing was changed.",
        )
    svc = services(request)
    try:
        if action == "cancel":
            await actions.cancel(svc, number, typed_reason if isinstance(typed_reason, str) else "", actor=viewer.actor)
        else:
            await actions.refund(svc, number, typed_reason if isinstance(typed_reason, str) else "", actor=viewer.actor)
    except actions.ActionRefused as refused:
        field = f"{action}_reason"
        return await _booking_page(
            request, viewer, number, status_code=422, errors={field: str(refused)}, typed={field: typed["reason"]}
        )
    return RedirectResponse(f"{PREFIX}/bookings/{number}?done={done}", status_code=303)


@router.post("/bookings/{reservation_no}/cancel")
async def booking_cancel(request: Request, reservation_no: str, viewer: Signed) -> Response:
    return await _act(request, viewer, reservation_no, Capability.CANCEL_BOOKING, "cancel", "cancelled")


@router.post("/bookings/{reservation_no}/refund")
async def booking_refund(request: Request, reservation_no: str, viewer: Signed) -> Response:
    return await _act(request, viewer, reservation_no, Capability.MOVE_MONEY, "refund", "refunded")


@router.post("/bookings/{reservation_no}/sync")
async def booking_sync(request: Request, reservation_no: str, viewer: Signed) -> Response:
    viewer.require(Capability.SYNC_BOOKING)
    form = await viewer.form(request)
    number = _wanted_number(reservation_no)
    try:
        _same_booking(form, number)
    except _Mismatch:
        return await _booking_page(
            request,
            viewer,
            number,
            status_code=400,
            problem="The form does not belong to this booking; nothing was changed.",
        )
    result = await actions.sync(services(request), number, actor=viewer.actor)  # NoSuchBooking: a 404 page
    if result.problem:
        return await _booking_page(request, viewer, number, problem=f"Sync with partner: {result.problem}.")
    change = f"{result.before} → {result.after}" if result.before != result.after else f"still {result.after}"
    return await _booking_page(
        request, viewer, number, notice=f"The partner says {result.partner_status}; the booking is {change}."
    )


@router.post("/bookings/{reservation_no}/incidents/{incident_id}/resolve")
async def incident_resolve(request: Request, reservation_no: str, incident_id: str, viewer: Signed) -> Response:
    """``Resolve`` (docs/rules/incidents.md#resolve): admins only; a refused decision re-renders the page
    with the problem beside the form and what was typed kept."""
    viewer.require(Capability.MOVE_MONEY)
    form = await viewer.form(request)
    number = _wanted_number(reservation_no)
    typed = {k: str(form.get(k) or "")[:2100] for k in ("responsible", "refund", "note")}
    svc = services(request)
    found = await incidents.get(svc.db, incident_id[:64])
    if found.reservation_no != number:  # an id edited into another booking's address: nothing done
        raise PageNotFound("There is no such incident on this booking.")
    try:
        await incidents.resolve(
            svc.db,
            svc.clock,
            found.public_id,
            responsible=typed["responsible"],
            refund=typed["refund"],
            note=typed["note"],
            actor=viewer.actor,
        )
    except InvalidResolution as refused:
        return await _booking_page(
            request,
            viewer,
            number,
            status_code=422,
            errors={f"resolve_{found.public_id}": str(refused)},
            typed={f"{found.public_id}_{k}": v for k, v in typed.items()},
        )
    return RedirectResponse(f"{PREFIX}/bookings/{number}?done=resolved#incidents", status_code=303)
