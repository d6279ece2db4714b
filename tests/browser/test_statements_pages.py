"""Statements in a real browser (docs/rules/statements.md): the console's partner
statements with ``Mark paid`` (field ``Reference``) and ``Adjust`` (``Amount``, ``Note``), admin
only and audited, bad input refused beside the form with nothing written; the portal's
``Statements`` with a month's lines and its CSV download, with JavaScript on and off."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from playwright.async_api import Browser, expect
from sqlalchemy import func, select

from tests import ledger_world as world
from tests.browser.conftest import ConsoleAs
from tests.browser.test_partner_portal import PASSWORD
from tests.conftest import ClientFactory, PartnerFactory
from transfers.accounting import service as books
from transfers.accounting.periods import period_of
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, journal_entries
from transfers.hosted.users import create_partner_user


async def partner_with_closed_month(
    db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> tuple[int, str]:
    """A partner whose last month (a 44.00 ride, net 40.00) is CLOSED; its id and that period."""
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner()
    clock.advance(timedelta(days=-35))
    then = clock.now()
    ride = await world.book(db, world.values(client_id, partner_id, then, total="44.00", net="40.00"), then)
    await world.complete(db, ride, then)
    clock.advance(timedelta(days=35))
    await books.close_ended(db, clock.now())
    return partner_id, period_of(then)


async def test_an_admin_marks_a_month_paid_once_and_adjusts(
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner_id, closed = await partner_with_closed_month(db, clock, make_client, make_partner)
    support = (await console_as("support")).page
    await support.goto(f"{console_url}/partners/{partner_id}/statements")
    await expect(support.get_by_role("cell", name="CLOSED")).to_be_visible()
    assert await support.get_by_role("button", name="Mark paid").count() == 0
    assert await support.get_by_role("button", name="Adjust").count() == 0

    page = (await console_as("admin")).page
    await page.goto(f"{console_url}/partners/{partner_id}")
    await page.get_by_role("link", name="Statements").click()
    await expect(page.get_by_role("heading", name="Statements of")).to_be_visible()
    # Adjust: three decimals refused beside the form, the typed values kept, nothing written
    await page.get_by_label("Amount").fill("1.005")
    await page.get_by_label("Note").fill("waiting time")
    await page.get_by_role("button", name="Adjust").click()
    await expect(page.get_by_role("alert")).to_contain_text("at most two decimals")
    await expect(page.get_by_label("Amount")).to_have_value("1.005")
    await page.get_by_label("Amount").fill("-2.50")
    await page.get_by_role("button", name="Adjust").click()
    await expect(page.get_by_role("status")).to_contain_text("adjustment")
    # Mark paid: the closing balance, once
    await page.get_by_label("Reference").fill("SEPA-4411")
    await page.get_by_role("button", name="Mark paid").click()
    await expect(page.get_by_role("status")).to_contain_text("marked paid")
    await expect(page.get_by_role("cell", name="PAID")).to_be_visible()
    assert await page.get_by_role("button", name="Mark paid").count() == 0
    listed = {s.period: s for s in await books.statements(db, partner_id)}
    assert listed[closed].status.value == "PAID"
    current = listed[period_of(clock.now())]
    assert (current.figures.paid, current.figures.earned) == (-40, -2.5)
    async with db.read() as conn:
        audited = await conn.execute(
            select(admin_audit.c.action, admin_audit.c.details).where(
                admin_audit.c.subject == f"partner:{partner_id}",
                admin_audit.c.action.in_(["statement.mark_paid", "partner.adjust"]),
            )
        )
        rows = {action: details for action, details in audited}
        assert rows["statement.mark_paid"]["reference"] == "SEPA-4411" and rows["partner.adjust"]["amount"] == "-2.50"
        payouts = await conn.execute(
            select(func.count()).where(journal_entries.c.kind == "PAYOUT", journal_entries.c.reference == "SEPA-4411")
        )
        assert payouts.scalar_one() == 1


@pytest.mark.parametrize("javascript", [True, False])
async def test_the_portal_shows_statements_and_downloads_a_month_as_csv(
    browser: Browser,
    javascript: bool,
    service: Any,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner_id, closed = await partner_with_closed_month(db, clock, make_client, make_partner)
    email = f"money-{partner_id}-{int(javascript)}@partner.example"
    await create_partner_user(db, clock, partner_id=partner_id, email=email, password=PASSWORD, actor="tests")
    context = await browser.new_context(java_script_enabled=javascript, accept_downloads=True)
    context.set_default_timeout(15_000)
    try:
        page = await context.new_page()
        portal = f"{service.url}/partner"
        await page.goto(f"{portal}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{portal}/new")
        await page.get_by_role("navigation", name="Main").get_by_role("link", name="Statements").click()
        await expect(page.get_by_role("heading", name="Statements")).to_be_visible()
        await expect(page.get_by_role("cell", name="CLOSED")).to_be_visible()
        await page.get_by_role("link", name=closed, exact=True).click()
        await expect(page.get_by_role("heading", name=f"Statement {closed}")).to_be_visible()
        await expect(page.get_by_role("cell", name="RIDE")).to_be_visible()
        async with page.expect_download() as waiting:
            await page.get_by_role("link", name=f"Download CSV of {closed}").click()
        download = await waiting.value
        path = await download.path()
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
        assert rows[0] == ["date", "reservation_no", "kind", "retail", "retail_currency", "net", "amount", "note"]
        assert [(r[2], r[6]) for r in rows[1:]] == [("RIDE", "40.00")]
    finally:
        await context.close()
