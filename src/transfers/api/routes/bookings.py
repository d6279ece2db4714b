"""Booking API: create (POST), read (GET), cancel (DELETE) on /api/v1/booking-api/booking."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from transfers.api import schemas
from transfers.api.cancellation_schemas import AmendBookingRequest, CancellationQuote
from transfers.api.deps import current_client, json_object, query_value, services
from transfers.api.errors import render
from transfers.api.openapi import register_body, register_query_types
from transfers.api.responses import JSONBody, dumps
from transfers.bookings import amend, service
from transfers.bookings.models import Booking
from transfers.bookings.resource import booking_resource
from transfers.clients.models import ClientPrincipal, Permission
from transfers.errors import Code, DomainError, ErrorCode, Refused
from transfers.idempotency.fingerprint import fingerprint
from transfers.idempotency.service import check_key, run_idempotent
from transfers.returns import service as returns

CANCELLED_BODY = {"status": "Success", "message": "Booking cancelled successfully.", "data": []}
router = APIRouter(prefix="/api/v1/booking-api", tags=["Booking API"])
BOOKING_PATH = "/api/v1/booking-api/booking"  # GET and POST are answered by api/direct_routes.py first
register_body("create_booking", schemas.CreateBookingRequest)
register_query_types(
    "cancel_booking",
    {
        "cancellation_id": {"type": "integer", "description": "id of an active cancellation reason"},
        "reservation_no": {"type": "string"},
        "note": {"type": ["string", "null"], "maxLength": 1000},
    },
)
register_query_types("get_booking", {"reservation_no": {"type": "string", "maxLength": 255}})

AWAITING_PARTNER = frozenset({"PENDING", "PENDING_APPROVAL"})
RETRY_AFTER_HEADER: dict[str, Any] = {
    "Retry-After": {
        "description": (
            "Only while the booking is PENDING or PENDING_APPROVAL: seconds to wait before reading it "
            "again (a few in sandbox; TRANSFERS_APPROVAL_POLL_SECONDS, default 600, in live). "
            "Webhooks (booking.status_changed) spare the polling."
        ),
        "schema": {"type": "integer", "minimum": 1},
    }
}

IDEMPOTENCY_PARAMETER: dict[str, Any] = {
    "parameters": [
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": "1-255 characters; a repeat within 24 h replays the first answer",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255},
        }
    ]
}


async def _idempotent(
    request: Request,
    client: ClientPrincipal,
    work: Callable[[str | None], Awaitable[dict[str, Any]]],
    success: int = 200,
) -> Response:
    """Run ``work`` under the caller's Idempotency-Key, if any, storing and replaying its answer
    (``success``: the HTTP status of a successful one)."""
    raw_key = request.headers.get("idempotency-key")
    if raw_key is None:
        return JSONBody(await work(None), status_code=success)
    key = check_key(raw_key)
    body = await request.body()
    same_request = fingerprint(request.method, request.url.path, request.url.query, body)

    async def rendered() -> tuple[int, bytes]:
        try:
            return success, dumps(await work(key))
        except DomainError as exc:  # stored and replayed like a success, as the API renders it
            answer = render(exc)
            if answer is None or answer.status >= 500 or answer.status in (409, 429):
                raise
            return answer.status, dumps(answer.body)

    answer = await run_idempotent(services(request), client.client_id, key, same_request, rendered)
    headers = {"Idempotent-Replayed": "true"} if answer.replayed else {}
    return Response(answer.body, status_code=answer.status, media_type="application/json", headers=headers)


def _booking_body(request: Request, booking: Booking) -> dict[str, Any]:
    """``{"status": "Success", "booking": BookingResource}``: a created or amended booking, as of now."""
    return {"status": "Success", "booking": booking_resource(booking, services(request).clock.now())}


@router.post(
    "/booking",
    summary="Create a booking from a search result",
    response_model=schemas.CreateBookingResource,
    responses=schemas.IDEMPOTENT,
    operation_id="create_booking",
    openapi_extra=IDEMPOTENCY_PARAMETER,
)
async def create_booking(request: Request) -> Response:
    # Its caller is taken here rather than through Depends (the same check, in the same order), so that
    # api/direct_routes.py can answer it without FastAPI's per-request layers, as search and GET booking.
    client = await current_client(request)

    async def work(key: str | None) -> dict[str, Any]:
        # docs/rules/accounts.md#permissions: before the body, even a non-JSON one
        if not client.may(Permission.BOOKING_CREATE):
            raise Refused(Code.CREATION_PERMISSION_DENIED)
        body = await json_object(request)
        if body.get("return_vehicle_id") is not None:  # docs/rules/return-trips.md#create: null is absent
            out, back = await returns.create_trip(services(request), client, body, key)
            request.state.reservation_no = out.reservation_no
            now = services(request).clock.now()
            return {
                "status": "Success",
                "booking": booking_resource(out, now),
                "return_booking": booking_resource(back, now),
            }
        booked = await service.create_booking(services(request), client, body, key)
        request.state.reservation_no = booked.reservation_no
        return _booking_body(request, booked)

    return await _idempotent(request, client, work)


@router.get(
    "/booking",
    summary="Get booking details",
    response_model=schemas.BookingResource,
    responses={200: {"headers": RETRY_AFTER_HEADER}, **schemas.WITH_VALIDATION},
    operation_id="get_booking",
    openapi_extra={
        "parameters": [
            {
                "name": "reservation_no",
                "in": "query",
                "required": False,
                "description": "the booking's reservation number",
                "schema": {"type": "string"},
            }
        ]
    },
)
async def get_booking(request: Request) -> Response:
    # The hottest read: its caller and its one parameter are taken here rather than through
    # Depends/Query (the same checks, in the same order), because FastAPI's dependency solving was
    # ~13 % of its CPU (docs/operations/performance-history.md#profile). The parameter is documented in openapi_extra.
    # Taking the Request alone also lets api/direct_routes.py call it without FastAPI's layers.
    client = await current_client(request)
    reservation_no = query_value(request, "reservation_no")  # = request.query_params.get(...)
    request.state.reservation_no = reservation_no
    svc = services(request)
    resource = await service.get_booking(svc, client, reservation_no)
    if resource["status"] in AWAITING_PARTNER:
        # A hint for pollers: when asking again is worth it. Webhooks spare the polling.
        return JSONBody(resource, headers={"Retry-After": str(svc.settings.approval_retry_after)})
    return JSONBody(resource)


@router.delete(
    "/booking",
    summary="Cancel a booking",
    response_model=schemas.CancelBookingResource,
    responses=schemas.IDEMPOTENT,
    operation_id="cancel_booking",
    openapi_extra=IDEMPOTENCY_PARAMETER,
)
async def cancel_booking(
    request: Request,
    reservation_no: str | None = Query(default=None),
    cancellation_id: str | None = Query(default=None),
    note: str | None = Query(default=None),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    request.state.reservation_no = reservation_no

    async def work(key: str | None) -> dict[str, Any]:
        await service.cancel_booking(services(request), client, reservation_no, cancellation_id, note, key)
        return CANCELLED_BODY

    return await _idempotent(request, client, work)


# --- docs/rules/cancellation.md: the cancellation quote and amendments ---------------------------------
register_query_types("cancellation_quote", {"reservation_no": {"type": "string"}})
register_body("amend_booking", AmendBookingRequest)


@router.get(
    "/booking/cancellation-quote",
    summary="What cancelling the booking now would cost",
    response_model=CancellationQuote,
    responses=schemas.WITH_VALIDATION,
    operation_id="cancellation_quote",
)
async def cancellation_quote(
    request: Request,
    reservation_no: str | None = Query(default=None),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    request.state.reservation_no = reservation_no
    return JSONBody(await service.cancellation_quote(services(request), client, reservation_no))


@router.patch(
    "/booking",
    summary="Amend a booking (the partner confirms)",
    status_code=202,
    response_model=schemas.CreateBookingResource,
    responses={
        **schemas.IDEMPOTENT,
        **schemas.service_errors(ErrorCode.AMENDMENT_IN_PROGRESS, ErrorCode.IDEMPOTENCY_KEY_IN_USE),
        422: schemas.IDEMPOTENT[422]
        | {
            "description": "a SPEC code of the field, or AMENDMENT_NOT_ALLOWED, "
            "FIELD_NOT_AMENDABLE, AMENDMENT_EMPTY, IDEMPOTENCY_KEY_REUSED"
        },
    },
    operation_id="amend_booking",
    openapi_extra={
        "parameters": [
            *IDEMPOTENCY_PARAMETER["parameters"],
            {
                "name": "reservation_no",
                "in": "query",
                "required": False,
                "description": "the booking's reservation number",
                "schema": {"type": "string"},
            },
        ]
    },
)
async def amend_booking(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    reservation_no = query_value(request, "reservation_no")  # = request.query_params.get(...)
    request.state.reservation_no = reservation_no

    async def work(key: str | None) -> dict[str, Any]:
        if not client.may(Permission.BOOKING_CREATE):  # before the body, as on create
            raise Refused(Code.CREATION_PERMISSION_DENIED)
        body = await json_object(request)
        return _booking_body(request, await amend.request_amendment(services(request), client, reservation_no, body))

    return await _idempotent(request, client, work, success=202)
