"""The partner portal (docs/rules/hosted-partners.md) in a real browser: a partner user signs in, sees a new
booking, accepts it with a driver (the client's GET shows APPROVED with that driver), declines
another (refunded), cancels an accepted one (the rate card form: test_portal_rate_card.py), and
never sees or changes another partner's booking, by URL or by a forged POST; operators and partner
users each stay in their own area."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect
from sqlalchemy import select

from tests.api.test_booking_lifecycle import balance_of
from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, ledger_of, row_of, search_body
from tests.hosted.conftest import HostedFactory
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, booking_transitions
from transfers.hosted.users import create_partner_user

NewContext = Callable[[], Awaitable[BrowserContext]]
PASSWORD = "correct horse battery staple"
SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
_numbers = itertools.count(1)
GLASGOW = {"type": "POINT", "lat": 55.8642, "lng": -4.2518, "name": "George Square, Glasgow"}  # 11 km from GLA


@pytest.fixture(scope="session")
def portal_url(service: LiveServer) -> str:
    return f"{service.url}/partner"


class Portal:
    def __init__(self, page: Page, email: str) -> None:
        self.page = page
        self.email = email


@pytest.fixture
def portal_as(new_context: NewContext, db: Database, clock: ShiftedClock, portal_url: str) -> Any:
    async def open_as(partner_id: int) -> Portal:
        email = f"staff{next(_numbers)}-{os.getpid()}@partner-{partner_id}.example"
        await create_partner_user(db, clock, partner_id=partner_id, email=email, password=PASSWORD, actor="tests")
        page = await (await new_context()).new_page()
        await page.goto(f"{portal_url}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{portal_url}/new")
        return Portal(page, email)

    return open_as


async def book(
    http: httpx.AsyncClient,
    key: str,
    iata: str,
    company: str,
    *,
    point: dict[str, Any] | None = None,
    surname: str = "Lovelace",
) -> dict[str, Any]:
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": iata}, dropoff_location=point or GLASGOW)
    found = (await http.post(SEARCH, json=body, headers=bearer(key))).json()
    vehicle = next(v for v in found["vehicles"] if v["company"] == company)
    passenger = {"name": "Ada", "surname": surname, "phone": "+447911123456", "email": "ada@example.com"}
    answer = await http.post(
        BOOKING, json=booking_body(found["search_id"], vehicle["vehicle_id"], passenger=passenger), headers=bearer(key)
    )
    assert answer.status_code == 200, answer.text
    booking: dict[str, Any] = answer.json()["booking"]
    assert booking["status"] == "PENDING_APPROVAL"
    return booking


async def client_view(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    answer = await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    return dict(answer.json())


async def test_a_partner_user_accepts_a_new_booking_with_a_driver(
    http: httpx.AsyncClient,
    portal_as: Any,
    portal_url: str,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Glasgow Cabs")
    booking = await book(http, key, "GLA", "Glasgow Cabs")
    no = booking["reservation_no"]
    portal = await portal_as(partner_id)
    page = portal.page
    for name in ("New", "Upcoming", "Past"):
        await expect(
            page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)
        ).to_be_visible()
    await page.get_by_role("link", name=no).click()
    await expect(page).to_have_url(f"{portal_url}/bookings/{no}")
    await expect(page.get_by_role("heading", name=f"Booking {no}")).to_be_visible()
    await page.get_by_label("Driver name").fill("Morag Campbell")
    await page.get_by_label("Driver phone").fill("+447400900123")
    await page.get_by_label("Plate").fill("SK21 ABC")
    await page.get_by_label("Meeting point").fill("Arrivals hall, by the WHSmith")
    await page.get_by_role("button", name="Accept").click()
    await expect(page.get_by_role("status")).to_contain_text("Accepted")
    seen = await client_view(http, key, no)
    assert seen["status"] == "APPROVED"
    assert seen["driver"] == {"name": "Morag Campbell", "phone": "+447400900123", "plate": "SK21 ABC"}
    assert seen["meeting_point"] == "Arrivals hall, by the WHSmith"
    # recorded and audited with the partner user
    row = await row_of(db, no)
    async with db.read() as conn:
        actors = (
            await conn.execute(
                select(booking_transitions.c.actor).where(
                    booking_transitions.c.booking_id == row["id"], booking_transitions.c.to_status == "APPROVED"
                )
            )
        ).scalars()
        audit = (
            await conn.execute(
                select(admin_audit.c.actor, admin_audit.c.action).where(admin_audit.c.subject == f"booking:{no}")
            )
        ).all()
    assert [portal.email in actor for actor in actors] == [True]
    assert [(portal.email in a, action) for a, action in audit] == [(True, "portal.booking.approved")]
    await page.get_by_role("link", name="Upcoming", exact=True).click()
    await expect(page.get_by_role("link", name=no)).to_be_visible()
    await page.get_by_role("link", name="New", exact=True).click()
    await expect(page.get_by_role("link", name=no)).to_have_count(0)


async def test_decline_refunds_and_cancel_of_an_accepted_booking(
    http: httpx.AsyncClient,
    portal_as: Any,
    portal_url: str,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="500.00")
    partner_id = await make_hosted(airports=("ABZ",), name="Aberdeen Cars")
    aberdeen = {"type": "POINT", "lat": 57.1497, "lng": -2.0943, "name": "Union Street, Aberdeen"}
    first = await book(http, key, "ABZ", "Aberdeen Cars", point=aberdeen, surname="Declined")
    second = await book(http, key, "ABZ", "Aberdeen Cars", point=aberdeen, surname="Cancelled")
    portal = await portal_as(partner_id)
    page = portal.page
    await page.goto(f"{portal_url}/bookings/{first['reservation_no']}")
    token = await page.locator("input[name=csrf_token]").first.input_value()
    # the browser asks for a reason; the server checks it anyway (docs/rules/booking.md#text: no bidi override)
    for reason in ("", "   ", "x" * 1001, "No driver\u202e free"):
        refused = await page.request.post(
            f"{portal_url}/bookings/{first['reservation_no']}/decline", form={"csrf_token": token, "reason": reason}
        )
        assert refused.status == 422
    assert (await row_of(db, first["reservation_no"]))["status"] == "PENDING_APPROVAL"
    await page.get_by_label("Reason").fill("No driver free that night")
    await page.get_by_role("button", name="Decline").click()
    await expect(page.get_by_role("status")).to_contain_text("Declined")
    seen = await client_view(http, key, first["reservation_no"])
    assert seen["status"] == "DECLINED"
    total = Decimal(first["price"]["total"])
    assert await ledger_of(db, first["reservation_no"]) == [("debit_booking", -total), ("credit_refund", total)]

    await page.goto(f"{portal_url}/bookings/{second['reservation_no']}")
    await page.get_by_label("Driver name").fill("Iain")
    await page.get_by_label("Driver phone").fill("+447400900456")
    await page.get_by_label("Plate").fill("SV70 XYZ")
    await page.get_by_role("button", name="Accept").click()
    await expect(page.get_by_role("status")).to_contain_text("Accepted")
    await page.get_by_label("Reason").fill("Vehicle broke down")
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.get_by_role("status")).to_contain_text("Cancelled")
    assert (await client_view(http, key, second["reservation_no"]))["status"] == "CANCELLED"
    assert await balance_of(db, client_id) == Decimal("500.00")  # both refunded in full


async def test_another_partners_booking_is_not_found_by_url_or_forged_post(
    http: httpx.AsyncClient,
    portal_as: Any,
    portal_url: str,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    _, key = await make_client()
    mine = await make_hosted(airports=("DND",), name="Dundee Cars")
    theirs = await make_hosted(airports=("PIK",), name="Prestwick Cars")
    other = await book(
        http, key, "PIK", "Prestwick Cars", point={"type": "POINT", "lat": 55.4586, "lng": -4.6292, "name": "Ayr"}
    )
    no = other["reservation_no"]
    page = (await portal_as(mine)).page
    answer = await page.goto(f"{portal_url}/bookings/{no}")
    assert answer is not None and answer.status == 404
    await expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    missing = await page.goto(f"{portal_url}/bookings/TB-NOSUCH000")
    assert missing is not None and missing.status == 404
    await page.goto(f"{portal_url}/new")
    token = await page.locator("input[name=csrf_token]").first.input_value()
    for action, form in (
        ("accept", {"driver_name": "X", "driver_phone": "+447400900999", "plate": "AB1"}),
        ("decline", {"reason": "forged"}),
        ("cancel", {"reason": "forged"}),
    ):
        forged = await page.request.post(f"{portal_url}/bookings/{no}/{action}", form={"csrf_token": token, **form})
        assert forged.status == 404, action
        assert "Not found" in await forged.text()
    assert (await row_of(db, no))["status"] == "PENDING_APPROVAL"
    # and the other partner's own user sees it (the booking is real)
    their_page = (await portal_as(theirs)).page
    await expect(their_page.get_by_role("link", name=no)).to_be_visible()
    # a form without the session's token is refused (403) for one's own bookings too
    refused = await their_page.request.post(
        f"{portal_url}/bookings/{no}/decline", form={"csrf_token": "forged", "reason": "x"}
    )
    assert refused.status == 403
    assert (await row_of(db, no))["status"] == "PENDING_APPROVAL"


async def test_operators_and_partner_users_stay_in_their_own_area(
    console_as: ConsoleAs,
    portal_as: Any,
    portal_url: str,
    service: LiveServer,
    make_hosted: HostedFactory,
) -> None:
    console = await console_as("admin")
    operator_cookie = next(c for c in await console.context.cookies() if c["name"] == "transfers_console")
    partner_id = await make_hosted(airports=("SCS",), name="Shetland Cabs")
    portal = await portal_as(partner_id)
    partner_cookie = next(c for c in await portal.page.context.cookies() if c["name"] == "transfers_partner")
    assert partner_cookie["httpOnly"] and partner_cookie["sameSite"] == "Lax" and partner_cookie["path"] == "/partner"

    async def get(path: str, cookie: str, value: str) -> httpx.Response:
        async with httpx.AsyncClient(base_url=service.url, cookies={cookie: value}) as anyone:
            return await anyone.get(path)

    # an operator's session token presented to the portal (under either cookie name) opens nothing
    for name in ("transfers_partner", "transfers_console"):
        answer = await get("/partner/new", name, operator_cookie["value"])
        assert answer.status_code == 303 and answer.headers["location"].startswith("/partner/login")
    # and a partner user's session token opens nothing in the console
    for name in ("transfers_console", "transfers_partner"):
        answer = await get("/console/bookings", name, partner_cookie["value"])
        assert answer.status_code == 303 and answer.headers["location"].startswith("/console/login")
    framed = await get("/partner/login", "x", "y")
    assert "frame-ancestors 'none'" in framed.headers["content-security-policy"]
    # an operator's e-mail and password do not sign in to the portal
    page = portal.page
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_text("You are signed out.")).to_be_visible()
    await page.get_by_label("Email").fill(console.operator.email)
    await page.get_by_label("Password").fill(console.operator.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")


async def test_a_server_partner_sees_its_bookings_read_only_its_health_and_rotates_its_secret(
    http: httpx.AsyncClient,
    portal_as: Any,
    portal_url: str,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    _, key = await make_client()
    _, partner_id, _ = await make_partner(airports=("LSI",), name="Sumburgh Server Cars", create_status="PENDING")
    booking = await book(
        http,
        key,
        "LSI",
        "Sumburgh Server Cars",
        point={"type": "POINT", "lat": 60.1550, "lng": -1.1450, "name": "Lerwick"},
    )
    page = (await portal_as(partner_id)).page
    await expect(page.get_by_role("link", name="Rate card")).to_have_count(0)
    await page.get_by_role("link", name=booking["reservation_no"]).click()
    await expect(page.get_by_text("Read-only")).to_be_visible()
    await expect(page.get_by_role("button", name="Accept")).to_have_count(0)
    token = await page.locator("input[name=csrf_token]").first.input_value()
    refused = await page.request.post(
        f"{portal_url}/bookings/{booking['reservation_no']}/accept",
        form={"csrf_token": token, "driver_name": "X", "driver_phone": "+447400900999", "plate": "AB1"},
    )
    assert refused.status == 403
    assert (await page.request.get(f"{portal_url}/rate-card")).status == 403
    await page.get_by_role("link", name="Account").click()
    await expect(page.get_by_role("heading", name="Health over the last hour")).to_be_visible()
    await page.get_by_role("button", name="Rotate signing secret").click()
    secret = await page.locator("#new-secret").inner_text()
    assert secret.startswith("whsec_")


async def test_bad_accept_input_is_refused_field_by_field_and_changes_nothing(
    http: httpx.AsyncClient,
    portal_as: Any,
    portal_url: str,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("BFS",), name="Belfast Cabs")
    booking = await book(
        http,
        key,
        "BFS",
        "Belfast Cabs",
        point={"type": "POINT", "lat": 54.5973, "lng": -5.9301, "name": "Belfast City Hall"},
    )
    no = booking["reservation_no"]
    page = (await portal_as(partner_id)).page
    await page.goto(f"{portal_url}/bookings/{no}")
    token = await page.locator("input[name=csrf_token]").first.input_value()
    good = {"driver_name": "Seán Ó Briain", "driver_phone": "+447400900123", "plate": "AXZ 1234"}
    for field, value in (
        ("driver_name", ""),
        ("driver_name", "x" * 201),
        ("driver_phone", "1"),
        ("driver_phone", "9" * 33),
        ("driver_phone", "call me"),
        ("driver_phone", "07400 CALLME"),
        ("driver_phone", "0740"),
        ("plate", "   "),
        ("plate", "\x00"),
        # docs/rules/booking.md#text: the reverse API's own rule, in the portal's form
        ("driver_name", "Se\u00e1n\u202e"),
        ("driver_phone", "+447700900123\x1b"),
        ("plate", "AXZ\u20661234"),
        ("meeting_point", "Arrivals\u202ehall"),
    ):
        # (the console's form reader drops NUL characters, so a plate of only NUL is an empty plate)
        body = urlencode({"csrf_token": token, **good, field: value})
        answer = await page.request.post(
            f"{portal_url}/bookings/{no}/accept",
            data=body,
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert answer.status == 422, (field, value)
        if field == "driver_phone" and 1 < len(value) <= 32:  # the reason beside the field (rules/partners.md)
            error = (await answer.text()).split('id="driver_phone-error">')[1].split("</span>")[0]
            assert "phone number" in error, (value, error)
    long_meeting = await page.request.post(
        f"{portal_url}/bookings/{no}/accept", form={"csrf_token": token, **good, "meeting_point": "m" * 1001}
    )
    assert long_meeting.status == 422
    assert (await row_of(db, no))["status"] == "PENDING_APPROVAL"
    # unicode is fine; the phone typed as the placeholder shows it (Belfast: dialled in the United Kingdom)
    await page.get_by_label("Driver name").fill(good["driver_name"])
    placeholder = await page.get_by_label("Driver phone").get_attribute("placeholder")
    assert placeholder == "07400 123456"
    await page.get_by_label("Driver phone").fill(placeholder)
    await page.get_by_label("Plate").fill(good["plate"])
    await page.get_by_role("button", name="Accept").click()
    await expect(page.get_by_role("status")).to_contain_text("Accepted")
    assert (await client_view(http, key, no))["driver"]["name"] == "Seán Ó Briain"
    assert (await client_view(http, key, no))["driver"]["phone"] == "+447400123456"
    # accepting again (a second tab, a double click) changes nothing: the booking is no longer new
    again = await page.request.post(
        f"{portal_url}/bookings/{no}/accept", form={"csrf_token": token, **good, "driver_name": "Someone Else"}
    )
    assert again.status == 409
    assert (await client_view(http, key, no))["driver"]["name"] == "Seán Ó Briain"


async def test_a_disabled_partner_user_is_signed_out_at_once(
    portal_as: Any,
    portal_url: str,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    from transfers.hosted import repository as hosted_repo
    from transfers.hosted.users import set_user_status

    partner_id = await make_hosted(airports=("ORK",), name="Cork Cabs")
    portal = await portal_as(partner_id)
    async with db.read() as conn:
        user = await hosted_repo.partner_user_by_email(conn, portal.email)
    assert user is not None
    assert await set_user_status(db, clock, partner_id=partner_id, user_id=user.id, status="disabled", actor="tests")
    await portal.page.goto(f"{portal_url}/new")
    await expect(portal.page).to_have_url(re.compile(r"/partner/login\?next="))


async def test_operators_manage_portal_users_in_the_console(
    console_as: ConsoleAs,
    console_url: str,
    portal_url: str,
    make_hosted: HostedFactory,
    new_context: NewContext,
) -> None:
    partner_id = await make_hosted(airports=("NQY",), name="Newquay Cabs")
    admin = (await console_as("admin")).page
    await admin.goto(f"{console_url}/partners/{partner_id}")
    await admin.get_by_role("link", name="Portal users").click()
    email = f"desk-{os.getpid()}-{next(_numbers)}@newquay-cabs.example"
    await admin.get_by_label("Email").fill(email)
    await admin.get_by_role("button", name="New portal user").click()
    password = await admin.locator("#new-password").inner_text()
    assert len(password) >= 20
    await admin.get_by_label("Email").fill(email)
    await admin.get_by_role("button", name="New portal user").click()
    await expect(admin.get_by_role("alert")).to_contain_text("already has an account")

    partner_page = await (await new_context()).new_page()
    await partner_page.goto(f"{portal_url}/login")
    await partner_page.get_by_label("Email").fill(email)
    await partner_page.get_by_label("Password").fill(password)
    await partner_page.get_by_role("button", name="Sign in").click()
    await expect(partner_page.get_by_role("heading", name="New bookings")).to_be_visible()

    await admin.goto(f"{console_url}/partners/{partner_id}/users")
    await admin.get_by_role("button", name=f"Disable {email}").click()
    await expect(admin.get_by_role("status")).to_contain_text("disabled")
    await partner_page.goto(f"{portal_url}/new")  # signed out at once
    await expect(partner_page).to_have_url(re.compile(r"/partner/login"))

    support = (await console_as("support")).page  # reads, may not manage
    await support.goto(f"{console_url}/partners/{partner_id}/users")
    await expect(support.get_by_text(email)).to_be_visible()
    await expect(support.get_by_role("button", name="New portal user")).to_have_count(0)
    token = await support.locator("input[name=csrf_token]").first.input_value()
    refused = await support.request.post(
        f"{console_url}/partners/{partner_id}/users", form={"csrf_token": token, "email": "sneaky@newquay-cabs.example"}
    )
    assert refused.status == 403
