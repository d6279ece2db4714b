"""Agency users and sign-in (docs/rules/agency-portal.md#users): ``transfers clients users create``'s
use case, the sign-in at /agency/login, the navigation by role, the admin-only pages (an agent gets
403), an agency admin adding and disabling people (audited, sessions ended), CSRF-less posts refused
with nothing written, and the areas kept apart (an agency session opens neither the console nor the
partner portal, an operator's session does not open the agency portal)."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from tests.agency.conftest import PASSWORD, AgencyBrowser, MakeAgency, SignedIn, sign_in
from tests.servers import LiveServer
from transfers.agency.users import AgencyUserRefused, NoSuchClient, create_user
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, agency_users


async def users_of(db: Database, client_id: int) -> list[dict[str, object]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(agency_users.c.email, agency_users.c.role, agency_users.c.status).where(
                agency_users.c.client_id == client_id
            )
        )
        return [dict(r._mapping) for r in rows]


async def test_the_admin_sees_every_section_and_the_agent_not_developers_or_users(
    make_agency: MakeAgency, signed_in: SignedIn
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    page = (await admin.get("/agency/bookings")).text
    for label in ("Book", "Bookings", "Wallet", "Developers", "Users"):
        assert f">{label}</a>" in page
    agent = await signed_in(agency.agent)
    page = (await agent.get("/agency/bookings")).text
    for label in ("Book", "Bookings", "Wallet"):
        assert f">{label}</a>" in page
    assert ">Developers</a>" not in page and ">Users</a>" not in page
    for path in ("/agency/users",):  # Developers: its own tests (the devportal section)
        refused = await agent.get(path)
        assert refused.status_code == 403, path
        assert "Only your agency&#39;s admins may open this page." in refused.text
    assert (await agent.post("/agency/users", {"email": "x@example.com", "role": "admin"})).status_code == 403


async def test_an_admin_adds_a_user_who_signs_in_with_the_password_shown_once(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database, service: LiveServer
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/users")
    email = f"new-{agency.client_id}@agency.example"
    added = await admin.post("/agency/users", {"email": f"  {email.upper()} ", "role": "agent"})
    assert added.status_code == 201
    password = added.text.split('id="new-password">')[1].split("<")[0]
    assert len(password) >= 12
    assert {"email": email, "role": "agent", "status": "active"} in await users_of(db, agency.client_id)
    async with db.read() as conn:
        audit = (
            await conn.execute(
                select(admin_audit.c.actor, admin_audit.c.action).where(
                    admin_audit.c.subject == f"client:{agency.client_id}", admin_audit.c.action == "agency_user.create"
                )
            )
        ).all()
    assert any(agency.admin.email in actor for actor, _ in audit)
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
        web = AgencyBrowser(client)
        assert (await sign_in(web, email, password)).status_code == 303


@pytest.mark.parametrize(
    ("email", "role", "message"),
    [
        ("not an address", "agent", "Not an e-mail address"),
        ("x" * 10_000 + "@example.com", "agent", "Enter an e-mail address (at most 320 characters)."),
        ("ok@example.com", "root", "Choose the role: admin or agent."),
        ("", "agent", "Enter an e-mail address"),
    ],
)
async def test_a_refused_new_user_is_shown_beside_its_field_and_nothing_is_written(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database, email: str, role: str, message: str
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/users")
    before = await users_of(db, agency.client_id)
    answer = await admin.post("/agency/users", {"email": email, "role": role})
    assert answer.status_code == 422
    assert 'class="field-error"' in answer.text and message.replace("'", "&#39;") in answer.text
    assert "There is a problem" in answer.text
    assert await users_of(db, agency.client_id) == before


async def test_a_taken_email_is_refused(make_agency: MakeAgency, signed_in: SignedIn, db: Database) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/users")
    answer = await admin.post("/agency/users", {"email": agency.agent.email, "role": "admin"})
    assert answer.status_code == 422 and "already has an account" in answer.text
    assert len(await users_of(db, agency.client_id)) == 2


async def test_disabling_a_user_ends_its_session_and_its_sign_in(
    make_agency: MakeAgency, signed_in: SignedIn, service: LiveServer
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    agent = await signed_in(agency.agent)
    await admin.get("/agency/users")
    done = await admin.post(f"/agency/users/{agency.agent.user_id}/status", {"status": "disabled"})
    assert done.status_code == 303 and done.headers["location"] == "/agency/users?done=disabled"
    assert (await agent.get("/agency/bookings")).status_code == 303  # back to the sign-in page
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
        answer = await sign_in(AgencyBrowser(client), agency.agent.email, agency.agent.password)
        assert answer.status_code == 401 and "Wrong email or password." in answer.text
    await admin.get("/agency/users")
    again = await admin.post(f"/agency/users/{agency.agent.user_id}/status", {"status": "active"})
    assert again.status_code == 303
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
        assert (await sign_in(AgencyBrowser(client), agency.agent.email, PASSWORD)).status_code == 303


async def test_another_agencys_user_cannot_be_touched(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    mine, theirs = await make_agency(), await make_agency()
    admin = await signed_in(mine.admin)
    await admin.get("/agency/users")
    for target in (str(theirs.agent.user_id), "0", "-1", "abc", "9" * 40):
        answer = await admin.post(f"/agency/users/{target}/status", {"status": "disabled"})
        assert answer.status_code == 404, target
    assert {"email": theirs.agent.email, "role": "agent", "status": "active"} in await users_of(db, theirs.client_id)
    own = await admin.post(f"/agency/users/{mine.admin.user_id}/status", {"status": "disabled"})
    assert own.status_code == 403


async def test_a_post_without_csrf_is_refused_and_changes_nothing(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    before = await users_of(db, agency.client_id)
    answer = await admin.post("/agency/users", {"email": "csrf@example.com", "role": "agent"}, csrf=False)
    assert answer.status_code == 403
    forged = await admin.http.post(
        "/agency/users", data={"email": "csrf@example.com", "role": "agent", "csrf_token": "forged"}
    )
    assert forged.status_code == 403
    status = await admin.post(f"/agency/users/{agency.agent.user_id}/status", {"status": "disabled"}, csrf=False)
    assert status.status_code == 403
    assert await users_of(db, agency.client_id) == before


async def test_each_area_keeps_its_own_people(
    make_agency: MakeAgency, signed_in: SignedIn, service: LiveServer
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    for other in ("/console/", "/partner/new"):
        answer = await admin.get(other)
        assert answer.status_code == 303 and "/login" in answer.headers["location"], other
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
        web = AgencyBrowser(client)
        await web.get("/console/login")
        wrong = await web.post("/console/login", {"email": agency.admin.email, "password": PASSWORD})
        assert wrong.status_code == 401
    assert admin.http.cookies.get("transfers_agency")


async def test_the_cli_use_case_checks_the_client_and_the_role(db: Database, clock: ShiftedClock) -> None:
    with pytest.raises(NoSuchClient):
        await create_user(
            db, clock, client_id=99_999_999, email="a@example.com", role="admin", password=None, actor="t"
        )
    with pytest.raises(AgencyUserRefused):
        await create_user(db, clock, client_id=1, email="a@example.com", role="owner", password=None, actor="t")
