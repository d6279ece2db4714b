"""``Developers`` in the agency portal (docs/rules/agency-portal.md#pages) over real HTTP, without
JavaScript: admins only (an agent gets 403); API keys created (shown once, working at once) and
revoked (listed as revoked, refused by the API) through ``transfers clients keys``' use cases;
webhook endpoints through the API's use case (same codes and messages, beside their fields), edited,
disabled, enabled, rotated, tested; events with their deliveries and ``Resend``; the request log of
the last 7 days filtered by status; another agency's key, endpoint or delivery answers 404; a form
without its CSRF token is refused with nothing written; every change audited with the admin."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import select

from tests.agency.conftest import MakeAgency, SignedIn
from tests.conftest import bearer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, api_keys, client_events, webhook_deliveries, webhook_endpoints

ENDPOINTS_API = "/api/v1/booking-api/webhook-endpoints"
KEY = re.compile(r'id="new-key"[^>]*value="(tk_[^"]+)"')
SECRET = re.compile(r'id="new-secret"[^>]*value="([^"]+)"')
HOOK_URL = "http://127.0.0.1:9/hooks"


async def audit_of(db: Database, actor_email: str) -> list[tuple[str, str]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(admin_audit.c.action, admin_audit.c.subject)
            .where(admin_audit.c.actor.contains(actor_email))
            .order_by(admin_audit.c.id)
        )
        return [(r[0], r[1]) for r in rows]


async def keys_of(db: Database, client_id: int) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(api_keys.c.prefix, api_keys.c.revoked_at).where(api_keys.c.client_id == client_id)
        )
        return [dict(r._mapping) for r in rows]


async def endpoint_ids(db: Database, client_id: int) -> list[str]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(webhook_endpoints.c.public_id)
            .where(webhook_endpoints.c.client_id == client_id)
            .order_by(webhook_endpoints.c.id)
        )
        return [str(r[0]) for r in rows]


async def test_an_agent_gets_403_everywhere_in_developers(make_agency: MakeAgency, signed_in: SignedIn) -> None:
    agency = await make_agency()
    agent = await signed_in(agency.agent)
    for path in (
        "/agency/developers",
        "/agency/developers/events",
        "/agency/developers/requests",
        "/agency/developers/endpoints/new",
        "/agency/developers/endpoints/we_0",
    ):
        refused = await agent.get(path)
        assert refused.status_code == 403, path
        assert "Only your agency&#39;s admins may open this page." in refused.text
    for path in ("/agency/developers/keys", "/agency/developers/endpoints", "/agency/developers/deliveries/1/resend"):
        assert (await agent.post(path, {"url": HOOK_URL, "events": "*"})).status_code == 403, path


async def test_a_key_is_shown_once_works_at_once_and_once_revoked_is_listed_revoked_and_refused(
    make_agency: MakeAgency, signed_in: SignedIn, http: httpx.AsyncClient, db: Database
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/developers")
    made = await admin.post("/agency/developers/keys", {})
    assert made.status_code == 201
    key = KEY.search(made.text).group(1)  # type: ignore[union-attr]
    assert (await http.get(ENDPOINTS_API, headers=bearer(key))).status_code == 200
    prefix = "_".join(key.split("_")[:2])
    listed = await admin.get("/agency/developers")
    assert key not in listed.text and f"{prefix}_…" in listed.text  # shown once, then only its prefix
    revoked = await admin.post(f"/agency/developers/keys/{prefix}/revoke", {})
    assert revoked.status_code == 303 and revoked.headers["location"] == "/agency/developers?done=revoked"
    page = (await admin.get("/agency/developers?done=revoked")).text
    row = page.split(f"{prefix}_…")[1].split("</tr>")[0]
    assert "Revoked" in row and f"Revoke {prefix}" not in row
    for _ in range(50):  # the API's auth cache holds a key for up to a second
        if (await http.get(ENDPOINTS_API, headers=bearer(key))).status_code == 401:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the revoked key still works")
    assert (await http.get(ENDPOINTS_API, headers=bearer(agency.api_key))).status_code == 200  # the others still do
    audit = await audit_of(db, agency.admin.email)
    assert ("key.issue", f"client:{agency.client_id}") in audit and ("key.revoke", f"key:{prefix}") in audit


async def test_another_agencys_key_endpoint_and_delivery_answer_404_and_nothing_changes(
    make_agency: MakeAgency, signed_in: SignedIn, http: httpx.AsyncClient, db: Database
) -> None:
    ours, theirs = await make_agency(), await make_agency()
    made = await http.post(ENDPOINTS_API, json={"url": HOOK_URL, "events": ["*"]}, headers=bearer(theirs.api_key))
    assert made.status_code == 201, made.text
    their_endpoint = made.json()["id"]
    ping = await http.post(f"{ENDPOINTS_API}/{their_endpoint}/test", headers=bearer(theirs.api_key))
    assert ping.status_code == 202
    async with db.read() as conn:
        delivery_id = (
            await conn.execute(
                select(webhook_deliveries.c.id)
                .join(client_events, client_events.c.id == webhook_deliveries.c.event_pk)
                .where(client_events.c.event_id == ping.json()["event_id"])
            )
        ).scalar_one()
    their_prefix = (await keys_of(db, theirs.client_id))[0]["prefix"]
    admin = await signed_in(ours.admin)
    await admin.get("/agency/developers")
    answers = [
        await admin.get(f"/agency/developers/endpoints/{their_endpoint}"),
        await admin.post(f"/agency/developers/endpoints/{their_endpoint}", {"url": HOOK_URL + "/x", "events": "*"}),
        await admin.post(f"/agency/developers/endpoints/{their_endpoint}/status", {"status": "disabled"}),
        await admin.post(f"/agency/developers/endpoints/{their_endpoint}/rotate", {}),
        await admin.post(f"/agency/developers/endpoints/{their_endpoint}/test", {}),
        await admin.post(f"/agency/developers/keys/{their_prefix}/revoke", {}),
        await admin.post(f"/agency/developers/deliveries/{delivery_id}/resend", {}),
        await admin.get(f"/agency/developers/events/{ping.json()['event_id']}"),
        await admin.get("/agency/developers/events/evt_" + "%00" * 10),
        await admin.get("/agency/developers/endpoints/we_nothing"),
        await admin.get("/agency/developers/endpoints/%00" + "x" * 5000),
        await admin.post("/agency/developers/deliveries/abc/resend", {}),
    ]
    assert [a.status_code for a in answers] == [404] * len(answers)
    assert (await keys_of(db, theirs.client_id))[0]["revoked_at"] is None
    theirs_now = (await http.get(f"{ENDPOINTS_API}/{their_endpoint}", headers=bearer(theirs.api_key))).json()
    assert theirs_now["status"] == "enabled" and theirs_now["url"] == HOOK_URL
    page = (await admin.get("/agency/developers/events")).text
    assert ping.json()["event_id"] not in page


async def test_a_form_without_its_csrf_token_is_refused_and_writes_nothing(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    before = await keys_of(db, agency.client_id)
    assert (await admin.post("/agency/developers/keys", {}, csrf=False)).status_code == 403
    refused = await admin.post("/agency/developers/endpoints", {"url": HOOK_URL, "events": "*"}, csrf=False)
    assert refused.status_code == 403
    assert await keys_of(db, agency.client_id) == before
    assert await endpoint_ids(db, agency.client_id) == []


async def test_endpoints_are_added_edited_disabled_rotated_and_tested_with_the_apis_rules(
    make_agency: MakeAgency, signed_in: SignedIn, http: httpx.AsyncClient, db: Database
) -> None:
    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/developers/endpoints/new")
    bad = {"url": "ftp://example.com/hook", "events": ["*"]}
    api_answer = (await http.post(ENDPOINTS_API, json=bad, headers=bearer(agency.api_key))).json()
    refused = await admin.post("/agency/developers/endpoints", {"url": bad["url"], "events": "*"})
    assert refused.status_code == 422
    assert 'id="url-error"' in refused.text and api_answer["message"].replace("'", "&#39;") in refused.text
    assert 'value="ftp://example.com/hook"' in refused.text  # what was typed is kept
    no_events = await admin.post("/agency/developers/endpoints", {"url": HOOK_URL})
    assert no_events.status_code == 422 and 'id="events-error"' in no_events.text
    huge = await admin.post(
        "/agency/developers/endpoints", {"url": "h" * 10_000, "events": "*", "description": "d" * 10_000}
    )
    assert huge.status_code == 422
    assert await endpoint_ids(db, agency.client_id) == []  # nothing half-written
    added = await admin.post(
        "/agency/developers/endpoints", {"url": HOOK_URL, "events": "booking.created", "description": "Büro ✓"}
    )
    assert added.status_code == 201
    assert SECRET.search(added.text).group(1).startswith("whsec_")  # type: ignore[union-attr]
    (public_id,) = await endpoint_ids(db, agency.client_id)
    from_api = (await http.get(f"{ENDPOINTS_API}/{public_id}", headers=bearer(agency.api_key))).json()
    assert from_api["events"] == ["booking.created"] and from_api["description"] == "Büro ✓"
    edited = await admin.post(
        f"/agency/developers/endpoints/{public_id}",
        {"url": HOOK_URL + "/v2", "events": ["booking.created", "booking.status_changed"], "description": ""},
    )
    assert edited.status_code == 303
    from_api = (await http.get(f"{ENDPOINTS_API}/{public_id}", headers=bearer(agency.api_key))).json()
    assert from_api["url"] == HOOK_URL + "/v2" and from_api["description"] is None
    assert from_api["events"] == ["booking.created", "booking.status_changed"]
    disabled = await admin.post(f"/agency/developers/endpoints/{public_id}/status", {"status": "disabled"})
    assert disabled.status_code == 303
    page = (await admin.get(disabled.headers["location"])).text
    assert 'id="endpoint-status">Disabled' in page and ">Enable</button>" in page
    bad_status = await admin.post(f"/agency/developers/endpoints/{public_id}/status", {"status": "maybe"})
    assert bad_status.status_code == 422
    assert (
        await admin.post(f"/agency/developers/endpoints/{public_id}/status", {"status": "enabled"})
    ).status_code == 303
    rotated = await admin.post(f"/agency/developers/endpoints/{public_id}/rotate", {})
    assert rotated.status_code == 201 and SECRET.search(rotated.text)
    tested = await admin.post(f"/agency/developers/endpoints/{public_id}/test", {})
    assert tested.status_code == 303
    event_id = tested.headers["location"].split("test=")[1]
    page = (await admin.get(tested.headers["location"])).text
    assert event_id in page and "ping" in page
    actions = [action for action, _ in await audit_of(db, agency.admin.email)]
    for action in (
        "webhook_endpoint.create",
        "webhook_endpoint.update",
        "webhook_endpoint.disable",
        "webhook_endpoint.enable",
        "webhook_endpoint.rotate_secret",
        "webhook_endpoint.test",
    ):
        assert action in actions


async def test_events_show_their_deliveries_and_a_failed_one_is_resent(
    make_agency: MakeAgency, signed_in: SignedIn, http: httpx.AsyncClient, db: Database
) -> None:
    agency = await make_agency()
    made = await http.post(ENDPOINTS_API, json={"url": HOOK_URL, "events": ["*"]}, headers=bearer(agency.api_key))
    public_id = made.json()["id"]
    event_id = (await http.post(f"{ENDPOINTS_API}/{public_id}/test", headers=bearer(agency.api_key))).json()["event_id"]
    # Disabling stops (fails) its pending deliveries; enabled again, a failed one may be resent.
    for status in ("disabled", "enabled"):
        await http.patch(f"{ENDPOINTS_API}/{public_id}", json={"status": status}, headers=bearer(agency.api_key))
    admin = await signed_in(agency.admin)
    page = (await admin.get("/agency/developers/events")).text
    section = page.split(f'id="{event_id}"')[1].split("</section>")[0]
    assert "Failed" in section and ">Resend</button>" in section
    delivery_id = re.search(r"/agency/developers/deliveries/(\d+)/resend", section).group(1)  # type: ignore[union-attr]
    resent = await admin.post(f"/agency/developers/deliveries/{delivery_id}/resend", {})
    assert resent.status_code == 303
    page = (await admin.get(resent.headers["location"])).text
    section = page.split(f'id="{event_id}"')[1].split("</section>")[0]
    assert "Pending" in section and ">Resend</button>" not in section
    again = await admin.post(f"/agency/developers/deliveries/{delivery_id}/resend", {})
    assert again.status_code == 403 and "still pending" in again.text  # the use case's refusal, in words
    assert ("webhook.retry", f"webhook_delivery:{delivery_id}") in await audit_of(db, agency.admin.email)
    one = await admin.get(f"/agency/developers/events/{event_id}")
    assert one.status_code == 200
    assert f"&#34;endpoint_id&#34;: &#34;{public_id}&#34;" in one.text  # the exact body the deliveries send
    assert "Pending" in one.text


async def test_the_request_log_shows_the_last_7_days_filtered_by_status(
    make_agency: MakeAgency, signed_in: SignedIn, http: httpx.AsyncClient, clock: ShiftedClock
) -> None:
    agency, other = await make_agency(), await make_agency()
    ok_id, missing_id, others_id = (f"log-{agency.client_id}-{n}" for n in ("ok", "missing", "other"))
    await http.get(
        ENDPOINTS_API, headers={**bearer(agency.api_key), "X-Request-ID": ok_id, "Idempotency-Key": "idem-1"}
    )
    await http.get(f"{ENDPOINTS_API}/we_missing", headers={**bearer(agency.api_key), "X-Request-ID": missing_id})
    await http.get(ENDPOINTS_API, headers={**bearer(other.api_key), "X-Request-ID": others_id})
    admin = await signed_in(agency.admin)
    page = ""
    for _ in range(100):  # written by the background task every second
        page = (await admin.get("/agency/developers/requests")).text
        if ok_id in page and missing_id in page:
            break
        await asyncio.sleep(0.2)
    assert ok_id in page and missing_id in page and others_id not in page and "idem-1" in page
    assert agency.api_key not in page
    only_errors = (await admin.get("/agency/developers/requests?status=4xx")).text
    assert missing_id in only_errors and ok_id not in only_errors
    exact = (await admin.get("/agency/developers/requests?code=200")).text
    assert ok_id in exact and missing_id not in exact
    refused = await admin.get("/agency/developers/requests?code=" + "9" * 5000)
    assert refused.status_code == 422 and "Type a status such as 404" in refused.text
    forged = await admin.get("/agency/developers/requests?cursor=" + "A" * 300)
    assert forged.status_code == 200 and ok_id in forged.text  # a cursor not ours: the first page
    clock.advance(timedelta(days=7, minutes=1))
    assert ok_id not in (await admin.get("/agency/developers/requests")).text


async def test_the_request_log_pages_by_time(
    make_agency: MakeAgency, signed_in: SignedIn, http: httpx.AsyncClient
) -> None:
    agency = await make_agency()
    ids = [f"page-{agency.client_id}-{n:02d}" for n in range(55)]
    for request_id in ids:
        await http.get(ENDPOINTS_API, headers={**bearer(agency.api_key), "X-Request-ID": request_id})
    admin = await signed_in(agency.admin)
    first = ""
    for _ in range(100):
        first = (await admin.get("/agency/developers/requests")).text
        if ids[-1] in first and ids[5] in first:
            break
        await asyncio.sleep(0.2)
    shown_first = [i for i in ids if i in first]
    assert len(shown_first) == 50 and ids[-1] in shown_first
    next_link = re.search(r'href="(/agency/developers/requests\?[^"]*cursor=[^"]+)"', first).group(1)  # type: ignore[union-attr]
    second = (await admin.get(next_link.replace("&amp;", "&"))).text
    shown_second = [i for i in ids if i in second]
    assert sorted(shown_first + shown_second) == sorted(ids) and not set(shown_first) & set(shown_second)


async def test_a_suspended_agency_reads_developers_but_changes_nothing(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database
) -> None:
    from transfers.clients import service as clients_service
    from transfers.clients.models import ClientStatus
    from transfers.clock import SystemClock

    agency = await make_agency()
    admin = await signed_in(agency.admin)
    await admin.get("/agency/developers")
    await clients_service.set_status(db, SystemClock(), agency.client_id, ClientStatus.SUSPENDED, actor="tests")
    assert (await admin.get("/agency/developers")).status_code == 200
    before = await keys_of(db, agency.client_id)
    assert (await admin.post("/agency/developers/keys", {})).status_code == 403
    refused = await admin.post("/agency/developers/endpoints", {"url": HOOK_URL, "events": "*"})
    assert refused.status_code == 403
    assert await keys_of(db, agency.client_id) == before and await endpoint_ids(db, agency.client_id) == []
