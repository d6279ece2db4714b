"""The console's ``Partners`` pages in a real browser (docs/rules/console.md): a partner created (credentials shown
once), its conformance check run against its own server (the reference sandbox partner, started on
loopback with the credentials just shown) and the table shown, its health over the last hour from
the database, an edit refused beside the field with the typed value kept, the signing secret
rotated (shown once, both signatures sent), and the partner disabled."""

from __future__ import annotations

import re

import httpx
from playwright.async_api import expect
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import search_body
from tests.servers import LiveServer, free_port
from transfers.db.engine import Database
from transfers.db.tables import admin_audit
from transfers.partners import health, health_repository
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import endpoint_for
from transfers.sandbox_partner import SandboxPartnerConfig, create_sandbox_partner_app

SEARCH = "/api/v1/booking-api/search"


async def test_a_partner_is_created_checked_rotated_and_disabled(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    make_client: ClientFactory,
    db: Database,
) -> None:
    console = await console_as("admin")
    page = console.page
    port = free_port()
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Partners").click()
    await page.get_by_role("link", name="New partner").click()
    await page.get_by_label("Name").fill("Console Cars Ltd")
    await page.get_by_label("Base URL").fill(f"http://127.0.0.1:{port}")
    await page.get_by_label("Airports").fill("goh")
    await page.get_by_label("Markup").fill("150")
    await page.get_by_label("Cancellation policy").fill("24:0,0:100")
    await page.get_by_role("button", name="New partner").click()
    await expect(page.locator(".field-error")).to_have_text("Markup must be a percent between 0 and 100.")
    await expect(page.get_by_label("Markup")).to_have_value("150")
    await expect(page.get_by_label("Airports")).to_have_value("goh")
    await page.get_by_label("Markup").fill("10")
    await page.get_by_role("button", name="New partner").click()
    await expect(page.get_by_role("heading", name=re.compile(r"Partner \d+ Console Cars Ltd created"))).to_be_visible()
    api_key = (await page.locator("#api-key").text_content() or "").strip()
    token = (await page.locator("#outbound-token").text_content() or "").strip()
    secret = (await page.locator("#signing-secret").text_content() or "").strip()
    assert api_key.startswith("pk_") and token.startswith("ot_") and secret.startswith("whsec_")
    await page.get_by_role("link", name="Go to the partner's page").click()
    partner_id = int(re.search(r"/partners/(\d+)", page.url).group(1))  # type: ignore[union-attr]
    assert secret not in await page.content() and token not in await page.content()
    await expect(page.locator("table.pairs").first).to_contain_text("24:0,0:100")

    # its server: the reference partner, configured with what the console just showed
    app = create_sandbox_partner_app(
        SandboxPartnerConfig(
            service_url=service.url,
            api_key=api_key,
            signing_secret=secret,
            outbound_token=token,
            approve_after_seconds=600,
        )
    )
    server = await LiveServer(app, port=port).start()
    try:
        await page.get_by_role("button", name="Run conformance check").click()
        await expect(page.get_by_role("heading", name="Conformance check: PASS")).to_be_visible(timeout=30_000)
        table = page.locator("#h-check + table")
        await expect(table.get_by_role("row")).to_have_count(15)  # the header and fourteen checks
        await expect(table.get_by_role("row").filter(has_text="refuses a bad signature")).to_contain_text("PASS")

        # health over the last hour: a search asks it; the page reads the database
        _, key = await make_client()
        async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
            found = await http.post(
                SEARCH,
                headers={"Authorization": f"Bearer {key}"},
                json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "GOH"}),
            )
        assert found.status_code == 200 and found.json()["vehicles"]
        svc = svc_of(service)

        async def write(tallies: dict[health.Key, health.Tally]) -> None:
            await health_repository.add_tallies(svc.db, tallies)

        await health.flush(svc.health, write)
        for _ in range(50):  # the service's own flusher may hold the count in its transaction
            async with db.read() as conn:
                (now,) = await health_repository.last_hour(conn, svc.clock.now(), [partner_id])
            if now.search_calls:
                break
        await page.reload()
        health_table = page.locator("#h-health + table")
        await expect(health_table.get_by_role("row").filter(has_text="Search calls")).to_contain_text("1")
        await expect(health_table.get_by_role("row").filter(has_text="Errors")).to_contain_text("0")
        await page.get_by_role("navigation", name="Main").get_by_role("link", name="Partners").click()
        listed = page.get_by_role("row").filter(has_text="Console Cars Ltd")
        await expect(listed).to_contain_text("10 %")
        await page.get_by_role("link", name=re.compile(f"{partner_id} Console Cars Ltd")).click()
    finally:
        await server.stop()
        await app.state.partner.aclose()

    # an edit refused beside its field, the typed values kept, nothing saved
    await page.get_by_label("Airports").fill("GOH, QQQ")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator(".field-error")).to_have_text("Airports: unknown IATA airport code(s): QQQ.")
    await expect(page.get_by_label("Airports")).to_have_value("GOH, QQQ")
    await page.get_by_label("Airports").fill("GOH,BER")
    await page.get_by_label("Cancellation policy").fill("")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("settings are saved")
    await expect(page.locator("table.pairs").first).to_contain_text("BER, GOH")
    await expect(page.locator("table.pairs").first).to_contain_text("free until pickup")

    # rotate: the new secret once; until the overlap ends calls carry both signatures
    await page.get_by_role("button", name="Rotate signing secret").click()
    await expect(page.get_by_role("heading", name="New signing secret")).to_be_visible()
    rotated = (await page.locator("#signing-secret").text_content() or "").strip()
    assert rotated.startswith("whsec_") and rotated != secret
    point = await endpoint_for(db, SecretBox(svc.settings.secret_key or ""), partner_id)
    assert point is not None and point.signing_secret == rotated and point.previous_signing_secret == secret

    await page.goto(f"{console_url}/partners/{partner_id}")
    await expect(page.locator("table.pairs").first).to_contain_text("the old secret also signs until")
    await page.get_by_role("button", name="Disable").click()
    await expect(page.get_by_role("status")).to_contain_text("The partner is disabled")
    async with db.read() as conn:
        actions = [
            r.action
            for r in await conn.execute(
                select(admin_audit.c.action)
                .where(
                    admin_audit.c.actor == f"operator:{console.operator.email}",
                    ~admin_audit.c.action.startswith("operator.sign_"),
                )
                .order_by(admin_audit.c.id)
            )
        ]
    assert actions == [
        "partner.create",
        "partner.check",
        "partner.update",
        "partner.cancellation_policy",
        "partner.rotate_secret",
        "partner.disable",
    ]


async def test_unknown_and_malformed_partner_and_client_pages_answer_404(
    console_as: ConsoleAs,
    console_url: str,
) -> None:
    page = (await console_as("support")).page
    for path in (
        "/partners/987654321",
        "/partners/abc",
        "/partners/-1",
        "/partners/0",
        "/clients/987654321",
        "/clients/1e3",
        "/clients/" + "9" * 40,
    ):
        answer = await page.request.get(f"{console_url}{path}")
        assert answer.status == 404, path
        assert "Not found" in await answer.text()


async def test_the_dashboard_lists_partners_whose_searches_failed_in_the_hour(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    _, key = await make_client()
    _, partner_id, _ = await make_partner(airports=("CWL",), name="Flaky Cars", mode="status", status_code=502)
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        for _ in range(2):
            found = await http.post(
                SEARCH,
                headers={"Authorization": f"Bearer {key}"},
                json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "CWL"}),
            )
            assert found.status_code == 200 and found.json()["vehicles"] == []
    svc = svc_of(service)

    async def write(tallies: dict[health.Key, health.Tally]) -> None:
        await health_repository.add_tallies(svc.db, tallies)

    await health.flush(svc.health, write)
    for _ in range(50):  # the service's own flusher may hold the counts in its transaction
        async with db.read() as conn:
            (seen,) = await health_repository.last_hour(conn, svc.clock.now(), [partner_id])
        if seen.errors >= 2:
            break
    page = (await console_as("support")).page
    row = page.locator("#search-errors + table").get_by_role("row").filter(has_text="Flaky Cars")
    await expect(row).to_contain_text("2 of 2 calls")
    await expect(row).to_contain_text("http_error: 2")
    await row.get_by_role("link", name="Flaky Cars").click()
    await expect(page.locator("#h-health + table").get_by_role("row").filter(has_text="Errors")).to_contain_text(
        "2 (http_error: 2)"
    )
