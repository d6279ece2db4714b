"""Reverse API (docs/rules/partners.md#reverse-api): partners update and read the bookings they hold."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError
from starlette.responses import Response

from transfers.api import ride_schemas, schemas
from transfers.api.deps import current_partner, json_object, services
from transfers.api.errors import REVERSE_PREFIX
from transfers.api.openapi import register_body
from transfers.api.responses import JSONBody
from transfers.auth.service import PartnerPrincipal
from transfers.bookings import reverse
from transfers.bookings.reservation import could_exist
from transfers.bookings.reverse import ReverseUpdate
from transfers.errors import ErrorCode, Invalid
from transfers.incidents import service as incidents
from transfers.ride import rules as ride_rules
from transfers.ride import service as riding

router = APIRouter(prefix=REVERSE_PREFIX, tags=["Reverse API (partners)"])
register_body("reverse_update_booking", ReverseUpdate)
register_body("reverse_booking_event", ride_schemas.RideEventBody)
register_body("reverse_booking_positions", ride_schemas.RidePositionsBody)
PARTNER_ERRORS: dict[int | str, dict[str, Any]] = {
    **schemas.service_errors(ErrorCode.MALFORMED_JSON, ErrorCode.UNAUTHENTICATED, ErrorCode.RATE_LIMITED),
    404: {"model": schemas.BookingNotFoundBody, "description": "unknown booking, or another partner's"},
    422: {"model": schemas.PartnerErrorBody, "description": "invalid update or refused transition"},
}


@router.put(
    "/booking/update",
    summary="Update a booking's status (APPROVED with driver, or CANCELLED)",
    response_model=schemas.PartnerResult,
    responses=PARTNER_ERRORS,
    operation_id="reverse_update_booking",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def update_booking(request: Request, partner: PartnerPrincipal = Depends(current_partner)) -> Response:
    body = await json_object(request)
    try:
        update = ReverseUpdate.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise Invalid(f"{where}: {first['msg']}") from None
    request.state.reservation_no = update.reservation_no
    # BookingNotFound (404), UpdateRefused (422) and ConcurrentChange (409): api/errors.render
    await reverse.apply_update(services(request), partner.partner_id, update)
    return JSONBody({"status": "Success", "message": "Booking updated."})


@router.get(
    "/booking/info/{reservation_no}",
    summary="Read a booking you hold",
    responses=PARTNER_ERRORS,
    operation_id="reverse_booking_info",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def booking_info(
    request: Request, reservation_no: str, partner: PartnerPrincipal = Depends(current_partner)
) -> Response:
    request.state.reservation_no = reservation_no
    if not could_exist(reservation_no):
        raise reverse.BookingNotFound()
    view = await incidents.booking_for_partner(services(request), partner.partner_id, reservation_no)
    return JSONBody(view)


@router.post(
    "/booking/events",
    summary="Report a driver event (departed, arrived, on board, dropped off, customer no-show)",
    response_model=schemas.PartnerResult,
    responses={**PARTNER_ERRORS, 422: {"model": schemas.PartnerErrorBody, "description": "a rule refused it"}},
    operation_id="reverse_booking_event",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def booking_event(request: Request, partner: PartnerPrincipal = Depends(current_partner)) -> Response:
    """docs/rules/ride.md#events: every refusal is a 422 naming its rule (``ride/rules.py``)."""
    svc = services(request)
    report = ride_rules.parse_event(await json_object(request), svc.clock.now())
    request.state.reservation_no = report.reservation_no
    if not could_exist(report.reservation_no):
        raise reverse.BookingNotFound()
    done = await riding.record_event(svc, partner.partner_id, report)
    message = "Event recorded." if done.recorded else "Event already recorded."
    return JSONBody({"status": "Success", "message": message})


@router.post(
    "/booking/positions",
    summary="Report the driver's positions (1 to 100)",
    response_model=ride_schemas.PositionsResult,
    responses={**PARTNER_ERRORS, 422: {"model": schemas.PartnerErrorBody, "description": "a rule refused it"}},
    operation_id="reverse_booking_positions",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def booking_positions(request: Request, partner: PartnerPrincipal = Depends(current_partner)) -> Response:
    """docs/rules/ride.md#positions: one invalid item refuses the whole batch."""
    svc = services(request)
    report = ride_rules.parse_positions(await json_object(request), svc.clock.now())
    request.state.reservation_no = report.reservation_no
    if not could_exist(report.reservation_no):
        raise reverse.BookingNotFound()
    accepted = await riding.record_positions(svc, partner.partner_id, report)
    return JSONBody({"status": "Success", "message": "Positions recorded.", "accepted": accepted})
