"""One-time form keys (docs/rules/agency-portal.md#once) over real HTTP: ``Book``, ``Cancel booking``,
``Change`` and ``Report a problem`` sent twice (one after the other, as a reload or ``Back`` and the
button again; and both at once, as a double click) do their work once and answer both posts with
the first answer; the same key with other values is refused in words; a refusal leaves the key
free for the corrected form. And the rules of ``Change`` and ``Report a problem`` beside the
fields: an amendment the rules refuse, a 10,000-character field, another agency's booking, a post
without its CSRF token; never a 500, nothing half-written."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import func, select

from tests.agency.conftest import AgencyBrowser, MakeAgency, SignedIn
from tests.agency.test_agency_book import (
    PASSENGER,
    book_in_portal,
    count_bookings,
    first_offer_link,
    hidden,
    search_form,
)
from tests.conftest import PartnerFactory
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, booking_transitions, bookings, incidents, ledger_entries, outbox, wallets

DRIVER = {"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"}  # the company accepts at once
CHANGE_FIELDS = ("name", "surname", "email", "phone", "flight", "pickup_date", "pickup_time", "notes", "key")


async def audits(db: Database, reservation_no: str, action: str) -> int:
    async with db.read() as conn:
        found = await conn.execute(
            select(func.count()).where(
                admin_audit.c.subject == f"booking:{reservation_no}", admin_audit.c.action == f"agency.booking.{action}"
            )
        )
        return int(found.scalar_one())


async def amendments_requested(db: Database, reservation_no: str) -> tuple[int, int]:
    """(story lines "amendment requested", partner messages written) for the booking."""
    async with db.read() as conn:
        booking_id = (
            await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == reservation_no))
        ).scalar_one()
        story = await conn.execute(
            select(func.count()).where(
                booking_transitions.c.booking_id == booking_id,
                booking_transitions.c.reason.like("amendment requested%"),
            )
        )
        messages = await conn.execute(
            select(func.count()).where(outbox.c.booking_id == booking_id, outbox.c.kind == "booking.amend")
        )
        return int(story.scalar_one()), int(messages.scalar_one())


async def change_form(web: AgencyBrowser, reservation_no: str) -> dict[str, str]:
    form = await web.get(f"/agency/bookings/{reservation_no}/change")
    assert form.status_code == 200
    typed = {name: hidden(form.text, name) for name in CHANGE_FIELDS if name != "notes"}
    return {**typed, "notes": ""}


async def booked(web: AgencyBrowser, clock: ShiftedClock) -> str:
    _, answer = await book_in_portal(web, clock)
    assert answer.status_code == 303, answer.text[:500]
    return str(answer.headers["location"]).split("/")[-1].split("?")[0]


async def approved(db: Database, reservation_no: str) -> None:
    """Until the outbox has delivered the booking to a partner that accepts at once (bounded: 15 s)."""
    for _ in range(300):
        async with db.read() as conn:
            status = (
                await conn.execute(select(bookings.c.status).where(bookings.c.reservation_no == reservation_no))
            ).scalar_one()
        if status == "APPROVED":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{reservation_no} is still {status}")


def summary(page: str) -> str:
    """The page's error summaries (a change form may show why it cannot be changed above them)."""
    return " ".join(part.split("</div>")[0] for part in page.split('class="error-summary"')[1:])


async def test_change_sent_twice_or_at_once_is_one_amendment(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    reservation_no = await booked(web, clock)
    path = f"/agency/bookings/{reservation_no}/change"
    form = await change_form(web, reservation_no)
    refused = await web.post(path, {**form, "phone": "x"})  # a refusal leaves the key free for the fix
    assert refused.status_code == 422 and 'id="phone-error"' in refused.text
    assert await amendments_requested(db, reservation_no) == (0, 0)
    changed = {**form, "flight": "BA118"}
    first, second = await asyncio.gather(web.post(path, changed), web.post(path, changed))  # a double click
    assert first.status_code == second.status_code == 303, (summary(first.text), summary(second.text))
    assert first.headers["location"] == second.headers["location"] == f"/agency/bookings/{reservation_no}?changed=1"
    again = await web.post(path, changed)  # Back, and the button again (or a reload of the answer)
    assert again.status_code == 303 and again.headers["location"] == first.headers["location"]
    assert await amendments_requested(db, reservation_no) == (1, 1)
    assert await audits(db, reservation_no, "amend") == 1
    other = await web.post(path, {**form, "flight": "BA119"})  # the same form's key, other values
    assert other.status_code == 422 and "IDEMPOTENCY_KEY_REUSED" in summary(other.text)
    assert "a form is sent once" in summary(other.text)
    fresh = await change_form(web, reservation_no)  # a new form: the rules answer (one change at a time)
    assert fresh["key"] != form["key"]
    pending = await web.post(path, {**fresh, "flight": "BA119"})
    assert pending.status_code == 422 and "AMENDMENT_IN_PROGRESS" in summary(pending.text)
    assert await amendments_requested(db, reservation_no) == (1, 1)


async def test_book_and_cancel_at_once_are_one_booking_one_debit_one_refund(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    await web.get("/agency/book")
    offers = await web.post("/agency/book", search_form(clock))
    link = first_offer_link(offers.text)
    form = await web.get(link)
    sent = {**PASSENGER, "key": hidden(form.text, "key")}
    first, second = await asyncio.gather(web.post(link, sent), web.post(link, sent))
    assert first.status_code == second.status_code == 303, (summary(first.text), summary(second.text))
    assert first.headers["location"] == second.headers["location"]
    reservation_no = str(first.headers["location"]).split("/")[-1].split("?")[0]
    assert await count_bookings(db, agency.client_id) == 1
    assert await audits(db, reservation_no, "create") == 1
    cancel = await web.get(f"/agency/bookings/{reservation_no}/cancel")
    reason = re.search(r'<option value="(\d+)"', cancel.text)
    assert reason
    path = f"/agency/bookings/{reservation_no}/cancel"
    sent = {"reason": reason.group(1), "note": "plans changed", "key": hidden(cancel.text, "key")}
    first, second = await asyncio.gather(web.post(path, sent), web.post(path, sent))
    assert first.status_code == second.status_code == 303, (summary(first.text), summary(second.text))
    assert (await web.post(path, sent)).status_code == 303
    assert await audits(db, reservation_no, "cancel") == 1
    async with db.read() as conn:
        kinds = (
            (
                await conn.execute(
                    select(ledger_entries.c.kind)
                    .select_from(ledger_entries.join(wallets, wallets.c.id == ledger_entries.c.wallet_id))
                    .where(wallets.c.client_id == agency.client_id)
                )
            )
            .scalars()
            .all()
        )
    assert sorted(kinds) == ["credit_refund", "credit_topup", "debit_booking"], kinds


async def test_a_problem_reported_twice_is_one_incident(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner(create_status="APPROVED", driver=DRIVER)
    agency = await make_agency()
    web = await signed_in(agency.agent)
    reservation_no = await booked(web, clock)
    await approved(db, reservation_no)
    clock.advance(timedelta(days=10, hours=20))  # after the pickup (10 days ahead, 14:30), inside the 72 h
    web = await signed_in(agency.agent)
    path = f"/agency/bookings/{reservation_no}/problem"
    form = await web.get(path)
    key = hidden(form.text, "key")
    empty = await web.post(path, {"type": "OTHER", "description": "", "key": key})
    assert empty.status_code == 422 and 'id="description-error"' in empty.text
    sent = {"type": "DRIVER_LATE", "description": "Forty minutes late.", "key": key}
    first, second = await asyncio.gather(web.post(path, sent), web.post(path, sent))
    assert first.status_code == second.status_code == 303, (summary(first.text), summary(second.text))
    assert (await web.post(path, sent)).status_code == 303
    async with db.read() as conn:
        count = (
            await conn.execute(
                select(func.count())
                .select_from(incidents.join(bookings, bookings.c.id == incidents.c.booking_id))
                .where(bookings.c.reservation_no == reservation_no)
            )
        ).scalar_one()
    assert count == 1 and await audits(db, reservation_no, "incident") == 1
    fresh = await web.get(path)  # a new form for the same kind: the API's one-per-type rule
    refused = await web.post(path, {**sent, "key": hidden(fresh.text, "key")})
    assert refused.status_code == 422 and "INCIDENT_EXISTS" in summary(refused.text)


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("name", "x" * 10_000, "PASSENGER_NAME"),
        ("surname", "x" * 10_000, "PASSENGER_SURNAME"),
        ("email", "x" * 10_000, "PASSENGER_EMAIL_INVALID"),
        ("phone", "9" * 10_000, "PASSENGER_PHONE_INVALID"),
        ("flight", "x" * 10_000, "FLIGHT_NUMBER"),
        ("notes", "x" * 10_000, ""),
        ("pickup_time", "x" * 10_000, "1317"),
    ],
)
async def test_a_ten_thousand_character_change_is_refused_beside_its_field(
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
    field: str,
    value: str,
    code: str,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    reservation_no = await booked(web, clock)
    form = await change_form(web, reservation_no)
    answer = await web.post(f"/agency/bookings/{reservation_no}/change", {**form, field: value})
    assert answer.status_code == 422, answer.text[:500]
    assert "There is a problem" in answer.text
    if code:
        assert code in answer.text
    assert await amendments_requested(db, reservation_no) == (0, 0)
    assert await audits(db, reservation_no, "amend") == 0


async def test_a_change_the_rules_refuse_is_explained_and_nothing_is_sent(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    reservation_no = await booked(web, clock)
    form = await change_form(web, reservation_no)
    cancel = await web.get(f"/agency/bookings/{reservation_no}/cancel")
    reason = re.search(r'<option value="(\d+)"', cancel.text)
    assert reason
    done = await web.post(
        f"/agency/bookings/{reservation_no}/cancel", {"reason": reason.group(1), "note": "", "key": "c1"}
    )
    assert done.status_code == 303
    shown = await web.get(f"/agency/bookings/{reservation_no}/change")
    assert "It cannot be changed now" in shown.text and "CANCELLED booking cannot be amended" in shown.text
    refused = await web.post(f"/agency/bookings/{reservation_no}/change", {**form, "flight": "BA118"})
    assert refused.status_code == 422 and "AMENDMENT_NOT_ALLOWED" in summary(refused.text)
    assert await amendments_requested(db, reservation_no) == (0, 0)


async def test_change_and_problem_refuse_strangers_and_posts_without_csrf(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner(create_status="APPROVED", driver=DRIVER)
    theirs, mine = await make_agency(), await make_agency()
    owner = await signed_in(theirs.admin)
    reservation_no = await booked(owner, clock)
    await approved(db, reservation_no)
    form = await change_form(owner, reservation_no)
    stranger = await signed_in(mine.admin)
    for path in ("/change", "/problem"):
        assert (await stranger.get(f"/agency/bookings/{reservation_no}{path}")).status_code == 404, path
    assert (
        await stranger.post(f"/agency/bookings/{reservation_no}/change", {**form, "flight": "BA118"})
    ).status_code == 404
    assert (
        await stranger.post(
            f"/agency/bookings/{reservation_no}/problem", {"type": "OTHER", "description": "x", "key": "k"}
        )
    ).status_code == 404
    no_csrf = await owner.post(f"/agency/bookings/{reservation_no}/change", {**form, "flight": "BA118"}, csrf=False)
    assert no_csrf.status_code == 403
    clock.advance(timedelta(days=10, hours=20))
    owner = await signed_in(theirs.agent)  # an agent may report, as an admin may change: no role needed
    problem = await owner.get(f"/agency/bookings/{reservation_no}/problem")
    sent = {"type": "OTHER", "description": "Dirty car.", "key": hidden(problem.text, "key")}
    assert (await owner.post(f"/agency/bookings/{reservation_no}/problem", sent, csrf=False)).status_code == 403
    assert await amendments_requested(db, reservation_no) == (0, 0)
    async with db.read() as conn:
        count = (
            await conn.execute(
                select(func.count())
                .select_from(incidents.join(bookings, bookings.c.id == incidents.c.booking_id))
                .where(bookings.c.reservation_no == reservation_no)
            )
        ).scalar_one()
    assert count == 0
    assert (await owner.post(f"/agency/bookings/{reservation_no}/problem", sent)).status_code == 303


async def test_a_post_the_browser_gives_up_is_no_server_error(
    service: LiveServer, http: httpx.AsyncClient, make_agency: MakeAgency, signed_in: SignedIn
) -> None:
    """The first click of a double click: the browser drops the post while sending its form. Nothing
    was read, nothing is done; it is counted as 499 (the client left), never a 500 with a traceback."""
    url = urlsplit(service.url)
    agency = await make_agency()
    web = await signed_in(agency.agent)
    cookies = "; ".join(f"{name}={value}" for name, value in web.http.cookies.items())
    for path in ("/agency/login", "/agency/bookings/TB-AAAAAAAAAA/change"):
        _, writer = await asyncio.open_connection(url.hostname, url.port)
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nCookie: {cookies}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nemail=a".encode()
        )
        await writer.drain()
        writer.close()
        await writer.wait_closed()
    for _ in range(200):  # until the server has noticed both (bounded: 10 s)
        lines = [
            line for line in (await http.get("/metrics")).text.splitlines() if line.startswith("http_requests_total")
        ]
        left = [line for line in lines if 'status="499"' in line and "/agency/" in line]
        if len(left) == 2:
            break
        await asyncio.sleep(0.05)
    assert len(left) == 2, lines
    assert not [line for line in lines if 'status="500"' in line and "/agency/" in line], lines
