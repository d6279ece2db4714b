"""The agency portal's ``Messages`` page over real HTTP (docs/rules/messages.md#settings), without
JavaScript: an admin reads and saves the settings (through the use case ``transfers clients messages``
runs, audited with the admin), every bad input is refused beside its field with nothing changed, SMS
needs the travellers' consent, an agent neither sees nor opens it, a post without the CSRF token
changes nothing; and a booking's page lists its messages with their status, masked."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select

from tests.agency.conftest import MakeAgency, SignedIn
from tests.conftest import PartnerFactory
from tests.messages.page_helpers import booking_with_messages
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit
from transfers.messages import settings_service

GOOD = {
    "email": "on",
    "brand_name": "Sunny Tours",
    "sms_sender": "",
    "reply_to": "desk@sunny.example",
    "support_phone": "+44 20 7946 0123",
    "default_language": "de",
    "feedback": "on",
}


async def audits(db: Database, client_id: int) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(admin_audit.c.actor, admin_audit.c.action).where(admin_audit.c.subject == f"client:{client_id}")
        )
        return [dict(r._mapping) for r in rows]


async def test_an_admin_turns_messages_on_and_sees_them_saved(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    first = await admin.get("/agency/messages")
    assert first.status_code == 200 and ">Messages</a>" in first.text
    assert 'id="state">Now: <strong>off</strong>' in first.text
    saved = await admin.post("/agency/messages", GOOD)
    assert (saved.status_code, saved.headers["location"]) == (303, "/agency/messages?done=saved")
    stored = await settings_service.get_settings(db, agency.client_id)
    assert stored.resource() | {"updated_at": None} == {
        "client_id": agency.client_id,
        "channels": ["email"],
        "brand_name": "Sunny Tours",
        "sms_sender": None,
        "reply_to": "desk@sunny.example",
        "support_phone": "+442079460123",
        "default_language": "de",
        "feedback": True,
        "travellers_consented_at": None,
        "updated_at": None,
    }
    actor = f"agency_user:{agency.admin.user_id} {agency.admin.email} (client {agency.client_id})"
    assert {"actor": actor, "action": "client.message_settings"} in await audits(db, agency.client_id)
    shown = await admin.get("/agency/messages?done=saved")
    assert "Saved." in shown.text and "<strong>on</strong>, by e-mail" in shown.text
    assert 'value="Sunny Tours"' in shown.text and 'value="de" selected' in shown.text


async def test_bad_settings_are_refused_beside_their_field_and_nothing_changes(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/messages")
    assert (await admin.post("/agency/messages", GOOD)).status_code == 303
    before = await settings_service.get_settings(db, agency.client_id)
    cases: list[tuple[dict[str, str], str, str]] = [
        ({"brand_name": "B" * 31}, "brand_name", "Brand name: at most 30 characters (this has 31)"),
        ({"brand_name": ""}, "brand_name", "Brand name: required"),
        ({"sms_sender": "Sun-Tours!"}, "sms_sender", "SMS sender: only the letters"),
        ({"sms_sender": "12345"}, "sms_sender", "SMS sender: needs at least one letter"),
        ({"sms_sender": "AB"}, "sms_sender", "SMS sender: 3..11 characters"),
        ({"reply_to": "not an address"}, "reply_to", "Reply-to e-mail: not an e-mail address"),
        ({"support_phone": "call us"}, "support_phone", "Support phone:"),
        ({"default_language": "xx"}, "default_language", "Default language: one of en, de"),
        ({"sms": "on"}, "travellers_consented", "confirm that your travellers agreed"),
    ]
    for change, field, words in cases:
        answer = await admin.post("/agency/messages", {**GOOD, **change})
        assert answer.status_code == 422, (change, answer.status_code)
        assert f'id="{field}-error">' in answer.text, (change, answer.text[:200])
        assert words in answer.text.replace("&#39;", "'"), (change, words)
        assert 'class="error-summary"' in answer.text
        for name, value in change.items():  # what was typed is kept
            if name not in ("sms", "default_language") and value:
                assert f'value="{value}"' in answer.text.replace("&#34;", '"'), name
    assert await settings_service.get_settings(db, agency.client_id) == before


async def test_sms_with_the_travellers_consent(make_agency: MakeAgency, signed_in: SignedIn, db: Database) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/messages")
    form = {**GOOD, "sms": "on", "travellers_consented": "on", "sms_sender": "SunnyTours"}
    assert (await admin.post("/agency/messages", form)).status_code == 303
    stored = await settings_service.get_settings(db, agency.client_id)
    assert stored.channels == ("email", "sms") and stored.sms_sender == "SunnyTours"
    assert stored.travellers_consented_at is not None
    page = await admin.get("/agency/messages")
    assert "by e-mail and SMS" in page.text and "agreement to be texted confirmed" in page.text


async def test_an_agent_neither_sees_nor_opens_messages_and_a_post_needs_the_csrf_token(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    agency = await make_agency()
    agent = await signed_in(agency.agent)
    assert ">Messages</a>" not in (await agent.get("/agency/bookings")).text
    assert (await agent.get("/agency/messages")).status_code == 403
    assert (await agent.post("/agency/messages", GOOD)).status_code == 403
    admin = await signed_in(agency.admin)
    await admin.get("/agency/messages")
    forged = await admin.post("/agency/messages", GOOD, csrf=False)
    assert forged.status_code in (400, 403), forged.status_code
    assert (await settings_service.get_settings(db, agency.client_id)).channels == ()


async def test_the_booking_page_lists_the_messages_with_their_status(
    make_agency: MakeAgency,
    signed_in: SignedIn,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_partner: PartnerFactory,
) -> None:
    agency = await make_agency()

    async def this_agency(**_: Any) -> tuple[int, str]:
        return agency.client_id, agency.api_key

    _, reservation_no, row = await booking_with_messages(http, db, this_agency, make_partner, clock.now())
    agent = await signed_in(agency.agent)
    page = await agent.get(f"/agency/bookings/{reservation_no}")
    assert page.status_code == 200
    table = page.text.split('<h2 id="messages">')[1].split("</table>")[0]
    assert table.count('<tr id="message-') == 3
    assert "Confirmed" in table and "Reminder" in table and "status-sent" in table and "status-scheduled" in table
    assert "a***@example.com" in table and "+44 7*** ***456" in table
    assert row["passenger_email"] not in table
