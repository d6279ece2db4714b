"""``/console/operators``: an admin adds an operator (the password shown once, and it signs in) and
disables one (its session ends at once); a support operator sees the list only, and its forged
posts are refused."""

from __future__ import annotations

import re

from playwright.async_api import expect
from sqlalchemy import select

from tests.browser.conftest import ConsoleAs, sign_in
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, operators


async def test_an_admin_adds_an_operator_who_signs_in_and_disables_it(
    console_as: ConsoleAs, console_url: str, db: Database
) -> None:
    admin = await console_as("admin")
    page = admin.page
    await page.get_by_role("link", name="Operators", exact=True).click()
    email = f"new-{admin.operator.operator_id}@example.com"
    await page.get_by_label("Email").fill("not an email")
    await page.locator("#op-email").evaluate("e => e.type = 'text'")  # past the browser's own check
    await page.get_by_role("button", name="New operator").click()
    await expect(page.locator(".field-error")).to_contain_text("Not an e-mail address")
    await expect(page.get_by_label("Email")).to_have_value("not an email")
    await page.get_by_label("Email").fill(email.upper())
    await page.get_by_label("Role").select_option("support")
    await page.get_by_role("button", name="New operator").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Operator {email} (support) created")
    password = (await page.locator("#new-password").inner_text()).strip()
    assert len(password) >= 20

    newcomer_context = await admin.context.browser.new_context()  # type: ignore[union-attr]
    try:
        newcomer = await newcomer_context.new_page()
        await sign_in(newcomer, console_url, email, password)
        await expect(newcomer.get_by_role("heading", name="Dashboard")).to_be_visible()
        await page.goto(f"{console_url}/operators")
        await page.get_by_role("button", name=f"Disable {email}").click()
        await expect(page.get_by_role("status")).to_contain_text("its sessions have ended")
        await newcomer.goto(f"{console_url}/bookings")
        await expect(newcomer).to_have_url(re.compile(r"/console/login"))
    finally:
        await newcomer_context.close()
    async with db.read() as conn:
        status = (await conn.execute(select(operators.c.status).where(operators.c.email == email))).scalar_one()
        actions = [
            r.action
            for r in await conn.execute(
                select(admin_audit.c.action)
                .where(
                    admin_audit.c.actor == f"operator:{admin.operator.email}",
                    admin_audit.c.action.in_(["operator.create", "operator.disable"]),
                )
                .order_by(admin_audit.c.id)
            )
        ]
    assert status == "disabled" and actions == ["operator.create", "operator.disable"]


async def test_support_sees_operators_but_cannot_add_or_disable(
    console_as: ConsoleAs, console_url: str, db: Database
) -> None:
    support = await console_as("support")
    page = support.page
    await page.goto(f"{console_url}/operators")
    await expect(page.get_by_role("cell", name=support.operator.email)).to_be_visible()
    await expect(page.get_by_role("button", name="New operator")).to_have_count(0)
    await expect(page.get_by_role("button", name=re.compile("^Disable"))).to_have_count(0)
    token = await page.locator("input[name=csrf_token]").first.input_value()
    forged = await page.request.post(
        f"{console_url}/operators", form={"csrf_token": token, "email": "sneaky@example.com", "role": "admin"}
    )
    assert forged.status == 403
    forged = await page.request.post(
        f"{console_url}/operators/{support.operator.operator_id}/disable", form={"csrf_token": token}
    )
    assert forged.status == 403
    async with db.read() as conn:
        assert (
            await conn.execute(select(operators.c.id).where(operators.c.email == "sneaky@example.com"))
        ).first() is None
        assert (
            await conn.execute(select(operators.c.status).where(operators.c.id == support.operator.operator_id))
        ).scalar_one() == "active"
