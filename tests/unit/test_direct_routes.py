"""api/direct_routes.py: a direct route is answered by its own function, before FastAPI's layers, as
FastAPI would answer it (route label in the scope, the app's error handlers, the plumbing's request id,
body limit and error envelopes, ServerErrorMiddleware's last-resort 500); everything else goes through
FastAPI, with the forwarded headers of a trusted proxy; a route whose function takes more than the
Request is refused at start-up."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
import uvicorn
from fastapi import APIRouter, Query, Request
from opentelemetry.trace import NoOpTracerProvider
from starlette.responses import Response

from transfers.api import middleware
from transfers.api.deps import query_value
from transfers.api.direct_routes import DirectApp, install_direct_routes
from transfers.api.errors import install_error_handlers
from transfers.api.middleware import Plumbing, RequestPlumbing
from transfers.api.responses import JSONBody
from transfers.app import forwarded_allow_ips
from transfers.errors import Code, NotFound

THING = "/api/v1/booking-api/thing"
LIMIT = 100
router = APIRouter(prefix="/api/v1/booking-api")
calls: list[tuple[str, bool]] = []  # (route, answered directly: FastAPI's router never saw it)


@router.get("/thing")
async def get_thing(request: Request) -> Response:
    route = request.scope["route"]
    calls.append((route.path, "router" not in request.scope))
    if request.query_params.get("missing"):
        raise NotFound(Code.BOOKING_INFO_RESERVATION_NOT_FOUND)
    if request.query_params.get("boom"):
        raise RuntimeError("a bug")
    return JSONBody(
        {
            "route": route.path,
            "client": request.scope["client"][0],
            "scheme": request.scope["scheme"],
            "app": request.app is request.scope["app"],
        }
    )


@router.post("/thing")
async def post_thing(request: Request) -> Response:
    return JSONBody({"length": len(await request.body())}, status_code=201)


@router.get("/with-query")
async def with_query(request: Request, q: str = Query(default="")) -> Response:
    return JSONBody({"q": q, "client": request.scope["client"][0], "scheme": request.scope["scheme"]})


def app_with_direct_thing(**fastapi: Any) -> DirectApp:
    app = DirectApp(**fastapi)
    install_error_handlers(app)
    app.include_router(router)
    app.add_middleware(RequestPlumbing, max_body_bytes=LIMIT)
    install_direct_routes(app, [(router, "GET", THING), (router, "POST", THING)], Plumbing(max_body_bytes=LIMIT))
    return app


def client(app: DirectApp, *, root_path: str = "", raise_app_exceptions: bool = True) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(
        app=app, root_path=root_path, client=("127.0.0.1", 4321), raise_app_exceptions=raise_app_exceptions
    )
    return httpx.AsyncClient(transport=transport, base_url="http://t")


async def test_a_direct_route_is_answered_by_its_function_with_the_apps_error_handlers() -> None:
    app = app_with_direct_thing()
    calls.clear()
    async with client(app) as http:
        ok = await http.get(THING)
        assert ok.status_code == 200
        assert ok.json() == {"route": THING, "client": "127.0.0.1", "scheme": "http", "app": True}
        assert calls == [(THING, True)]
        missing = await http.get(THING, params={"missing": "1"})
        assert missing.status_code == 422  # the DomainError answered by api/errors.py, as through the router
        assert missing.json()["status"] == "Error"
        # another method on the same path, and the other routes, still go through FastAPI's router
        assert (await http.put(THING)).status_code == 405
        assert (await http.get("/api/v1/booking-api/with-query", params={"q": "x"})).json()["q"] == "x"


async def _answers(http: httpx.AsyncClient, prefix: str) -> list[tuple[int, list[tuple[str, str]], bytes]]:
    """The answers to the same requests (a fixed request id): ok, a domain error, a bug, a body too large
    (declared and streamed), a body within the limit."""

    async def streamed(size: int) -> AsyncIterator[bytes]:
        for _ in range(size // 10):
            yield b"x" * 10

    rid = {"X-Request-ID": "trace-1"}
    answers = [
        await http.get(prefix + THING, headers=rid),
        await http.get(prefix + THING, params={"missing": "1"}, headers=rid),
        await http.get(prefix + THING, params={"boom": "1"}, headers=rid),
        await http.post(prefix + THING, content=b"x" * (LIMIT + 1), headers=rid),
        await http.post(prefix + THING, content=streamed(LIMIT + 10), headers=rid),
        await http.post(prefix + THING, content=b"x" * LIMIT, headers=rid),
    ]
    return [(a.status_code, a.headers.multi_items(), a.content) for a in answers]


async def test_direct_answers_are_those_fastapi_gives_the_same_route() -> None:
    """Under a root_path the same routes go through all of FastAPI's layers: same statuses, headers
    (X-Request-ID, content-type, content-length, in the same order) and bodies."""
    app = app_with_direct_thing()
    calls.clear()
    async with client(app) as direct, client(app, root_path="/base") as through_fastapi:
        answers = await _answers(direct, "")
        assert calls == [(THING, True)] * 3
        assert answers == await _answers(through_fastapi, "/base")
        assert calls[3:] == [(THING, False)] * 3
    statuses = [status for status, _, _ in answers]
    assert statuses == [200, 422, 500, 413, 413, 201]
    _, headers, body = answers[2]
    assert ("x-request-id", "trace-1") in headers
    assert orjson.loads(body) == {
        "status": "Error",
        "code": "INTERNAL_ERROR",
        "message": "Internal error; quote request id trace-1 to support.",
    }
    _, headers, body = answers[3]
    assert ("x-request-id", "trace-1") in headers and ("content-type", "application/json") in headers
    assert (
        body == b'{"status":"Error","code":"PAYLOAD_TOO_LARGE","message":"The request body is larger than 100 bytes."}'
    )
    assert answers[4][2] == body  # no content-length: stopped while reading


async def test_a_failure_of_the_plumbing_itself_is_server_error_middlewares_plain_500(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As ServerErrorMiddleware (outside RequestPlumbing) answers it, then passed on to the server."""

    def broken(*_: Any) -> None:
        raise RuntimeError("metrics broke")

    monkeypatch.setattr(middleware, "observe_request", broken)
    app = app_with_direct_thing()
    for root_path, path in (("", THING), ("/base", "/base" + THING)):
        async with client(app, root_path=root_path) as http:
            with pytest.raises(RuntimeError, match="metrics broke"):
                await http.post(path, content=b"x" * (LIMIT + 1))  # the 413 is sent before the failure
        async with client(app, root_path=root_path, raise_app_exceptions=False) as http:
            answer = await http.post(path, content=b"x" * (LIMIT + 1))
            assert answer.status_code == 413  # already sent: nothing more
            answer = await http.get(path)
            assert answer.status_code == 200  # the answer went out before the bookkeeping failed


async def _raw(app: DirectApp, root_path: str, path: str) -> tuple[list[dict[str, Any]], BaseException | None]:
    """A POST whose caller left before sending its body, straight through the ASGI interface."""
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": root_path,
        "query_string": b"",
        "headers": [(b"x-request-id", b"trace-2")],
        "client": ("127.0.0.1", 4321),
        "server": ("t", 80),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    try:
        await app(scope, receive, send)
    except RuntimeError as exc:
        return sent, exc
    return sent, None


async def test_a_failure_of_the_plumbing_before_any_answer_is_a_plain_500(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("metrics broke")

    app = app_with_direct_thing()
    assert await _raw(app, "", THING) == ([], None)  # the caller left: nothing answered (counted as 499)
    monkeypatch.setattr(middleware, "observe_request", broken)
    direct, direct_error = await _raw(app, "", THING)
    through_fastapi, error = await _raw(app, "/base", "/base" + THING)
    assert direct == through_fastapi
    assert [m.get("status") for m in direct] == [500, None] and direct[1]["body"] == b"Internal Server Error"
    assert str(direct_error) == str(error) == "metrics broke"


async def test_with_fastapis_telemetry_on_direct_routes_go_through_fastapi() -> None:
    app = app_with_direct_thing(telemetry={"tracer_provider": NoOpTracerProvider()})
    calls.clear()
    async with client(app) as http:
        assert (await http.get(THING)).status_code == 200
    assert calls == [(THING, False)]


async def test_forwarded_headers_of_a_trusted_proxy_for_the_requests_passed_on() -> None:
    """``trust_forwarded`` does what uvicorn's proxy_headers did, for what FastAPI answers; a direct
    route reads neither the client's address nor the scheme (api/direct_routes.py)."""
    app = app_with_direct_thing()
    app.trust_forwarded("127.0.0.1")
    forwarded = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
    async with client(app) as http:
        answer = await http.get("/api/v1/booking-api/with-query", headers=forwarded)
        assert (answer.json()["client"], answer.json()["scheme"]) == ("203.0.113.9", "https")
        assert (await http.get(THING, headers=forwarded)).status_code == 200
    untrusting = app_with_direct_thing()
    untrusting.trust_forwarded("10.0.0.1")
    async with client(untrusting) as http:
        answer = await http.get("/api/v1/booking-api/with-query", headers=forwarded)
        assert (answer.json()["client"], answer.json()["scheme"]) == ("127.0.0.1", "http")


def test_the_trusted_proxies_are_uvicorns_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    assert forwarded_allow_ips() == uvicorn.Config("transfers.app:create_served_app").forwarded_allow_ips
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.1.2.3,10.0.0.0/8")
    assert forwarded_allow_ips() == uvicorn.Config("transfers.app:create_served_app").forwarded_allow_ips


def test_a_route_taking_more_than_the_request_cannot_be_direct() -> None:
    app = DirectApp()
    plumbing = Plumbing(max_body_bytes=LIMIT)
    with pytest.raises(ValueError, match="Request alone"):
        install_direct_routes(app, [(router, "GET", "/api/v1/booking-api/with-query")], plumbing)
    with pytest.raises(LookupError):
        install_direct_routes(app, [(router, "DELETE", THING)], plumbing)


@pytest.mark.parametrize(
    "query",
    [
        b"",
        b"reservation_no=TR-1",
        b"reservation_no=",
        b"reservation_no",
        b"reservation_no=a&reservation_no=b",
        b"reservation_no=a%20b+c%2B",
        b"reservation_no=%ff%e9&x=1",
        b"reservation_no=\xe9",
        b"x=1;reservation_no=2",
        b"RESERVATION_NO=1&&=2&reservation_no=%",
    ],
)
def test_query_value_is_starlettes_query_params_get(query: bytes) -> None:
    request = Request({"type": "http", "query_string": query, "headers": []})
    assert query_value(request, "reservation_no") == Request(request.scope).query_params.get("reservation_no")
