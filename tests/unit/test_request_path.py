"""The search's request path around the fan-out, done without Starlette's or the standard library's
general helpers (docs/operations/performance-history.md#search-seventh-pass): each shortcut gives what the helper
it replaces gives (``Headers.get``, ``secrets.token_urlsafe``, the rate limiter's ``check``, the two
metric series of a request); the body is Starlette's own ``Request.body``, read once by ``json_object``."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request

from transfers.api import metrics as api_metrics
from transfers.api.deps import header_value, json_object
from transfers.api.metrics import ResponseSeen, observe_request
from transfers.api.ratelimit import Bucket, RateLimiter
from transfers.errors import DomainError
from transfers.observability import metrics
from transfers.search import service

RAW_HEADERS: list[list[tuple[bytes, bytes]]] = [
    [],
    [(b"authorization", b"Bearer tk_a")],
    [(b"host", b"x"), (b"authorization", b"Bearer one"), (b"authorization", b"Bearer two")],
    [(b"Authorization", b"Bearer upper"), (b"authorization", b"Bearer lower")],
    [(b"authorization", b"Bearer \xe9\xff")],
    [(b"authorization", b"")],
    [(b"x-authorization", b"no")],
]


@pytest.mark.parametrize("raw", RAW_HEADERS)
def test_header_value_is_starlettes_headers_get(raw: list[tuple[bytes, bytes]]) -> None:
    request = Request({"type": "http", "headers": list(raw)})
    assert header_value(request, b"authorization") == Headers(raw=list(raw)).get("authorization")


MESSAGES: list[list[dict[str, Any]]] = [
    [{"type": "http.request", "body": b'{"a": 1}'}],
    [{"type": "http.request"}],
    [{"type": "http.request", "body": b"", "more_body": False}],
    [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"", "more_body": True},
        {"type": "http.request", "body": b"cd"},
    ],
    [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.disconnect"}],
    [{"type": "http.disconnect"}],
]


def _request(messages: list[dict[str, Any]]) -> Request:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0) if queue else {"type": "http.disconnect"}  # as a server does once it is over

    return Request({"type": "http", "headers": []}, receive)


async def _outcome(request: Request) -> tuple[Any, ...]:
    """What ``json_object`` gives (its object, its error's code, or the disconnect), then what a second
    read of the body gives, as a route or an error handler reading it again would see it."""
    try:
        first: Any = await json_object(request)
    except ClientDisconnect:
        first = "disconnect"
    except DomainError as error:
        first = error.code
    try:
        second: Any = await request.body()
    except (ClientDisconnect, RuntimeError) as exc:
        second = type(exc).__name__
    return first, second


@pytest.mark.parametrize(
    ("messages", "want"),
    [
        (MESSAGES[0], ({"a": 1}, b'{"a": 1}')),
        (MESSAGES[1], ("MALFORMED_JSON", b"")),
        (MESSAGES[2], ("MALFORMED_JSON", b"")),
        (MESSAGES[3], ("MALFORMED_JSON", b"abcd")),
        (MESSAGES[4], ("disconnect", "ClientDisconnect")),  # a second read meets the disconnect again
        (MESSAGES[5], ("disconnect", "ClientDisconnect")),
        ([{"type": "http.request", "body": b"[1]"}], ("MALFORMED_JSON", b"[1]")),
    ],
)
async def test_json_object_reads_the_body_once_through_starlette(
    messages: list[dict[str, Any]], want: tuple[Any, ...]
) -> None:
    assert await _outcome(_request(messages)) == want


async def test_a_body_already_read_is_read_again_from_the_request() -> None:
    request = _request([{"type": "http.request", "body": b'{"b": 2}'}])
    assert await request.body() == b'{"b": 2}'
    assert await json_object(request) == {"b": 2}


def test_search_ids_are_token_urlsafe_of_the_same_random_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    for sample in (bytes(24), b"\xff" * 24, bytes(range(24)), b"\xfb\xef\xbe" * 8):
        monkeypatch.setattr(service, "urandom", lambda n, sample=sample: sample[:n])
        assert service.new_search_id() == "s_" + base64.urlsafe_b64encode(sample).rstrip(b"=").decode("ascii")
    monkeypatch.undo()
    ids = {service.new_search_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"s_[A-Za-z0-9_-]{32}", i) for i in ids)


async def test_check_here_is_checks_answer_without_redis_and_none_with_it() -> None:
    now = [100.0]
    here = RateLimiter(Bucket(rate=1.0, burst=2), clock=lambda: now[0])
    there = RateLimiter(Bucket(rate=1.0, burst=2), clock=lambda: now[0])
    for _ in range(3):
        assert here.check_here("tk_a") == await there.check("tk_a")
    assert not here.memory.take("tk_a").allowed
    with_redis = RateLimiter(Bucket(rate=1.0, burst=2), redis_url="redis://127.0.0.1:1/0", clock=lambda: now[0])
    try:
        assert with_redis.check_here("tk_a") is None
        with_redis._redis_down_until = now[0] + 1  # Redis down: this process's buckets
        assert with_redis.check_here("tk_a") == with_redis.memory.bucket.decide(True, 1.0)
    finally:
        await with_redis.aclose()


def test_observe_request_counts_in_the_series_of_route_method_and_status() -> None:
    route = type("Route", (), {"path": "/api/v1/test-observe"})()
    scope = {"type": "http", "method": "POST", "route": route}
    counted = {
        status: metrics.series(metrics.HTTP_REQUESTS, route.path, "POST", text)
        for status, text in ((200, "200"), (0, "none"), (422, "422"))
    }
    before = {status: child._value.get() for status, child in counted.items()}
    duration = metrics.series(metrics.HTTP_DURATION, route.path, "POST")
    sum_before = duration._sum.get()
    for status in (200, 200, 0, 422, 200):
        observe_request(scope, "", ResponseSeen(status), 0.25)
    assert {status: child._value.get() - before[status] for status, child in counted.items()} == {
        200: 3,
        0: 1,
        422: 1,
    }
    assert duration._sum.get() - sum_before == pytest.approx(1.25)
    assert api_metrics._REQUEST_SERIES[(route.path, "POST", 0)][0] is counted[0]
