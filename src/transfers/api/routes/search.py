"""POST /api/v1/booking-api/search.

The route is declared to FastAPI for the OpenAPI document (and serves the request if the fast path
below is not installed, or the app runs under a ``root_path``), but ``SearchFastPath`` answers it
first: the busiest booking-API call skips FastAPI's exception middleware, exit stack, router and
request handler (about seven call layers per request, bench/README.md "Search fan-out alone").
Both run the same ``search`` function: auth, rate limit, body, validation, errors in one order.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from transfers.api import schemas
from transfers.api.deps import current_client, json_object, services
from transfers.api.errors import handle_domain_error, handle_http_error
from transfers.api.openapi import register_body
from transfers.api.responses import JSONBody
from transfers.errors import DomainError
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


class SearchFastPath:
    """ASGI layer just inside ``RequestPlumbing``: ``POST PATH`` goes straight to ``search``.

    What the skipped layers did for this route is done here the same way: ``scope["route"]`` and
    ``scope["endpoint"]`` set as the router sets them (the metrics' route label), a ``DomainError``
    or ``HTTPException`` answered by the app's own handlers (``api/errors.py``), anything else left
    to ``RequestPlumbing`` (500/503, as before). Every other request passes through untouched."""

    def __init__(self, app: ASGIApp, *, route: APIRoute) -> None:
        self.app = app
        self.route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] != "POST" or scope.get("root_path"):
            await self.app(scope, receive, send)
            return
        scope["route"] = self.route
        scope["endpoint"] = search
        scope["path_params"] = {}
        request = Request(scope, receive)
        try:
            response = await search(request)
        except DomainError as exc:
            response = await handle_domain_error(request, exc)
        except StarletteHTTPException as exc:
            response = await handle_http_error(request, exc)
        await send({"type": "http.response.start", "status": response.status_code, "headers": response.raw_headers})
        await send({"type": "http.response.body", "body": response.body})


def install_fast_path(app: FastAPI) -> None:
    """Put ``SearchFastPath`` inside the middleware added next (``RequestPlumbing``): call it just
    before that ``add_middleware``. The route is this module's own (the one the router would put in
    ``scope["route"]``)."""
    for route in router.routes:
        if isinstance(route, APIRoute) and route.path == PATH and "POST" in (route.methods or ()):
            app.add_middleware(SearchFastPath, route=route)
            return
    raise LookupError(f"no POST {PATH} route to take the fast path for")
