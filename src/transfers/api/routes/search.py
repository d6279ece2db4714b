"""POST /api/v1/booking-api/search.

The route is declared to FastAPI for the OpenAPI document (and serves the request if the direct
layer is not installed, or the app runs under a ``root_path``), but ``api/direct_routes.py`` answers
it first: the busiest booking-API call skips FastAPI's exception middleware, exit stack, router and
request handler (about seven call layers per request, docs/operations/performance-history.md#search-fan-out).
Both run the same ``search`` function: auth, rate limit, body, validation, errors in one order.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from transfers.api import schemas
from transfers.api.deps import current_client, json_object, services
from transfers.api.openapi import register_body
from transfers.api.responses import JSONBody
from transfers.search.service import search as run_search

PATH = "/api/v1/booking-api/search"
router = APIRouter(prefix="/api/v1/booking-api", tags=["Booking API"])
register_body("search", schemas.SearchRequest)


@router.post(
    "/search",
    summary="Search vehicles between an airport and a point",
    response_model=schemas.SearchResource,
    responses=schemas.WITH_VALIDATION,
    operation_id="search",
)
async def search(request: Request) -> Response:
    # Its caller is taken here rather than through Depends (the same check, in the same order, as
    # GET booking does): FastAPI's dependency solving is per-request work with nothing to solve.
    client = await current_client(request)
    body = await json_object(request)
    return JSONBody(await run_search(services(request), client, body))
