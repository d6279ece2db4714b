"""``Book`` and a booking's page without JavaScript (docs/rules/agency-portal.md#pages), over real HTTP
against the service with a fake partner on loopback: the search form with the geocoder's place or
typed coordinates, the offers with the cancellation policy in words, the passenger form, ``Book``
(idempotent: pressing it twice is one booking and one debit), the booking's page with every field,
its story and its events; ``Cancel booking`` with the fee shown first; ``Change``; the API's rules and
messages beside the fields; another agency's booking a 404; never a 500, nothing half-written."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func, select

from tests.agency.conftest import AgencyBrowser, MakeAgency, SignedIn
from tests.conftest import PartnerFactory, bearer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, bookings, ledger_entries, wallets

GET_BOOKING = "/api/v1/booking-api/booking"


def search_form(clock: ShiftedClock, **overrides: str) -> dict[str, str]:
    day = (clock.now() + timedelta(days=10)).strftime("%Y-%m-%d")
    form = {
        "airport": "LHR",
        "place": "Trafalgar Square",
        "lat": "51.5080",
        "lng": "-0.1281",
        "pickup_date": day,
        "pickup_time": "14:30",
        "adult": "2",
        "children": "0",
        "infant": "0",
    }
    form.update(overrides)
    return form


PASSENGER = {
    "name": "Ada",
    "surname": "Lovelace",
    "email": "ada@example.com",
    "phone": "+447911123456",
    "flight": "BA117",
    "suitcase": "1",
    "small_bags": "0",
    "notes": "",
}


def first_offer_link(page: str) -> str:
    found = re.search(r'action="(/agency/book/[^/"]+/\d+)"', page)
    assert found, page[:2000]
    return found.group(1)


def hidden(page: str, name: str) -> str:
    """The value a form field shows (hidden or typed)."""
    found = re.search(rf'name="{name}"(?: type="[^"]*")? value="([^"]*)"', page)
    assert found, name
    return html.unescape(found.group(1))


async def count_bookings(db: Database, client_id: int) -> int:
    async with db.read() as conn:
        return int((await conn.execute(select(func.count()).where(bookings.c.client_id == client_id))).scalar_one())


async def book_in_portal(web: AgencyBrowser, clock: ShiftedClock, **passenger: str) -> tuple[str, httpx.Response]:
    await web.get("/agency/book")
    offers = await web.post("/agency/book", search_form(clock))
    assert offers.status_code == 200, offers.text
    link = first_offer_link(offers.text)
    form = await web.get(link)
    assert form.status_code == 200
    answer = await web.post(link, {**PASSENGER, **passenger, "key": hidden(form.text, "key")})
    return link, answer


async def test_an_agent_books_end_to_end_without_javascript(
    http: httpx.AsyncClient,
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    await web.get("/agency/book")
    offers = await web.post("/agency/book", search_form(clock))
    assert offers.status_code == 200
    assert "Offers" in offers.text and "€" in offers.text and "Up to " in offers.text
    assert re.search(r"(Cancel \d+ hours or more before pickup|Cancelling costs|Free cancellation until)", offers.text)
    link = first_offer_link(offers.text)
    form = await web.get(link)
    assert "Passenger and flight" in form.text
    answer = await web.post(link, {**PASSENGER, "key": hidden(form.text, "key")})
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    reservation_no = location.split("/")[-1].split("?")[0]
    page = await web.get(location)
    assert page.status_code == 200
    for shown in (reservation_no, "Lovelace", "BA117", "LHR local time", "Story", "Events sent to your system"):
        assert shown in page.text, shown
    tracking = re.search(r'id="tracking" type="text" readonly value="([^"]+)"', page.text)
    assert tracking and "/t/" in tracking.group(1)  # the traveller's page, to copy
    traveller = await http.get(tracking.group(1).split("/t/", 1)[1].join(["/t/", ""]))
    assert traveller.status_code == 200
    api = (
        await http.get(GET_BOOKING, params={"reservation_no": reservation_no}, headers=bearer(agency.api_key))
    ).json()
    assert api["booking"]["passenger"]["surname"] == "Lovelace" if "booking" in api else api["passenger"]["surname"]
    async with db.read() as conn:
        audit = (
            (
                await conn.execute(
                    select(admin_audit.c.actor).where(
                        admin_audit.c.subject == f"booking:{reservation_no}",
                        admin_audit.c.action == "agency.booking.create",
                    )
                )
            )
            .scalars()
            .all()
        )
    assert len(audit) == 1 and agency.agent.email in audit[0]
    # Pressing Book again with the same form (a double click, a reload): the same booking, one debit.
    again = await web.post(link, {**PASSENGER, "key": hidden(form.text, "key")})
    assert again.status_code == 303 and again.headers["location"].split("/")[-1].split("?")[0] == reservation_no
    assert await count_bookings(db, agency.client_id) == 1
    async with db.read() as conn:
        debits = (
            await conn.execute(
                select(func.count())
                .select_from(ledger_entries.join(wallets, wallets.c.id == ledger_entries.c.wallet_id))
                .where(wallets.c.client_id == agency.client_id, ledger_entries.c.kind == "debit_booking")
            )
        ).scalar_one()
    assert debits == 1


async def test_the_forms_own_phone_example_is_accepted_and_stored_as_e164(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    """docs/rules/booking.md#phone-numbers: the passenger form's hint says "like +44 7911 123456"; typed so
    (or with 00 and (0)), the booking goes through and the phone is stored as E.164."""
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    await web.get("/agency/book")
    offers = await web.post("/agency/book", search_form(clock))
    form = await web.get(first_offer_link(offers.text))
    assert "like +44 7911 123456" in form.text  # the form's own example
    for typed in ("+44 7911 123456", "0044 (0)7911-123456"):
        _, answer = await book_in_portal(web, clock, phone=typed)
        assert answer.status_code == 303, answer.text
        reservation_no = answer.headers["location"].split("/")[-1].split("?")[0]
        async with db.read() as conn:
            stored = (
                await conn.execute(
                    select(bookings.c.passenger_phone).where(bookings.c.reservation_no == reservation_no)
                )
            ).scalar_one()
        assert stored == "+447911123456", typed
    _, refused = await book_in_portal(web, clock, phone="07911 123456")  # no country code: the API's 1009
    assert refused.status_code == 422 and "PASSENGER_PHONE_INVALID, 1009" in refused.text


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"airport": "ZZZ"}, "airport", "SEARCH_PICKUP_IATA_CODE_INVALID, 1307"),
        ({"airport": ""}, "airport", "SEARCH_PICKUP_IATA_CODE_REQUIRED, 1306"),
        ({"pickup_date": "2001-01-01"}, "pickup_date", "SEARCH_PICKUP_DATETIME_INVALID, 1317"),
        ({"pickup_time": "25:99"}, "pickup_date", "SEARCH_PICKUP_DATETIME_INVALID, 1317"),
        ({"adult": "0"}, "adult", "SEARCH_TRAVELERS_ADULT_INVALID, 1320"),
        ({"adult": "two"}, "adult", "SEARCH_TRAVELERS_ADULT_INVALID, 1320"),
        ({"children": "-1"}, "children", "SEARCH_TRAVELERS_CHILDREN_INVALID, 1321"),
        ({"lat": "91"}, "lat", "Enter a latitude between -90 and 90"),
        ({"lat": "", "lng": "", "place": ""}, "place", "Enter the destination"),
        ({"place": "x" * 10_000}, "place", "SEARCH_DROPOFF_NAME_REQUIRED, 1315"),
        # docs/rules/booking.md#text: a bidirectional override in the address the driver reads
        ({"place": "Hotel \u202eInn"}, "place", "SEARCH_DROPOFF_NAME_REQUIRED, 1315"),
        ({"lat": "", "lng": "", "place": "Qqqqzzzxxyy"}, "place", "No town or place called"),
    ],
)
async def test_search_refusals_show_the_apis_message_beside_the_field(
    make_agency: MakeAgency,
    signed_in: SignedIn,
    clock: ShiftedClock,
    overrides: dict[str, str],
    field: str,
    words: str,
) -> None:
    web = await signed_in((await make_agency()).agent)
    await web.get("/agency/book")
    answer = await web.post("/agency/book", search_form(clock, **overrides))
    assert answer.status_code == 422, answer.text[:500]
    assert f'id="{field}-error">' in answer.text
    error = answer.text.split(f'id="{field}-error">')[1].split("</span>")[0]
    assert words in error
    assert "There is a problem" in answer.text


async def test_a_place_is_found_by_name_near_the_airport_and_others_offered(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock
) -> None:
    await make_partner()
    web = await signed_in((await make_agency()).agent)
    await web.get("/agency/book")
    answer = await web.post("/agency/book", search_form(clock, lat="", lng="", place="Richmond"))
    assert answer.status_code == 200, answer.text[:1000]
    assert "to Richmond" in answer.text and ", GB" in answer.text  # the Richmond near London, not Virginia's
    assert 'name="pick"' in answer.text  # the other Richmonds, to pick without JavaScript
    places = await web.get("/agency/book/places", params={"q": "Richm", "airport": "LHR"})
    assert places.status_code == 200 and places.json()["places"][0]["country"] == "GB"


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"surname": ""}, "surname", "PASSENGER_SURNAME_REQUIRED, 1007"),
        ({"phone": "call me"}, "phone", "PASSENGER_PHONE_INVALID, 1009"),
        ({"email": "nope"}, "email", "PASSENGER_EMAIL_INVALID, 1011"),
        ({"flight": ""}, "flight", "FLIGHT_NUMBER_REQUIRED, 1013"),
        ({"suitcase": "lots"}, "suitcase", "SUITCASE_INVALID, 1015"),
        ({"name": "A" * 10_000}, "name", "1006"),
        # docs/rules/booking.md#text: each field's own code for a control character or bidi override
        ({"name": "Ada\u202eecalevoL"}, "name", "PASSENGER_NAME_REQUIRED, 1006"),
        ({"surname": "Love\x1blace"}, "surname", "PASSENGER_SURNAME_REQUIRED, 1007"),
        ({"flight": "BA\u2066117"}, "flight", "FLIGHT_NUMBER_REQUIRED, 1013"),
    ],
)
async def test_booking_refusals_show_beside_the_field_and_write_nothing(
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
    overrides: dict[str, str],
    field: str,
    words: str,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    _, answer = await book_in_portal(web, clock, **overrides)
    assert answer.status_code == 422, answer.text[:500]
    error = answer.text.split(f'id="{field}-error">')[1].split("</span>")[0]
    assert words in error
    assert await count_bookings(db, agency.client_id) == 0


async def test_cancel_shows_the_fee_first_then_cancels_once(
    http: httpx.AsyncClient,
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    _, answer = await book_in_portal(web, clock)
    reservation_no = answer.headers["location"].split("/")[-1].split("?")[0]
    quote = (
        await http.get(
            "/api/v1/booking-api/booking/cancellation-quote",
            params={"reservation_no": reservation_no},
            headers=bearer(agency.api_key),
        )
    ).json()
    form = await web.get(f"/agency/bookings/{reservation_no}/cancel")
    assert form.status_code == 200
    fee = form.text.split('id="fee">')[1].split("</td>")[0]
    assert f"€{float(quote['fee']):,.2f}" in fee
    refused = await web.post(f"/agency/bookings/{reservation_no}/cancel", {"reason": "", "note": "", "key": "k1"})
    assert refused.status_code == 422 and 'id="reason-error"' in refused.text
    reason = re.search(r'<option value="(\d+)"', form.text)
    assert reason
    done = await web.post(
        f"/agency/bookings/{reservation_no}/cancel", {"reason": reason.group(1), "note": "plans changed", "key": "k2"}
    )
    assert done.status_code == 303
    page = await web.get(done.headers["location"])
    assert "Cancelled" in page.text
    async with db.read() as conn:
        row = (await conn.execute(select(bookings.c.status).where(bookings.c.reservation_no == reservation_no))).one()
        audit = (
            (
                await conn.execute(
                    select(admin_audit.c.actor).where(
                        admin_audit.c.subject == f"booking:{reservation_no}",
                        admin_audit.c.action == "agency.booking.cancel",
                    )
                )
            )
            .scalars()
            .all()
        )
    assert row.status == "CANCELLED" and len(audit) == 1 and agency.agent.email in audit[0]
    again = await web.post(
        f"/agency/bookings/{reservation_no}/cancel", {"reason": reason.group(1), "note": "plans changed", "key": "k2"}
    )
    assert again.status_code == 303  # the same form again: the same cancellation, answered again
    other = await web.post(
        f"/agency/bookings/{reservation_no}/cancel", {"reason": reason.group(1), "note": "", "key": "k2"}
    )
    assert other.status_code == 422 and "IDEMPOTENCY_KEY_REUSED" in other.text  # the key, other values


async def test_change_sends_only_what_differs_and_shows_the_apis_rules(
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    _, answer = await book_in_portal(web, clock)
    reservation_no = answer.headers["location"].split("/")[-1].split("?")[0]
    form = await web.get(f"/agency/bookings/{reservation_no}/change")
    assert form.status_code == 200
    current = {
        name: hidden(form.text, name)
        for name in ("name", "surname", "email", "phone", "flight", "pickup_date", "pickup_time")
    }
    nothing = await web.post(f"/agency/bookings/{reservation_no}/change", {**current, "notes": "", "key": "x"})
    assert nothing.status_code == 422 and "Nothing was changed" in nothing.text
    past = await web.post(
        f"/agency/bookings/{reservation_no}/change", {**current, "pickup_date": "2001-01-01", "notes": "", "key": "x"}
    )
    assert past.status_code == 422
    assert "1317" in past.text.split('id="pickup_date-error">')[1].split("</span>")[0]
    bad = await web.post(
        f"/agency/bookings/{reservation_no}/change", {**current, "phone": "x", "notes": "", "key": "x"}
    )
    assert bad.status_code == 422 and "1009" in bad.text.split('id="phone-error">')[1].split("</span>")[0]


async def test_another_agencys_booking_is_not_found_by_any_door(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner()
    theirs, mine = await make_agency(), await make_agency()
    other = await signed_in(theirs.agent)
    _, answer = await book_in_portal(other, clock)
    reservation_no = answer.headers["location"].split("/")[-1].split("?")[0]
    web = await signed_in(mine.admin)
    for path in ("", "/cancel", "/change"):
        assert (await web.get(f"/agency/bookings/{reservation_no}{path}")).status_code == 404, path
    for path in ("/cancel", "/change"):
        refused = await web.post(
            f"/agency/bookings/{reservation_no}{path}", {"reason": "1", "surname": "X", "key": "k"}
        )
        assert refused.status_code == 404, path
    for odd in ("nope", "x" * 10_000, "%00", "..%2F..%2Fetc"):
        assert (await web.get(f"/agency/bookings/{odd}")).status_code == 404
    async with db.read() as conn:
        status = (
            await conn.execute(select(bookings.c.status).where(bookings.c.reservation_no == reservation_no))
        ).scalar_one()
    assert status != "CANCELLED"


async def test_forms_without_csrf_are_refused_and_write_nothing(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    assert (await web.post("/agency/book", search_form(clock), csrf=False)).status_code == 403
    await web.get("/agency/book")
    offers = await web.post("/agency/book", search_form(clock))
    link = first_offer_link(offers.text)
    assert (await web.post(link, {**PASSENGER, "key": "k"}, csrf=False)).status_code == 403
    assert await count_bookings(db, agency.client_id) == 0


async def test_a_suspended_agency_reads_but_changes_nothing(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock, db: Database
) -> None:
    from transfers.clients import service as client_service
    from transfers.clients.models import ClientStatus

    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    _, answer = await book_in_portal(web, clock)
    reservation_no = answer.headers["location"].split("/")[-1].split("?")[0]
    await client_service.set_status(db, clock, agency.client_id, ClientStatus.SUSPENDED, actor="tests")
    assert (await web.get(f"/agency/bookings/{reservation_no}")).status_code == 200
    assert (await web.get("/agency/wallet")).status_code == 200
    await web.get("/agency/book")
    refused = await web.post("/agency/book", search_form(clock))
    assert refused.status_code == 403 and "suspended" in refused.text
    await web.get(f"/agency/bookings/{reservation_no}/cancel")
    cancel = await web.post(f"/agency/bookings/{reservation_no}/cancel", {"reason": "1", "note": "", "key": "k"})
    assert cancel.status_code == 403
    async with db.read() as conn:
        status = (
            await conn.execute(select(bookings.c.status).where(bookings.c.reservation_no == reservation_no))
        ).scalar_one()
    assert status != "CANCELLED"
    assert await count_bookings(db, agency.client_id) == 1


async def test_report_a_problem_follows_the_apis_rules(
    http: httpx.AsyncClient,
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
) -> None:
    await make_partner(  # the transport company accepts at once, with its driver
        create_status="APPROVED", driver={"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"}
    )
    agency = await make_agency()
    web = await signed_in(agency.agent)
    _, answer = await book_in_portal(web, clock)
    reservation_no = answer.headers["location"].split("/")[-1].split("?")[0]
    path = f"/agency/bookings/{reservation_no}/problem"
    form = await web.get(path)
    assert form.status_code == 200 and "What went wrong" in form.text
    empty = await web.post(path, {"type": "OTHER", "description": "   "})
    assert empty.status_code == 422
    assert "INVALID_INCIDENT" in empty.text.split('id="description-error">')[1].split("</span>")[0]
    bad_type = await web.post(path, {"type": "CUSTOMER_NO_SHOW", "description": "x"})
    assert bad_type.status_code == 422 and 'id="type-error"' in bad_type.text
    huge = await web.post(path, {"type": "OTHER", "description": "x" * 10_000})
    assert huge.status_code == 422 and 'id="description-error"' in huge.text
    early = await web.post(path, {"type": "OTHER", "description": "The car was dirty."})
    assert early.status_code == 422 and "INCIDENT_NOT_ALLOWED" in early.text  # before the pickup
    status = (
        await http.get(GET_BOOKING, params={"reservation_no": reservation_no}, headers=bearer(agency.api_key))
    ).json()
    assert status.get("booking", status)["status"] == "APPROVED"
    clock.advance(timedelta(days=11))  # after the pickup (10 days ahead, 14:30): the session of 10 days ago has ended
    web = await signed_in(agency.agent)
    await web.get(path)
    done = await web.post(path, {"type": "OTHER", "description": "The car was dirty."})
    assert done.status_code == 303 and "reported=1" in done.headers["location"], done.text.split("error-summary")[1][
        :400
    ]
    page = await web.get(done.headers["location"])
    assert "Problems reported" in page.text and "The car was dirty." in page.text
    again = await web.post(path, {"type": "OTHER", "description": "Again."})
    assert again.status_code == 422 and "INCIDENT_EXISTS" in again.text
    async with db.read() as conn:
        audit = (
            (
                await conn.execute(
                    select(admin_audit.c.actor).where(
                        admin_audit.c.subject == f"booking:{reservation_no}",
                        admin_audit.c.action == "agency.booking.incident",
                    )
                )
            )
            .scalars()
            .all()
        )
    assert len(audit) == 1 and agency.agent.email in audit[0]
