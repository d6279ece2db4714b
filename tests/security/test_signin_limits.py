"""Sign-in over real HTTP on an app of its own with the production limit (10 attempts a minute per client
address, every signed-in area together; docs/operations/security.md#sign-in), the client's address
passed by a trusted proxy's ``X-Forwarded-For``: the 11th attempt is answered 429 with ``Retry-After``
and checks no password (the public counter ``signin_password_checks_total`` says so), a burst of
anonymous sign-ins leaves an API request's latency alone, and the sign-in form's CSRF cookie must be
one the service signed."""

from __future__ import annotations

import asyncio
import random
import re
import statistics
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from prometheus_client import REGISTRY

from tests.browser.conftest import MakeOperator, make_operator  # noqa: F401  (the fixture)
from tests.conftest import ClientFactory, bearer, make_settings
from tests.servers import LiveServer
from transfers.clock import ShiftedClock

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
AREAS = ("/console", "/partner", "/agency")


@pytest.fixture(scope="module")
async def limited(database_url: str, workdir: Path, clock: ShiftedClock) -> AsyncIterator[LiveServer]:
    """The service with the default 10 sign-ins a minute per address, believing 127.0.0.1's forwarded headers."""
    from transfers.app import create_app

    app = create_app(
        make_settings(database_url, workdir, signin_attempts_per_minute=10), clock=clock, configure_logs=False
    )
    app.trust_forwarded("127.0.0.1")
    server = await LiveServer(app).start()
    yield server
    await server.stop()


@pytest.fixture
async def web(limited: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=limited.url, timeout=60) as client:
        yield client


def fresh_address() -> str:
    """An address no other test (nor an earlier run on the same database, within its minute) signed in from."""
    return f"198.18.{random.randrange(256)}.{random.randrange(1, 255)}"


def checks() -> float:
    return REGISTRY.get_sample_value("signin_password_checks_total") or 0.0


async def form_token(web: httpx.AsyncClient, area: str) -> str:
    page = await web.get(f"{area}/login")
    found = CSRF.search(page.text)
    assert found is not None
    return found.group(1)


async def attempt(web: httpx.AsyncClient, area: str, address: str, email: str) -> httpx.Response:
    """A wrong password for ``email`` in ``area``, from ``address``."""
    token = await form_token(web, area)
    return await web.post(
        f"{area}/login",
        data={"email": email, "password": "not the password", "csrf_token": token},
        headers={"X-Forwarded-For": address},
    )


async def test_the_eleventh_attempt_from_an_address_is_refused_before_any_hash(
    web: httpx.AsyncClient, clock: ShiftedClock
) -> None:
    address = fresh_address()
    before = checks()
    answers = [await attempt(web, AREAS[i % 3], address, f"someone{i}@example.com") for i in range(10)]
    assert [a.status_code for a in answers] == [401] * 10  # ten across the three areas, each checked
    assert checks() - before == 10

    refused = await attempt(web, "/agency", address, "someone-else@example.com")
    assert refused.status_code == 429 and "Too many sign-in attempts from your network" in refused.text
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert checks() - before == 10  # answered without hashing

    other = await attempt(web, "/console", fresh_address(), "someone@example.com")
    assert other.status_code == 401  # another address is not refused

    clock.advance(timedelta(seconds=61))
    assert (await attempt(web, "/partner", address, "someone@example.com")).status_code == 401


async def test_a_sign_in_burst_leaves_an_api_request_alone(
    web: httpx.AsyncClient, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 anonymous sign-ins at once from one address, at production's argon2 cost: 10 are checked (on
    the bounded pool of password checks), 30 refused at once; an API read's latency is printed before and
    during the burst. The bound is generous: this machine is shared, the figure is what matters."""
    from transfers.webauth import passwords

    monkeypatch.setattr(passwords, "_HASHER", PasswordHasher())  # production's cost (conftest lowers it)
    _, key = await make_client()

    async def api_latency() -> float:
        started = time.perf_counter()
        await web.get("/api/v1/booking-api/booking", params={"reservation_no": "TR-0000000000"}, headers=bearer(key))
        return (time.perf_counter() - started) * 1000

    for _ in range(5):  # warm
        await api_latency()
    baseline = [await api_latency() for _ in range(30)]
    token = await form_token(web, "/console")
    address = fresh_address()
    before = checks()

    async def one(i: int) -> int:
        answer = await web.post(
            "/console/login",
            data={"email": f"burst{i}@example.com", "password": "guess", "csrf_token": token},
            headers={"X-Forwarded-For": address},
        )
        return answer.status_code

    burst = asyncio.ensure_future(asyncio.gather(*(one(i) for i in range(40))))
    during = []
    while not burst.done() or len(during) < 10:  # API reads for as long as the burst lasts
        during.append(await api_latency())
    statuses = await burst
    assert sorted(statuses).count(429) == 30 and statuses.count(401) == 10
    assert checks() - before == 10
    base_ms, during_ms = statistics.median(baseline), statistics.median(during)
    print(
        f"\nAPI read latency, median: {base_ms:.1f} ms alone (30 reads), {during_ms:.1f} ms during 40 anonymous "
        f"sign-ins ({len(during)} reads, max {max(during):.1f} ms)"
    )
    assert during_ms < max(5 * base_ms, base_ms + 100)


async def test_the_sign_in_form_takes_only_a_csrf_cookie_the_service_signed(web: httpx.AsyncClient) -> None:
    token = await form_token(web, "/console")
    nonce, signature = token.rsplit(".", 1)
    assert len(signature) == 32 and web.cookies.get("transfers_console_login") == token
    for forged in ("chosen-by-someone-else", f"{nonce}.{'0' * 32}", nonce):
        web.cookies.set("transfers_console_login", forged, path="/console")
        answer = await web.post(
            "/console/login", data={"email": "x@example.com", "password": "y", "csrf_token": forged}
        )
        assert answer.status_code == 403, forged
    web.cookies.clear()
