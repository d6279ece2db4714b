"""The agency's rating of its traveller's ride (docs/rules/ratings.md#api)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from transfers.api import rating_schemas as schemas
from transfers.api.deps import current_client, json_object, services
from transfers.api.openapi import register_body, register_query_types
from transfers.api.responses import JSONBody
from transfers.clients.models import ClientPrincipal
from transfers.ratings import service

router = APIRouter(prefix="/api/v1/booking-api", tags=["Ratings"])
register_body("rate_ride", schemas.RateRideRequest)
register_query_types("rate_ride", {"reservation_no": {"type": "string"}})


@router.post(
    "/booking/rating",
    summary="Pass on the traveller's rating of the ride",
    description="1..5 stars and an optional comment (at most 1000 characters), once per booking, from the "
    "recorded drop-off until 7 days after it. The traveller can rate on the rating page instead "
    "(ride.rating_url); either way there is one rating per booking (docs/rules/ratings.md).",
    status_code=201,
    response_model=schemas.Rating,
    responses=schemas.RATE_ERRORS,
    operation_id="rate_ride",
)
async def rate_ride(
    request: Request,
    reservation_no: str | None = Query(default=None, description="the booking's reservation number"),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    request.state.reservation_no = reservation_no
    body = await json_object(request)
    rating = await service.rate_as_client(services(request), client, reservation_no, body)
    return JSONBody(rating.resource(reservation_no or ""), status_code=201)
