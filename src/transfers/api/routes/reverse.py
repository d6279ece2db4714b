"""Reverse API (docs/rules/partners.md#reverse-api): partners update and read the bookings they hold."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError
from starlette.responses import Response

from transfers.api import schemas
from transfers.api.deps import current_partner, json_object, services
from transfers.api.errors import REVERSE_PREFIX
from transfers.api.openapi import register_body
from transfers.api.responses import JSONBody
from transfers.auth.service import PartnerPrincipal
from transfers.bookings import reverse
from transfers.bookings.reservation import could_exist
from transfers.bookings.reverse import ReverseUpdate
from transfers.errors import ErrorCode, Invalid

router = APIRouter(prefix=REVERSE_PREFIX, tags=["Reverse API (partners)"])
register_body("reverse_update_booking", ReverseUpdate)
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
    view = await reverse.booking_for_partner(services(request), partner.partner_id, reservation_no)
    return JSONBody(view)
