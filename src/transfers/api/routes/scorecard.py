"""``GET /api/v1/reverse/scorecard`` (docs/rules/quality.md#reverse-api): the calling partner's own
latest scorecard, exactly as stored. The partner is the API key's: the endpoint takes no partner id,
and any query parameter is refused (422), so no request can name another partner's scorecard."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from transfers.api import schemas
from transfers.api.deps import current_partner, services
from transfers.api.errors import REVERSE_PREFIX
from transfers.api.responses import JSONBody
from transfers.api.scorecard_schemas import Scorecard
from transfers.auth.service import PartnerPrincipal
from transfers.errors import ErrorCode, Invalid
from transfers.quality import service as quality

router = APIRouter(prefix=REVERSE_PREFIX, tags=["Reverse API (partners)"])
SCORECARD_ERRORS: dict[int | str, dict[str, Any]] = {
    **schemas.service_errors(ErrorCode.UNAUTHENTICATED, ErrorCode.NOT_FOUND, ErrorCode.RATE_LIMITED),
    422: {"model": schemas.PartnerErrorBody, "description": "a query parameter (the scorecard is always your own)"},
}


@router.get(
    "/scorecard",
    summary="Your latest quality scorecard",
    description="Your own scorecard as the service last computed it (daily at 03:00 UTC): counts over the bookings "
    "picked up in the 90 days that ended 12 h before `as_of`, rates, components, score and tier "
    "(docs/rules/quality.md). 404 `NOT_FOUND` until the first computation. No parameters: another partner's "
    "scorecard is never reachable.",
    response_model=Scorecard,
    responses=SCORECARD_ERRORS,
    operation_id="reverse_get_scorecard",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def get_scorecard(request: Request, partner: PartnerPrincipal = Depends(current_partner)) -> Response:
    if request.query_params:
        raise Invalid("GET /scorecard takes no parameters: it answers your own scorecard.")
    return JSONBody(await quality.latest_card(services(request).db, partner.partner_id))
