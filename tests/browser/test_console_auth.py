"""Signing in to the console (docs/rules/console.md), in a real browser: sign in and out, a wrong password,
the failed sign-in throttle, CSRF, sessions ended on the server, the security headers, error pages."""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from playwright.async_api import BrowserContext, expect
from sqlalchemy import select

from tests.browser.conftest import ConsoleAs, MakeOperator, sign_in
from tests.conftest import ClientFactory
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit
from transfers.operators import service as operators
from transfers.webauth.http import CONTENT_SECURITY_POLICY

NewContext = Callable[[], Awaitable[BrowserContext]]


async def test_sign_in_shows_the_dashboard_and_sign_out_ends_the_session(
    console_as: ConsoleAs, console_url: str, db: Database
) -> None:
    console = await console_as("support")
    page = console.page
    await expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    for name in ("Bookings", "Clients", "Partners", "Deliveries", "Audit log"):
        await expect(
            page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)
        ).to_be_visible()
    cookie = next(c for c in await console.context.cookies() if c["name"] == "transfers_console")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Lax" and cookie["path"] == "/console"
    assert cookie["secure"] is False  # sandbox over plain HTTP; live sets Secure (test_live_cookie_is_secure)

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_text("You are signed out.")).to_be_visible()
    async with db.read() as conn:
        audited = (
            await conn.execute(
                select(admin_audit.c.action, admin_audit.c.actor)
                .where(admin_audit.c.subject == f"operator:{console.operator.operator_id}")
                .order_by(admin_audit.c.id)
            )
        ).all()
    assert [tuple(r) for r in audited] == [
        ("operator.create", "tests"),
        ("operator.sign_in", f"operator:{console.operator.email}"),
        ("operator.sign_out", f"operator:{console.operator.email}"),
    ]
    # The old cookie opens nothing any more, even when a copy of it is replayed.
    async with httpx.AsyncClient(cookies={"transfers_console": cookie["value"]}) as client:
        answer = await client.get(f"{console_url}/bookings")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/console/login")
    await page.goto(f"{console_url}/bookings")
    await expect(page).to_have_url(re.compile(r"/console/login\?next=%2Fconsole%2Fbookings"))


async def test_a_wrong_password_is_refused_and_the_email_kept(
    new_context: NewContext, make_operator: MakeOperator, console_url: str
) -> None:
    operator = await make_operator("admin")
    page = await (await new_context()).new_page()
    await sign_in(page, console_url, operator.email, "not the password at all")
    await expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")
    await expect(page.get_by_label("Email")).to_have_value(operator.email)
    assert "transfers_console" not in {c["name"] for c in await page.context.cookies()}
    # an unknown e-mail gets exactly the same answer
    await sign_in(page, console_url, "nobody-here@example.com", "whatever it is")
    await expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")
    token = await page.locator("input[name=csrf_token]").input_value()
    for email, password in (("a\x00b@example.com", "x"), (operator.email, "\x00"), ("x" * 10_000, "y" * 10_000)):
        answer = await page.request.post(
            f"{console_url}/login", form={"csrf_token": token, "email": email, "password": password}
        )
        assert answer.status == 401 and "Wrong email or password." in await answer.text()


async def test_failed_sign_ins_are_slowed_then_refused_for_that_email_only(
    new_context: NewContext, make_operator: MakeOperator, console_url: str
) -> None:
    victim, other = await make_operator("admin"), await make_operator("support")
    page = await (await new_context()).new_page()
    durations = []
    for _ in range(4):
        started = time.monotonic()
        await sign_in(page, console_url, victim.email.upper(), "wrong password!")
        await expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")
        durations.append(time.monotonic() - started)
    # no delay for the first failure, then 0.25 s, 0.5 s, 1 s on top of the password check's own time
    assert durations[3] >= 1.0
    await sign_in(page, console_url, victim.email, "wrong password!")  # the 5th within 15 minutes
    await expect(page.get_by_role("alert")).to_contain_text("Too many failed sign-ins for this email")
    await sign_in(page, console_url, victim.email, victim.password)  # even the right password now
    await expect(page.get_by_role("alert")).to_contain_text("Too many failed sign-ins for this email")
    await expect(page).to_have_url(re.compile(r"/console/login$"))
    await sign_in(page, console_url, other.email, other.password)  # another e-mail is not affected
    await expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


async def test_the_lock_out_ends_after_15_minutes(
    new_context: NewContext, make_operator: MakeOperator, console_url: str, clock: ShiftedClock
) -> None:
    operator = await make_operator("support")
    page = await (await new_context()).new_page()
    from datetime import timedelta

    for _ in range(5):
        await sign_in(page, console_url, operator.email, "wrong password!")
        clock.advance(timedelta(seconds=1))
    await expect(page.get_by_role("alert")).to_contain_text("Too many failed sign-ins")
    clock.advance(timedelta(minutes=14))
    await sign_in(page, console_url, operator.email, operator.password)
    await expect(page.get_by_role("alert")).to_contain_text("Too many failed sign-ins")
    clock.advance(timedelta(minutes=1, seconds=1))
    await sign_in(page, console_url, operator.email, operator.password)
    await expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


async def test_forms_without_the_sessions_csrf_token_are_refused(console_as: ConsoleAs, console_url: str) -> None:
    console = await console_as("admin")
    page = console.page
    for token in ("", "forged-token", "x" * 5000):
        answer = await page.request.post(f"{console_url}/logout", form={"csrf_token": token})
        assert answer.status == 403
        assert "security token is missing or out of date" in await answer.text()
    await page.goto(f"{console_url}/")  # still signed in: the forged sign-out did nothing
    await expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


async def test_the_sign_in_form_needs_its_own_token(
    new_context: NewContext, make_operator: MakeOperator, console_url: str
) -> None:
    operator = await make_operator("admin")
    page = await (await new_context()).new_page()
    answer = await page.request.post(
        f"{console_url}/login", form={"email": operator.email, "password": operator.password}
    )
    assert answer.status == 403
    assert "transfers_console" not in {c["name"] for c in await page.context.cookies()}


async def test_a_disabled_operator_is_signed_out_everywhere(
    console_as: ConsoleAs, console_url: str, db: Database, clock: ShiftedClock
) -> None:
    console = await console_as("support")
    second = await console.context.browser.new_context()  # type: ignore[union-attr]
    try:
        other_page = await second.new_page()
        await sign_in(other_page, console_url, console.operator.email, console.operator.password)
        await expect(other_page.get_by_role("heading", name="Dashboard")).to_be_visible()
        assert await operators.disable_operator(db, clock, console.operator.operator_id, actor="tests") == 2
        for page in (console.page, other_page):
            await page.goto(f"{console_url}/bookings")
            await expect(page).to_have_url(re.compile(r"/console/login"))
        await sign_in(other_page, console_url, console.operator.email, console.operator.password)
        await expect(other_page.get_by_role("alert")).to_have_text("Wrong email or password.")
    finally:
        await second.close()


async def test_api_keys_never_open_the_console(service: LiveServer, make_client: ClientFactory) -> None:
    _, key = await make_client()
    async with httpx.AsyncClient(base_url=service.url) as client:
        answer = await client.get("/console/", headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 303 and answer.headers["location"].startswith("/console/login")


async def test_every_console_answer_refuses_framing(
    service: LiveServer, console_as: ConsoleAs, console_url: str
) -> None:
    async with httpx.AsyncClient(base_url=service.url) as client:
        for path in ("/console/login", "/console/", "/console/nowhere", "/console/static/console.css"):
            answer = await client.get(path)
            assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
            assert answer.headers["x-frame-options"] == "DENY"
    console = await console_as("support")
    answer = await console.page.goto(f"{console_url}/nowhere")
    assert answer is not None and answer.status == 404
    await expect(console.page.get_by_role("heading", name="Not found")).to_be_visible()
    answer = await console.page.goto(f"{console_url}/bookings/TB-NOSUCH99")
    assert answer is not None and answer.status == 404
    await expect(console.page.get_by_text("There is no booking TB-NOSUCH99.")).to_be_visible()


async def test_sign_in_goes_back_to_the_page_asked_for_and_never_elsewhere(
    new_context: NewContext, make_operator: MakeOperator, console_url: str
) -> None:
    operator = await make_operator("support")
    page = await (await new_context()).new_page()
    await page.goto(f"{console_url}/audit")
    await page.get_by_label("Email").fill(operator.email)
    await page.get_by_label("Password").fill(operator.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    page = await (await new_context()).new_page()
    await page.goto(f"{console_url}/login?next=https://evil.example/x")
    await page.get_by_label("Email").fill(operator.email)
    await page.get_by_label("Password").fill(operator.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(f"{console_url}/")


async def test_a_database_that_cannot_be_reached_gets_a_page_not_a_traceback(
    workdir: Path, clock: ShiftedClock
) -> None:
    from tests.conftest import make_settings
    from transfers.app import create_app

    settings = make_settings("postgresql://postgres@127.0.0.1:1/nowhere", workdir)
    app = create_app(settings, clock=clock, configure_logs=False)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://console.test", cookies={"transfers_console": "some-token"}
    ) as client:
        answer = await client.get("/console/bookings")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
    assert "The database cannot be reached just now" in answer.text and "Traceback" not in answer.text
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    await app.state.services.db.dispose()
