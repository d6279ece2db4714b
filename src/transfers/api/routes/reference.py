"""Public reference data (docs/rules/reference-data.md#car-data) and the cancellation-reasons list
(docs/rules/booking.md)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from transfers.api import schemas
from transfers.api.deps import current_client, services
from transfers.api.responses import JSONBody
from transfers.clients.models import ClientPrincipal
from transfers.reference.repository import active_cancellation_reasons, list_catalogue

public = APIRouter(prefix="/api/public/car", tags=["Reference data"])
booking_api = APIRouter(prefix="/api/v1/booking-api", tags=["Booking API"])


def _catalogue_route(name: str, summary: str) -> None:
    async def handler(request: Request) -> Response:
        async with services(request).db.read() as conn:
            items = await list_catalogue(conn, name)
        return JSONBody({"data": [item.public() for item in items]})

    public.add_api_route(
        f"/{name}",
        handler,
        methods=["GET"],
        summary=summary,
        response_model=schemas.ReferenceList,
        operation_id=f"reference_{name}",
    )


_catalogue_route("services", "Service types")
_catalogue_route("segment", "Vehicle segments")
_catalogue_route("type", "Vehicle types")


@booking_api.get(
    "/cancellation-reasons",
    summary="Cancellation reasons",
    response_model=list[schemas.CancellationReasonsResource],
    responses=schemas.AUTH_ERRORS,
    operation_id="cancellation_reasons",
)
async def cancellation_reasons(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    async with services(request).db.read() as conn:
        reasons = await active_cancellation_reasons(conn)
    return JSONBody([reason.public() for reason in reasons])
