"""What differs in live (docs/operations/security.md): the signed-in areas' cookies are ``__Host-`` cookies
(``Secure``, ``Path=/``, no ``Domain``) and still sign a person in; ``/metrics`` answers only the bearer of
``TRANSFERS_METRICS_TOKEN`` (401 otherwise) and, without that setting, is refused in live (404) while the
sandbox serves it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import MakeOperator, make_operator  # noqa: F401  (the fixture)
from tests.conftest import make_settings
from transfers.clock import ShiftedClock

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@asynccontextmanager
async def app_client(
    database_url: str, workdir: Path, clock: ShiftedClock, **overrides: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """The app in-process over HTTPS (its cookies are ``Secure`` in live), its database closed after."""
    from transfers.app import create_app

    app = create_app(make_settings(database_url, workdir, **overrides), clock=clock, configure_logs=False)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="https://transfers.test"
        ) as client:
            yield client
    finally:
        await app.state.services.db.dispose()


@pytest.fixture
async def live(database_url: str, workdir: Path, clock: ShiftedClock) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(database_url, workdir, clock, environment="live") as client:
        yield client


def set_cookie(answer: httpx.Response, name: str) -> str:
    return next(value for value in answer.headers.get_list("set-cookie") if value.startswith(f"{name}="))


async def test_live_cookies_are_host_cookies_and_sign_in_works(
    live: httpx.AsyncClient,
    make_operator: MakeOperator,  # noqa: F811
) -> None:
    operator = await make_operator("support")
    form = await live.get("/console/login")
    login_cookie = set_cookie(form, "__Host-transfers_console_login")
    assert "Path=/;" in login_cookie and "Secure" in login_cookie and "Domain" not in login_cookie
    found = CSRF.search(form.text)
    assert found is not None
    signed_in = await live.post(
        "/console/login",
        data={"email": operator.email, "password": operator.password, "csrf_token": found.group(1)},
    )
    assert signed_in.status_code == 303, signed_in.text
    session = set_cookie(signed_in, "__Host-transfers_console")
    assert "Path=/;" in session and "Secure" in session and "HttpOnly" in session and "Domain" not in session
    assert (await live.get("/console/")).status_code == 200
    for area in ("/partner", "/agency"):  # every area, each its own name
        name = f"__Host-transfers_{area.strip('/')}_login"
        assert "Path=/;" in set_cookie(await live.get(f"{area}/login"), name)


async def test_live_refuses_metrics_without_a_token(live: httpx.AsyncClient) -> None:
    answer = await live.get("/metrics")
    assert answer.status_code == 404 and "http_requests_total" not in answer.text


@pytest.mark.parametrize("environment", ["sandbox", "live"])
async def test_metrics_answer_only_the_token(
    database_url: str, workdir: Path, clock: ShiftedClock, environment: str
) -> None:
    token = "metrics-token-for-tests-0123456789"
    async with app_client(database_url, workdir, clock, environment=environment, metrics_token=token) as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}, {"Authorization": "Basic x"}):
            refused = await client.get("/metrics", headers=headers)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
            assert "http_requests_total" not in refused.text
        served = await client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert served.status_code == 200 and "http_requests_total" in served.text


async def test_sandbox_serves_metrics_without_a_token(database_url: str, workdir: Path, clock: ShiftedClock) -> None:
    async with app_client(database_url, workdir, clock) as client:
        assert (await client.get("/metrics")).status_code == 200
