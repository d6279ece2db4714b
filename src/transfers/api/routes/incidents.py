"""Incidents of the booking API (docs/rules/incidents.md#report): report one, list a booking's."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from transfers.api import incident_schemas as schemas
from transfers.api.deps import current_client, json_object, services
from transfers.api.openapi import register_body, register_query_types
from transfers.api.responses import JSONBody
from transfers.clients.models import ClientPrincipal
from transfers.incidents import service

router = APIRouter(prefix="/api/v1/booking-api", tags=["Incidents"])
register_body("report_incident", schemas.ReportIncidentRequest)
register_query_types("report_incident", {"reservation_no": {"type": "string"}})
register_query_types("list_incidents", {"reservation_no": {"type": "string"}})


@router.post(
    "/booking/incidents",
    summary="Report what went wrong on a ride",
    description="Allowed for APPROVED and COMPLETED bookings from the pickup time (or from the moment the booking "
    "became COMPLETED, when that was earlier) until 72 h after the pickup; one "
    "incident per booking and type. A DRIVER_NO_SHOW with nothing on record saying the driver came (no arrival, "
    "no passenger on board, no drop-off), from a partner that reports its rides (driver-event coverage of at "
    "least 80 % over 30 days, or fewer than 5 rides to judge), is decided at once: the whole price is refunded "
    "and the booking becomes REFUNDED; otherwise an operator decides (docs/rules/incidents.md#driver-no-show).",
    status_code=201,
    response_model=schemas.Incident,
    responses=schemas.REPORT_ERRORS,
    operation_id="report_incident",
)
async def report_incident(
    request: Request,
    reservation_no: str | None = Query(default=None, description="the booking's reservation number"),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    request.state.reservation_no = reservation_no
    body = await json_object(request)
    incident = await service.report(services(request), client, reservation_no, body)
    return JSONBody(incident.resource(), status_code=201)


@router.get(
    "/booking/incidents",
    summary="A booking's incidents, oldest first",
    response_model=schemas.IncidentList,
    responses=schemas.LIST_ERRORS,
    operation_id="list_incidents",
)
async def list_incidents(
    request: Request,
    reservation_no: str | None = Query(default=None, description="the booking's reservation number"),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    request.state.reservation_no = reservation_no
    found = await service.for_client(services(request), client, reservation_no)
    return JSONBody({"data": [incident.resource() for incident in found]})
