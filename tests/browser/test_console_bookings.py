"""The console's Bookings pages in a real browser (docs/rules/console.md): a
booking found by surname and cancelled from its page (wallet refunded, the partner told through the
outbox), a COMPLETED booking refunded, a support operator who neither sees nor may post admin
actions, the audit log listing it all, and bad input that changes nothing and never answers 500."""

from __future__ import annotations

import random
import re
import string
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from playwright.async_api import Page, expect
from sqlalchemy import func, select

from tests.api.test_booking_lifecycle import balance_of, search, svc_of
from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, ledger_of, row_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, booking_transitions, bookings, outbox
from transfers.deliveries import Dispatcher
from transfers.jobs import scheduled

BOOKING = "/api/v1/booking-api/booking"
DRIVER = {"name": "Jo Driver", "phone": "+33612345679", "plate": "AB-123-CD"}


def surname() -> str:
    return "Quill" + "".join(random.choices(string.ascii_lowercase, k=8))


async def book(http: httpx.AsyncClient, key: str, iata: str, last_name: str, email: str | None = None) -> str:
    found = await search(http, key, iata)
    passenger = {
        "name": "Ada",
        "surname": last_name,
        "phone": "+447911123456",
        "email": email or f"{last_name.lower()}@example.com",
    }
    answer = await http.post(BOOKING, json=booking_body(found["search_id"], passenger=passenger), headers=bearer(key))
    assert answer.status_code == 200, answer.text
    number: str = answer.json()["booking"]["reservation_no"]
    return number


async def audit_rows(db: Database, subject: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(admin_audit).where(admin_audit.c.subject == subject).order_by(admin_audit.c.id)
        )
        return [dict(r._mapping) for r in rows]


async def csrf_of(page: Page) -> str:
    return await page.locator("input[name=csrf_token]").first.input_value()


async def test_a_booking_found_by_surname_is_cancelled_from_its_page(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    client_id, key = await make_client(balance="300.00")
    partner, _, _ = await make_partner(
        airports=("VCE",), create_status="APPROVED", driver=DRIVER, create_message="<b>Confirmed</b> & see you"
    )
    name = surname()
    number = await book(http, key, "VCE", name)
    await book(http, key, "VCE", surname())  # another booking the search must leave out
    assert await balance_of(db, client_id) == Decimal("220.00")

    console = await console_as("support")  # support may cancel
    page = console.page
    await shoot(page, "dashboard")
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Bookings").click()
    await page.get_by_label("Search bookings").fill(name[:9].upper())  # the surname's beginning, any case
    await page.get_by_role("button", name="Search").click()
    rows = page.locator("table.list tbody tr")
    await expect(rows).to_have_count(1)
    await rows.get_by_role("link", name=number).click()
    await expect(page.get_by_role("heading", name=re.compile(f"Booking {number}"))).to_be_visible()
    await expect(page.get_by_text("Pickup (airport time)")).to_be_visible()
    pickup_utc = page.locator("tr", has=page.get_by_role("rowheader", name="Pickup (UTC)", exact=True)).locator("td")
    pickup_local = page.locator("tr", has=page.get_by_role("rowheader", name="Pickup (airport time)")).locator("td")
    await expect(pickup_utc).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))
    await expect(pickup_local).to_have_text(
        re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d VCE local \(Europe/Rome, \+0[12]:00\)$")
    )
    await expect(page.get_by_role("cell", name="Jo Driver", exact=True)).to_be_visible()
    await expect(page.get_by_role("button", name="Refund")).to_have_count(0)  # support never sees it
    # the create's attempt: its HTTP status and the answer's excerpt, shown as text (escaped, never markup)
    attempt = page.locator("table.delivery", has_text="booking.create").locator("tbody tr")
    await expect(attempt).to_have_count(1)
    await expect(attempt.locator("td").nth(4)).to_have_text("200")
    answer = attempt.locator("pre.answer")
    await expect(answer).to_contain_text('"meeting_point":"Arrivals, by the pharmacy"')
    await expect(answer).to_contain_text('"message":"<b>Confirmed</b> & see you"')
    await expect(answer.locator("b")).to_have_count(0)
    await shoot(page, "booking")

    await page.get_by_label("Reason").fill("   ")  # only blanks: refused beside the field (the browser's
    await page.get_by_role("button", name="Cancel booking").click()  # "required" lets blanks through)
    await expect(page.locator(".field-error")).to_have_text("Give a reason.")
    await expect(page.get_by_role("alert")).to_contain_text("Give a reason.")
    assert (await row_of(db, number))["status"] == "APPROVED"

    await page.get_by_label("Reason").fill("Traveller called: flight cancelled")
    await page.get_by_role("button", name="Cancel booking").click()
    await expect(page.get_by_role("status")).to_contain_text("The booking is cancelled")
    await expect(page.get_by_role("heading", name=re.compile("CANCELLED"))).to_be_visible()
    await expect(page.get_by_role("cell", name=f"operator:{console.operator.email}")).to_be_visible()
    # docs/rules/cancellation.md: an operator's cancellation refunds in full and says so
    cancellation = page.locator("tr", has=page.get_by_role("rowheader", name="Cancellation", exact=True))
    await expect(cancellation.locator("td")).to_have_text(
        re.compile(r"^by operator, \d{4}-\d\d-\d\d \d\d:\d\d UTC: fee €0\.00, refund €40\.00$")
    )
    policy = page.locator("tr", has=page.get_by_role("rowheader", name="Cancellation policy"))
    await expect(policy.locator("td")).to_have_text("free until pickup")
    # the story to the second, and the ledger kinds by the wallet API's names
    story = page.locator("#h-story + table tbody tr")
    await expect(story.first.locator("td").first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    kinds = page.locator("#h-ledger + table tbody tr td:nth-child(2)")
    await expect(kinds).to_have_text(["debit", "refund"])

    row = await row_of(db, number)
    assert row["status"] == "CANCELLED" and row["cancel_note"] == "Traveller called: flight cancelled"
    assert await balance_of(db, client_id) == Decimal("260.00")
    assert await ledger_of(db, number) == [("debit_booking", Decimal("-40.00")), ("credit_refund", Decimal("40.00"))]
    async with db.read() as conn:
        actor, reason = (
            await conn.execute(
                select(booking_transitions.c.actor, booking_transitions.c.reason).where(
                    booking_transitions.c.booking_id == row["id"], booking_transitions.c.to_status == "CANCELLED"
                )
            )
        ).one()
        message = (
            await conn.execute(
                select(outbox.c.kind, outbox.c.payload, outbox.c.status).where(
                    outbox.c.booking_id == row["id"], outbox.c.kind == "booking.update"
                )
            )
        ).one()
    assert actor == f"operator:{console.operator.email}" and "flight cancelled" in reason
    assert message.payload["status"] == "CANCELLED" and message.payload["reservation_no"] == number

    dispatcher = svc_of(service).dispatcher
    assert isinstance(dispatcher, Dispatcher)
    svc_of(service).clock.advance(timedelta(seconds=5))  # type: ignore[attr-defined]
    # A run takes a batch, oldest due first; the session's database can hold more than a batch of other
    # tests' messages due now, so run until this one went (bounded: 20 runs).
    for _ in range(20):
        await dispatcher.run_once()
        if partner.calls("/booking/update"):
            break
    told = partner.calls("/booking/update")
    assert len(told) == 1 and told[0].body["status"] == "CANCELLED" and told[0].signature_ok
    assert told[0].body["note"] == "Traveller called: flight cancelled"
    audited = await audit_rows(db, f"booking:{number}")
    assert [(a["action"], a["actor"]) for a in audited] == [("booking.cancel", f"operator:{console.operator.email}")]
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Audit log").click()
    await page.get_by_label("Subject").fill(f"booking:{number}")
    await page.get_by_role("button", name="Filter").click()
    entry = page.locator("table.list tbody tr")
    await expect(entry).to_have_count(1)
    await expect(entry).to_contain_text("booking.cancel")
    await expect(entry).to_contain_text("Traveller called: flight cancelled")
    await entry.get_by_role("link", name=f"booking:{number}").click()
    await expect(page.get_by_role("heading", name=re.compile(f"Booking {number}"))).to_be_visible()

    # the same form again (a double click, a replay): refused on the page, nothing moves twice
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/cancel",
        form={"csrf_token": await csrf_of(page), "reservation_no": number, "reason": "again"},
    )
    assert answer.status == 422 and "cannot be cancelled" in await answer.text()
    assert await balance_of(db, client_id) == Decimal("260.00")


async def complete_a_booking(
    http: httpx.AsyncClient, service: LiveServer, key: str, clock: ShiftedClock, iata: str
) -> str:
    number = await book(http, key, iata, surname())
    pickup = datetime.fromisoformat(
        (await http.get(BOOKING, params={"reservation_no": number}, headers=bearer(key))).json()["pickup_datetime"]
    )
    clock.advance(pickup - clock.now() + timedelta(hours=13))
    # The job completes at most a batch a run, oldest pickups first: the session's database may hold
    # more than a batch of other tests' rides from before this one, so run it as the worker would,
    # until nothing is left to complete (bounded).
    for _ in range(100):
        if not await scheduled.complete_rides(svc_of(service)):
            break
    return number


async def test_a_completed_booking_is_refunded_by_an_admin_and_the_audit_log_lists_it(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=("LIS",), create_status="APPROVED", driver=DRIVER)
    number = await complete_a_booking(http, service, key, clock, "LIS")
    assert (await row_of(db, number))["status"] == "COMPLETED"
    assert await balance_of(db, client_id) == Decimal("60.00")

    console = await console_as("admin")
    page = console.page
    await page.goto(f"{console_url}/bookings/{number}")
    await expect(page.get_by_role("button", name="Cancel booking")).to_have_count(0)  # COMPLETED: not cancellable
    await page.get_by_label("Reason").fill("Driver never showed up")
    await page.get_by_role("button", name="Refund").click()
    await expect(page.get_by_role("status")).to_contain_text("The booking is refunded.")
    assert (await row_of(db, number))["status"] == "REFUNDED"
    assert await balance_of(db, client_id) == Decimal("100.00")
    assert await ledger_of(db, number) == [("debit_booking", Decimal("-40.00")), ("credit_refund", Decimal("40.00"))]
    await expect(page.get_by_role("button", name="Refund")).to_have_count(0)

    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Audit log").click()
    entry = page.locator("table.list tbody tr", has_text=f"booking:{number}")
    await expect(entry).to_have_count(1)
    await expect(entry).to_contain_text("booking.refund")
    await expect(entry).to_contain_text(f"operator:{console.operator.email}")
    await expect(entry).to_contain_text("Driver never showed up")


async def test_support_neither_sees_nor_may_post_a_refund(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=("MAD",), create_status="APPROVED", driver=DRIVER)
    number = await complete_a_booking(http, service, key, clock, "MAD")
    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/bookings/{number}")
    await expect(page.get_by_role("button", name="Refund")).to_have_count(0)
    await expect(page.get_by_label("Reason")).to_have_count(0)
    # a forged POST with a valid session and CSRF token: the server refuses it anyway
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/refund",
        form={"csrf_token": await csrf_of(page), "reservation_no": number, "reason": "forged"},
    )
    assert answer.status == 403 and "does not allow this" in await answer.text()
    assert (await row_of(db, number))["status"] == "COMPLETED"
    assert await balance_of(db, client_id) == Decimal("60.00")
    assert await audit_rows(db, f"booking:{number}") == []


async def test_bad_input_gets_a_clear_message_changes_nothing_and_never_a_500(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=("OPO",), create_status="APPROVED", driver=DRIVER)
    number = await book(http, key, "OPO", surname())
    other = await book(http, key, "OPO", surname())
    console = await console_as("admin")
    page = console.page

    # an over-long search string: the message beside the box, what was typed kept
    long_search = "x" * 5000
    answer = await page.goto(f"{console_url}/bookings?q={long_search}")
    assert answer is not None and answer.status == 400
    await expect(page.get_by_text("Search is limited to 200 characters").first).to_be_visible()
    for query in (
        "status=NOPE",
        "client=-1",
        "client=abc",
        "partner=1e9",
        "pickup_from=2026-13-45",
        "cursor=%00%ff",
        "q=%F0%9F%9A%95%20%27%3B--",
        "q=%25",
        "q=_",
        "q=%00",
        "q=ab%00cd",
        "q=TB-%00",
        "q=a%40%00",
    ):
        answer = await page.goto(f"{console_url}/bookings?{query}")
        assert answer is not None and answer.status in (200, 400), query
    await expect(page.get_by_role("heading", name="Bookings")).to_be_visible()

    # a tampered booking number in a form: refused, nothing changed
    await page.goto(f"{console_url}/bookings/{number}")
    token = await csrf_of(page)
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/cancel",
        form={"csrf_token": token, "reservation_no": other, "reason": "tampered"},
    )
    assert answer.status == 400 and "does not belong to this booking" in await answer.text()
    for target in ("TB-DOESNOTEXIST", "TB-" + "Z" * 300, "%00", "..%2F..%2Fetc"):
        answer = await page.request.post(
            f"{console_url}/bookings/{target}/cancel",
            form={"csrf_token": token, "reservation_no": target, "reason": "x"},
        )
        assert answer.status in (404, 400), (target, answer.status)
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/cancel",
        form={"csrf_token": token, "reservation_no": number, "reason": "\x00 \x00"},
    )
    assert answer.status == 422 and "Give a reason." in await answer.text()
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/cancel",
        form={"csrf_token": token, "reservation_no": number, "reason": "r" * 1001},
    )
    assert answer.status == 422 and "at most 1000 characters" in await answer.text()
    assert (await row_of(db, number))["status"] == "APPROVED" and (await row_of(db, other))["status"] == "APPROVED"

    # a form replayed after sign-out: sent to sign in again, with nothing done
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_text("You are signed out.")).to_be_visible()
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/cancel",
        form={"csrf_token": token, "reservation_no": number, "reason": "replayed"},
    )
    assert answer.status == 200 and "Your session has ended, so nothing was done." in await answer.text()
    assert (await row_of(db, number))["status"] == "APPROVED"
    assert await balance_of(db, client_id) == Decimal("20.00")
    async with db.read() as conn:
        cancelled = (
            await conn.execute(
                select(func.count())
                .select_from(bookings)
                .where(bookings.c.reservation_no.in_([number, other]), bookings.c.status == "CANCELLED")
            )
        ).scalar_one()
    assert cancelled == 0


async def test_the_list_pages_newest_first_and_filters(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance="5000.00")
    _, partner_id, _ = await make_partner(airports=("BCN",))
    made = []
    for _ in range(3):
        made.append(await book(http, key, "BCN", surname(), email=None))
        clock.advance(timedelta(seconds=1))
    page = (await console_as("support")).page
    await page.goto(f"{console_url}/bookings?client={client_id}&partner={partner_id}")
    numbers = await page.locator("table.list tbody tr td:first-child").all_inner_texts()
    assert numbers == list(reversed(made))
    await page.goto(f"{console_url}/bookings?q={made[0].lower()}")
    assert await page.locator("table.list tbody tr td:first-child").all_inner_texts() == [made[0]]
    await page.goto(f"{console_url}/bookings?status=CANCELLED&client={client_id}")
    await expect(page.get_by_text("No bookings match.")).to_be_visible()


async def test_sync_with_partner_applies_what_the_partner_says(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
) -> None:
    _, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("FAO",), create_status="PENDING", info_status="APPROVED")
    number = await book(http, key, "FAO", surname())
    assert (await row_of(db, number))["status"] == "PENDING_APPROVAL"
    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/bookings/{number}")
    await page.get_by_role("button", name="Sync with partner").click()
    await expect(page.get_by_role("status")).to_have_text(
        "The partner says APPROVED; the booking is PENDING_APPROVAL → APPROVED."
    )
    assert len(partner.calls(f"/booking/info/{number}")) == 1
    row = await row_of(db, number)
    assert row["status"] == "APPROVED" and row["driver_name"] == "Sam Driver"
    await expect(page.get_by_role("cell", name="Sam Driver")).to_be_visible()
    partner.mode, partner.status_code = "status", 503
    await page.get_by_role("button", name="Sync with partner").click()
    await expect(page.get_by_role("alert")).to_contain_text("Sync with partner: the partner did not answer usefully")
    assert (await row_of(db, number))["status"] == "APPROVED"
    actions = [(a["action"], a["details"]["after"]) for a in await audit_rows(db, f"booking:{number}")]
    assert actions == [("booking.sync", "APPROVED"), ("booking.sync", None)]
