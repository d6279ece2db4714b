"""The console's ``Clients`` and ``Deliveries`` pages in a real browser (docs/rules/console.md): a client created
(key shown once) and topped up, bad amounts refused beside the field with the typed value kept and
nothing changed, keys and suspension, a failed delivery retried by a support operator, and a
support operator who neither sees nor can post the admin actions (forged POSTs refused)."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal
from typing import Any

import httpx
from playwright.async_api import Page, expect
from sqlalchemy import func, select

from tests.api.test_booking_lifecycle import svc_of
from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, bookings, clients, ledger_entries, outbox, wallets

REASONS = "/api/v1/booking-api/cancellation-reasons"


async def wallet_of(db: Database, client_id: int) -> tuple[Decimal, int]:
    """(balance, ledger entries) of the client's wallet."""
    async with db.read() as conn:
        wallet_id, balance = (
            await conn.execute(select(wallets.c.id, wallets.c.balance).where(wallets.c.client_id == client_id))
        ).one()
        entries = (
            await conn.execute(
                select(func.count()).select_from(ledger_entries).where(ledger_entries.c.wallet_id == wallet_id)
            )
        ).scalar_one()
    return Decimal(balance), int(entries)


async def audit_by(db: Database, actor: str) -> list[tuple[str, str]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(admin_audit.c.action, admin_audit.c.subject)
            .where(admin_audit.c.actor == actor)
            .order_by(admin_audit.c.id)
            # signing in and out is audited too (i13-console); not the actions here
            .where(~admin_audit.c.action.startswith("operator.sign_"))
        )
        return [(r.action, r.subject) for r in rows]


async def answered(http: httpx.AsyncClient, key: str, status: int) -> bool:
    """The key gets ``status`` within 3 s (verified keys are cached per process for 1 s)."""
    for _ in range(30):
        if (await http.get(REASONS, headers=bearer(key))).status_code == status:
            return True
        await asyncio.sleep(0.1)
    return False


def actor_of(console: Any) -> str:
    return f"operator:{console.operator.email}"


async def csrf_of(page: Page) -> str:
    return await page.locator("input[name=csrf_token]").first.input_value()


async def test_a_client_is_created_topped_up_and_bad_amounts_change_nothing(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    db: Database,
) -> None:
    console = await console_as("admin")
    page = console.page
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Clients").click()
    await page.get_by_role("link", name="New client").click()
    await page.get_by_label("Name").fill("Console Travel Ltd")
    await page.get_by_role("button", name="New client").click()
    await expect(page.get_by_role("heading", name=re.compile(r"Client \d+ Console Travel Ltd created"))).to_be_visible()
    api_key = (await page.locator("#api-key").text_content() or "").strip()
    assert api_key.startswith("tk_")
    async with httpx.AsyncClient(base_url=service.url) as http:  # the key works at once
        assert (await http.get(REASONS, headers=bearer(api_key))).status_code == 200
    await page.get_by_role("link", name="Go to the client's page").click()
    client_id = int(re.search(r"/clients/(\d+)", page.url).group(1))  # type: ignore[union-attr]
    assert api_key not in await page.content()  # shown once: never on the client's page

    amount = page.get_by_label("Amount")
    for typed, message in (
        ("-5.00", "cannot be negative"),
        ("10.005", "at most two decimals"),
        ("ten", "in digits"),
        ("0", "more than 0.00"),
    ):
        await amount.fill(typed)
        await page.get_by_role("button", name="Top up").click()
        await expect(page.locator(".field-error")).to_contain_text(message)
        await expect(page.get_by_label("Amount")).to_have_value(typed)  # what was typed is kept
        await expect(page.locator("#balance")).to_have_text("€0.00")
        assert await wallet_of(db, client_id) == (Decimal("0.00"), 0)  # nothing changed
    await page.get_by_label("Amount").fill("50.00")
    await page.get_by_role("button", name="Top up").click()
    await expect(page.get_by_role("status")).to_have_text("The wallet is topped up.")
    await expect(page.locator("#balance")).to_have_text("€50.00")
    statement = page.locator("#statement + table tbody tr").first
    await expect(statement).to_contain_text("top_up")
    await expect(statement).to_contain_text("50.00")
    assert await wallet_of(db, client_id) == (Decimal("50.00"), 1)
    assert ("wallet.top_up", f"client:{client_id}") in await audit_by(db, actor_of(console))

    # another key (shown once), the first revoked: it gets 401, the new one works
    await page.get_by_role("button", name="Create key").click()
    second = (await page.locator("#api-key").text_content() or "").strip()
    await page.get_by_role("link", name="Go to the client's page").click()
    first_prefix = "_".join(api_key.split("_")[:2])
    await page.get_by_role("button", name=f"Revoke {first_prefix}").click()
    await expect(page.get_by_role("status")).to_contain_text("The key is revoked")
    async with httpx.AsyncClient(base_url=service.url) as http:
        assert (await http.get(REASONS, headers=bearer(api_key))).status_code == 401
        assert (await http.get(REASONS, headers=bearer(second))).status_code == 200
        await page.get_by_role("button", name="Suspend").click()
        await expect(page.get_by_role("status")).to_contain_text("suspended")
        # within TRANSFERS_AUTH_CACHE_SECONDS (1 s) the key is refused
        assert await answered(http, second, 403)
        await page.get_by_role("button", name="Activate").click()
        assert await answered(http, second, 200)
    assert [a for a, _ in await audit_by(db, actor_of(console))] == [
        "client.create",
        "wallet.top_up",
        "key.issue",
        "key.revoke",
        "client.suspended",
        "client.active",
    ]


async def test_new_client_form_keeps_what_was_typed_and_creates_nothing_on_bad_input(
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
) -> None:
    console = await console_as("admin")
    page = console.page
    async with db.read() as conn:
        before = (await conn.execute(select(func.count()).select_from(clients))).scalar_one()
    await page.goto(f"{console_url}/clients/new")
    await page.get_by_label("Name").fill("Ünïcode Travel 旅行")
    await page.get_by_label("Currency").fill("euro")
    await page.get_by_label("Opening balance").fill("-1")
    await page.get_by_role("button", name="New client").click()
    await expect(page.locator(".error-summary")).to_contain_text("three-letter ISO 4217")
    await expect(page.locator(".error-summary")).to_contain_text("cannot be negative")
    await expect(page.get_by_label("Name")).to_have_value("Ünïcode Travel 旅行")
    await expect(page.get_by_label("Opening balance")).to_have_value("-1")
    async with db.read() as conn:
        assert (await conn.execute(select(func.count()).select_from(clients))).scalar_one() == before
    # a forged pay type or a huge name: refused the same way, never a 500
    token = await csrf_of(page)
    for form in (
        {"name": "x" * 5000, "pay_type": "wallet", "currency": "EUR", "balance": "0"},
        {"name": "Forged", "pay_type": "cash", "currency": "EUR", "balance": "0"},
        {"name": "Forged", "pay_type": "wallet", "currency": "EUR", "balance": "1e9"},
    ):
        answer = await page.request.post(f"{console_url}/clients", form={"csrf_token": token, **form})
        assert answer.status == 422
    async with db.read() as conn:
        assert (await conn.execute(select(func.count()).select_from(clients))).scalar_one() == before


async def test_a_failed_delivery_is_retried_by_support(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner(airports=("LPL",))
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        found = await http.post(
            "/api/v1/booking-api/search",
            headers=bearer(key),
            json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "LPL"}),
        )
        booked = await http.post(
            "/api/v1/booking-api/booking", json=booking_body(found.json()["search_id"]), headers=bearer(key)
        )
        reservation_no = booked.json()["booking"]["reservation_no"]
        partner.mode, partner.status_code = "status", 400  # the partner refuses the cancellation notice for good
        cancelled = await http.delete(
            "/api/v1/booking-api/booking",
            headers=bearer(key),
            params={"reservation_no": reservation_no, "cancellation_id": 1},
        )
        assert cancelled.status_code == 200
    dispatcher = svc_of(service).dispatcher
    assert dispatcher is not None
    await dispatcher.run_once()
    async with db.read() as conn:
        ((message_id, status),) = (
            await conn.execute(
                select(outbox.c.id, outbox.c.status)
                .join(bookings, bookings.c.id == outbox.c.booking_id)
                .where(bookings.c.reservation_no == reservation_no, outbox.c.kind == "booking.update")
            )
        ).all()
    assert status == "failed"

    console = await console_as("support")
    page = console.page
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Deliveries").click()
    row = page.locator("table[aria-labelledby='h-failed']").get_by_role("row").filter(has_text=reservation_no)
    await expect(row).to_contain_text("failed")
    await expect(row.get_by_role("link", name=reservation_no)).to_have_attribute(
        "href", f"/console/bookings/{reservation_no}"
    )
    partner.mode = "ok"
    await row.get_by_role("button", name="Retry").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Delivery {message_id} is pending again")
    pending_row = page.locator("table[aria-labelledby='h-pending']").get_by_role("row").filter(has_text=reservation_no)
    await expect(pending_row).to_contain_text("pending")
    await dispatcher.run_once()
    async with db.read() as conn:
        status = (await conn.execute(select(outbox.c.status).where(outbox.c.id == message_id))).scalar_one()
    assert status == "delivered"
    assert partner.calls("/booking/update")[-1].body["status"] == "CANCELLED"
    assert await audit_by(db, actor_of(console)) == [("outbox.retry", f"outbox:{message_id}")]
    # a second retry of a delivered message is refused with the reason, nothing done
    answer = await page.request.post(
        f"{console_url}/deliveries/{message_id}/retry", form={"csrf_token": await csrf_of(page)}
    )
    assert answer.status == 409 and "was delivered" in await answer.text()
    answer = await page.request.post(
        f"{console_url}/deliveries/987654321/retry", form={"csrf_token": await csrf_of(page)}
    )
    assert answer.status == 404


async def test_support_neither_sees_nor_can_post_admin_actions(
    console_as: ConsoleAs,
    console_url: str,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, _ = await make_client(balance="10.00")
    _, partner_id, _ = await make_partner(airports=("GOH",))
    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/clients")
    await expect(page.get_by_role("heading", name="Clients")).to_be_visible()
    await expect(page.get_by_role("link", name="New client")).to_have_count(0)
    await page.goto(f"{console_url}/clients/{client_id}")
    await expect(page.get_by_role("heading", name=re.compile(f"Client {client_id} "))).to_be_visible()
    for control in ("Top up", "Suspend", "Create key", "Revoke"):
        await expect(page.get_by_role("button", name=control)).to_have_count(0)
    await expect(page.get_by_label("Amount")).to_have_count(0)
    await page.goto(f"{console_url}/partners")
    await expect(page.get_by_role("link", name="New partner")).to_have_count(0)
    await page.goto(f"{console_url}/partners/{partner_id}")
    for control in ("Save", "Disable", "Rotate signing secret", "Run conformance check"):
        await expect(page.get_by_role("button", name=control)).to_have_count(0)
    await expect(page.get_by_role("heading", name="Health over the last hour")).to_be_visible()

    token = await csrf_of(page)  # a valid token of this session: only the role stops these
    forged: list[tuple[str, dict[str, Any]]] = [
        (f"/clients/{client_id}/top-up", {"amount": "1000.00"}),
        ("/clients", {"name": "Forged", "pay_type": "wallet", "currency": "EUR", "balance": "0"}),
        (f"/clients/{client_id}/status", {"status": "suspended"}),
        (f"/clients/{client_id}/keys", {}),
        (f"/clients/{client_id}/keys/revoke", {"prefix": "tk_000000000000"}),
        ("/partners", {"name": "Forged", "base_url": "https://x.example.com", "airports": "GOH", "markup": "1"}),
        (f"/partners/{partner_id}/edit", {"base_url": "https://x.example.com", "airports": "GOH", "markup": "1"}),
        (f"/partners/{partner_id}/status", {"status": "disabled"}),
        (f"/partners/{partner_id}/rotate-secret", {}),
        (f"/partners/{partner_id}/check", {}),
    ]
    for path, form in forged:
        answer = await page.request.post(f"{console_url}{path}", form={"csrf_token": token, **form})
        assert answer.status == 403, path
        assert "Nothing was changed" in await answer.text()
    for path in ("/clients/new", "/partners/new"):
        assert (await page.request.get(f"{console_url}{path}")).status == 403
    assert await wallet_of(db, client_id) == (Decimal("10.00"), 1)
    assert await audit_by(db, actor_of(console)) == []
    # and an admin's form without the session's CSRF token is refused too
    admin = await console_as("admin")
    answer = await admin.page.request.post(
        f"{console_url}/clients/{client_id}/top-up", form={"csrf_token": "forged", "amount": "5.00"}
    )
    assert answer.status == 403
    assert await wallet_of(db, client_id) == (Decimal("10.00"), 1)


async def test_a_top_up_replayed_after_sign_out_changes_nothing(
    console_as: ConsoleAs,
    console_url: str,
    make_client: ClientFactory,
    db: Database,
) -> None:
    client_id, _ = await make_client(balance="0.00")
    console = await console_as("admin")
    page = console.page
    await page.goto(f"{console_url}/clients/{client_id}")
    token = await csrf_of(page)
    await page.get_by_role("button", name="Sign out").click()
    answer = await page.request.post(
        f"{console_url}/clients/{client_id}/top-up", form={"csrf_token": token, "amount": "5.00"}, max_redirects=0
    )
    assert answer.status == 303 and answer.headers["location"] == "/console/login?ended=1"
    assert await wallet_of(db, client_id) == (Decimal("0.00"), 0)
    assert await audit_by(db, actor_of(console)) == []
