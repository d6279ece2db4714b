"""api/direct_routes.py: a direct route is answered by its own function as the router would answer it
(route label in the scope, the app's error handlers), everything else goes through FastAPI, and a route
whose function takes more than the Request is refused at start-up."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Query, Request
from starlette.responses import Response

from transfers.api.direct_routes import DirectRoutes, install_direct_routes
from transfers.api.errors import install_error_handlers
from transfers.api.responses import JSONBody
from transfers.errors import Code, NotFound

router = APIRouter(prefix="/api/v1/booking-api")
calls: list[str] = []


@router.get("/thing")
async def get_thing(request: Request) -> Response:
    route = request.scope["route"]
    calls.append(route.path)
    if request.query_params.get("missing"):
        raise NotFound(Code.BOOKING_INFO_RESERVATION_NOT_FOUND)
    return JSONBody({"route": route.path, "direct": request.scope.get("fastapi_astack") is None})


@router.get("/with-query")
async def with_query(request: Request, q: str = Query(default="")) -> Response:
    return JSONBody({"q": q})


def app_with_direct_thing() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    install_direct_routes(app, [(router, "GET", "/api/v1/booking-api/thing")])
    return app


async def test_a_direct_route_is_answered_by_its_function_with_the_apps_error_handlers() -> None:
    app = app_with_direct_thing()
    assert any(m.cls is DirectRoutes for m in app.user_middleware)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        ok = await http.get("/api/v1/booking-api/thing")
        assert ok.status_code == 200
        assert ok.json() == {"route": "/api/v1/booking-api/thing", "direct": True}  # FastAPI's exit stack skipped
        missing = await http.get("/api/v1/booking-api/thing", params={"missing": "1"})
        assert missing.status_code == 422  # the DomainError answered by api/errors.py, as through the router
        assert missing.json()["status"] == "Error"
        # another method on the same path, and the other routes, still go through FastAPI's router
        assert (await http.post("/api/v1/booking-api/thing")).status_code == 405
        assert (await http.get("/api/v1/booking-api/with-query", params={"q": "x"})).json() == {"q": "x"}


def test_a_route_taking_more_than_the_request_cannot_be_direct() -> None:
    app = FastAPI()
    with pytest.raises(ValueError, match="Request alone"):
        install_direct_routes(app, [(router, "GET", "/api/v1/booking-api/with-query")])
    with pytest.raises(LookupError):
        install_direct_routes(app, [(router, "POST", "/api/v1/booking-api/thing")])
