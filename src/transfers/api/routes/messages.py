"""The booking's messages to its traveller (docs/rules/messages.md#seen)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from transfers.api import message_schemas as schemas
from transfers.api.deps import current_client, services
from transfers.api.openapi import register_query_types
from transfers.api.responses import JSONBody
from transfers.clients.models import ClientPrincipal
from transfers.messages import listing

router = APIRouter(prefix="/api/v1/booking-api", tags=["Messages"])
register_query_types("list_messages", {"reservation_no": {"type": "string"}})


@router.get(
    "/booking/messages",
    summary="The messages sent to the booking's traveller",
    description="E-mails and text messages the service wrote to the traveller in your brand's name "
    "(docs/rules/messages.md), in the order they are due, each with its status: scheduled, sent, delivered "
    "(an SMS the provider confirmed), failed, suppressed (the traveller opted out), skipped (with the reason) "
    "or expired. Addresses are masked. Empty when messages are off for your account.",
    response_model=schemas.TravellerMessageList,
    responses=schemas.LIST_ERRORS,
    operation_id="list_messages",
)
async def list_messages(
    request: Request,
    reservation_no: str | None = Query(default=None, description="the booking's reservation number"),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    request.state.reservation_no = reservation_no
    return JSONBody({"data": await listing.for_client(services(request), client, reservation_no)})
