"""Rate limits per API key (docs/rules/reliability.md#rate-limits, RELIABILITY-TESTS A6) on the real HTTP stack.

Each test serves its own app instance with a small budget (the session's ``service`` has the limit
effectively off). The Redis tests use a random database 0-15 of the local Redis and touch only keys
under a per-test prefix; they skip when no Redis answers on 127.0.0.1:6379.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.servers import LiveServer
from transfers.api.ratelimit import Bucket, MemoryBuckets
from transfers.app import create_app
from transfers.clock import ShiftedClock

REASONS = "/api/v1/booking-api/cancellation-reasons"
REDIS_URL = "redis://127.0.0.1:6379"
RATE_LIMITED_HEADERS = ("retry-after", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")


@pytest.fixture
def limited_app(database_url: str, workdir: Path, clock: ShiftedClock) -> Callable[..., Any]:
    """``async with limited_app(per_minute=.., burst=.., **settings) as http:`` a served app."""

    @asynccontextmanager
    async def start(*, per_minute: int = 30, burst: int = 5, **overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
        settings = make_settings(
            database_url, workdir, rate_limit_per_minute=per_minute, rate_limit_burst=burst, **overrides
        )
        server = await LiveServer(create_app(settings, clock=clock, configure_logs=False)).start()
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                yield http
        finally:
            await server.stop(graceful=True)  # runs the lifespan shutdown: pools and Redis closed

    return start


@pytest.fixture
async def redis_db() -> AsyncIterator[tuple[str, str]]:
    """(redis URL with a random database 0-15, a key prefix only this test uses); cleaned afterwards."""
    import redis.asyncio as aioredis

    url = f"{REDIS_URL}/{random.randint(0, 15)}"
    prefix = f"transfers-test:{uuid.uuid4().hex}:"
    client = aioredis.from_url(url, socket_connect_timeout=1)
    try:
        await client.ping()
    except Exception as exc:
        await client.aclose()
        pytest.skip(f"no Redis at {REDIS_URL}: {type(exc).__name__}")
    try:
        yield url, prefix
    finally:
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


def assert_rate_limited(response: httpx.Response, *, limit: int) -> int:
    assert response.status_code == 429, response.text
    body = response.json()
    assert set(body) == {"status", "code", "message"}
    assert body["status"] == "Error" and body["code"] == "RATE_LIMITED"
    for name in RATE_LIMITED_HEADERS:
        assert response.headers[name].isdigit(), name
    retry_after = int(response.headers["retry-after"])
    assert retry_after >= 1
    assert int(response.headers["ratelimit-limit"]) == limit
    assert int(response.headers["ratelimit-remaining"]) == 0
    assert int(response.headers["ratelimit-reset"]) >= retry_after
    assert response.headers["x-request-id"]
    return retry_after


# ---- the bucket itself (no HTTP) -----------------------------------------------------------------


def test_bucket_refills_continuously_up_to_its_size() -> None:
    now = [0.0]
    buckets = MemoryBuckets(Bucket(rate=10.0, burst=100), clock=lambda: now[0])
    decisions = [buckets.take("tk_a") for _ in range(101)]
    assert all(d.allowed for d in decisions[:100]) and not decisions[100].allowed
    assert decisions[0].remaining == 99 and decisions[99].remaining == 0
    assert decisions[100].retry_after == 1 and decisions[100].reset_seconds == 10
    assert decisions[100].headers()["RateLimit-Policy"] == "100;w=10"
    now[0] = 0.5  # five tokens back
    assert sum(buckets.take("tk_a").allowed for _ in range(10)) == 5
    assert buckets.take("tk_b").allowed  # another key has its own bucket
    now[0] = 1000.0  # long idle: full again, never more than the burst
    assert sum(buckets.take("tk_a").allowed for _ in range(150)) == 100


def test_slow_refill_retry_after_is_whole_seconds() -> None:
    now = [0.0]
    buckets = MemoryBuckets(Bucket(rate=5 / 60, burst=5), clock=lambda: now[0])  # 5 per minute
    for _ in range(5):
        assert buckets.take("tk_a").allowed
    refused = buckets.take("tk_a")
    assert not refused.allowed and refused.retry_after == 12 and refused.reset_seconds == 60
    now[0] = 11.9
    assert not buckets.take("tk_a").allowed
    now[0] = 12.0
    assert buckets.take("tk_a").allowed


# ---- over HTTP ----------------------------------------------------------------------------------


async def test_sixth_request_is_refused_other_keys_unaffected_then_refills(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
) -> None:
    _, key = await make_client()
    _, other_key = await make_client()
    async with limited_app(per_minute=30, burst=5) as http:  # 5 at once, then one every 2 s
        remaining = []
        for _ in range(5):
            ok = await http.get(REASONS, headers=bearer(key))
            assert ok.status_code == 200, ok.text
            assert ok.headers["ratelimit-limit"] == "5"
            assert ok.headers["ratelimit-policy"] == "5;w=10"
            assert "retry-after" not in ok.headers
            remaining.append(int(ok.headers["ratelimit-remaining"]))
        assert remaining == [4, 3, 2, 1, 0]
        retry_after = assert_rate_limited(await http.get(REASONS, headers=bearer(key)), limit=5)
        assert retry_after <= 2
        assert (await http.get(REASONS, headers=bearer(other_key))).status_code == 200
        await asyncio.sleep(retry_after + 0.1)
        assert (await http.get(REASONS, headers=bearer(key))).status_code == 200


async def test_failed_authentication_does_not_spend_a_real_keys_budget(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
) -> None:
    _, key = await make_client()
    forged = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")  # same prefix, wrong secret
    async with limited_app(per_minute=30, burst=5) as http:
        for _ in range(20):
            refused = await http.get(REASONS, headers=bearer(forged))
            assert refused.status_code == 401
            assert "ratelimit-limit" not in refused.headers
        statuses = [(await http.get(REASONS, headers=bearer(key))).status_code for _ in range(6)]
        assert statuses == [200] * 5 + [429]


async def test_errors_after_authentication_also_count_and_carry_headers(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
) -> None:
    _, key = await make_client()
    async with limited_app(per_minute=30, burst=3) as http:
        invalid = await http.get(
            "/api/v1/booking-api/booking", params={"reservation_no": "TB-NOPE"}, headers=bearer(key)
        )
        assert invalid.status_code == 422
        assert invalid.headers["ratelimit-remaining"] == "2"
        malformed = await http.post("/api/v1/booking-api/search", content=b"{", headers=bearer(key))
        assert malformed.status_code == 400 and malformed.headers["ratelimit-remaining"] == "1"
        assert (await http.get(REASONS, headers=bearer(key))).status_code == 200
        limited = await http.post("/api/v1/booking-api/search", content=b"{", headers=bearer(key))
        assert_rate_limited(limited, limit=3)
        health = await http.get("/healthz")  # unauthenticated routes are not limited
        assert health.status_code == 200 and "ratelimit-limit" not in health.headers


async def test_rate_limited_create_is_not_stored_by_idempotency(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
) -> None:
    _, key = await make_client()
    async with limited_app(per_minute=30, burst=1) as http:
        assert (await http.get(REASONS, headers=bearer(key))).status_code == 200
        headers = {**bearer(key), "Idempotency-Key": f"rl-{uuid.uuid4().hex}"}
        first = await http.post("/api/v1/booking-api/booking", json={}, headers=headers)
        retry_after = assert_rate_limited(first, limit=1)
        await asyncio.sleep(retry_after + 0.1)
        second = await http.post("/api/v1/booking-api/booking", json={}, headers=headers)
        assert second.status_code == 422 and "idempotent-replayed" not in second.headers  # ran, not replayed


async def test_partner_keys_are_limited_too(
    limited_app: Callable[..., Any],
    make_partner: PartnerFactory,
) -> None:
    _, _, partner_key = await make_partner(airports=("ZZZ",))
    async with limited_app(per_minute=30, burst=2) as http:
        for _ in range(2):
            unknown = await http.get("/api/v1/reverse/booking/info/TB-UNKNOWN", headers=bearer(partner_key))
            assert unknown.status_code == 404 and unknown.headers["ratelimit-limit"] == "2"
        assert_rate_limited(
            await http.get("/api/v1/reverse/booking/info/TB-UNKNOWN", headers=bearer(partner_key)), limit=2
        )


async def test_two_processes_share_one_budget_through_redis(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
    redis_db: tuple[str, str],
) -> None:
    url, prefix = redis_db
    _, key = await make_client()
    _, other_key = await make_client()
    shared = {"per_minute": 30, "burst": 5, "redis_url": url, "rate_limit_redis_prefix": prefix}
    async with limited_app(**shared) as one, limited_app(**shared) as two:
        statuses = [(await (one if i % 2 else two).get(REASONS, headers=bearer(key))).status_code for i in range(5)]
        assert statuses == [200] * 5
        assert_rate_limited(await one.get(REASONS, headers=bearer(key)), limit=5)
        retry_after = assert_rate_limited(await two.get(REASONS, headers=bearer(key)), limit=5)
        assert (await two.get(REASONS, headers=bearer(other_key))).status_code == 200
        await asyncio.sleep(retry_after + 0.1)
        assert (await one.get(REASONS, headers=bearer(key))).status_code == 200
        assert (await two.get(REASONS, headers=bearer(key))).status_code == 429  # that token was shared


async def test_unreachable_redis_fails_open_to_the_process_limiter(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
) -> None:
    _, key = await make_client()
    async with limited_app(per_minute=30, burst=3, redis_url="redis://127.0.0.1:1/0") as http:
        with capture_logs() as logs:
            statuses = [(await http.get(REASONS, headers=bearer(key))).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    warnings = [entry for entry in logs if entry["event"] == "rate_limit_redis_unavailable"]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"


async def _burst(http: httpx.AsyncClient, key: str, total: int, concurrency: int) -> tuple[dict[int, int], float]:
    counts: dict[int, int] = {}
    queue = list(range(total))
    started = time.perf_counter()

    async def worker() -> None:
        while queue:
            queue.pop()
            status = (await http.get(REASONS, headers=bearer(key))).status_code
            counts[status] = counts.get(status, 0) + 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return counts, time.perf_counter() - started


def _report(label: str, counts: dict[int, int], elapsed: float) -> None:
    accepted, refused = counts.get(200, 0), counts.get(429, 0)
    print(f"\nrate limit ({label}): 200 requests in {elapsed:.2f}s -> {accepted} accepted, {refused} refused (429)")
    assert accepted + refused == 200
    # burst 100, then 10 tokens a second while the burst lasts
    assert 100 <= accepted <= 100 + math.ceil(elapsed * 10) + 1


async def test_measure_200_requests_at_the_product_default(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
) -> None:
    """The issue note's figure: 200 requests at once against 600/min, burst 100, one process."""
    _, key = await make_client()
    async with limited_app(per_minute=600, burst=100) as http:
        counts, elapsed = await _burst(http, key, 200, 10)
    _report("in-process", counts, elapsed)


async def test_measure_200_requests_over_two_apps_sharing_redis(
    limited_app: Callable[..., Any],
    make_client: ClientFactory,
    redis_db: tuple[str, str],
) -> None:
    url, prefix = redis_db
    _, key = await make_client()
    shared = {"per_minute": 600, "burst": 100, "redis_url": url, "rate_limit_redis_prefix": prefix}
    async with limited_app(**shared) as one, limited_app(**shared) as two:
        (a, elapsed_a), (b, elapsed_b) = await asyncio.gather(_burst(one, key, 100, 5), _burst(two, key, 100, 5))
    counts = {status: a.get(status, 0) + b.get(status, 0) for status in {*a, *b}}
    _report("Redis, 2 apps", counts, max(elapsed_a, elapsed_b))
