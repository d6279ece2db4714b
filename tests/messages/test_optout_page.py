"""The opt-out page ``/m/{token}`` over real HTTP (docs/rules/messages.md#opt-out), on the session's
database: GET shows the choice and stops nothing, POST ``scope`` = ``booking`` | ``all`` stops messages
to the link's address (once: a second post adds nothing), a bad scope changes nothing, forged, edited
and foreign tokens open nothing, the capability headers, and the token cut in the logs."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select, update

from tests.conftest import ClientFactory, PartnerFactory
from tests.messages.page_helpers import booking_with_messages, message, write_messages
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, message_optouts
from transfers.logging import redact_path
from transfers.messages.models import Channel, Status, Template
from transfers.messages.optout_link import optout_token, optout_url


async def set_passenger_language(db: Database, booking_id: int, tag: str) -> None:
    async with db.write() as conn:
        await conn.execute(update(bookings).where(bookings.c.id == booking_id).values(passenger_language=tag))


def path(booking_id: int, channel: str, address: str) -> str:
    return "/m/" + optout_token(booking_id, channel, address)


def capability_headers(answer: httpx.Response) -> None:
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert "script-src" not in answer.headers["content-security-policy"]  # no script at all


async def optouts_of(db: Database, address: str) -> list[tuple[str, int | None, str, bool]]:
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(message_optouts).where(message_optouts.c.address == address).order_by(message_optouts.c.id)
            )
        ).mappings()
        return [(r["channel"], r["booking_id"], r["source"], r["lifted_at"] is None) for r in rows]


async def test_get_shows_the_choice_and_post_stops_this_booking_then_every_booking(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, reservation_no, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    email = row["passenger_email"]
    link = path(row["id"], "email", email.upper() + " ")  # normalised as opt-outs store addresses
    page = await http.get(link)
    assert page.status_code == 200, page.text
    capability_headers(page)
    assert reservation_no in page.text and "a***@example.com" in page.text
    assert email not in page.text.lower()
    assert 'name="scope" value="booking"' in page.text and 'name="scope" value="all"' in page.text
    assert await optouts_of(db, email) == []  # a GET stops nothing

    stopped = await http.post(link, data={"scope": "booking"})
    assert stopped.status_code == 303 and stopped.headers["location"] == link + "?done=booking"
    capability_headers(stopped)
    assert await optouts_of(db, email) == [("email", row["id"], "page", True)]
    again = await http.post(link, data={"scope": "booking"})  # a double click adds nothing
    assert again.status_code == 303
    assert await optouts_of(db, email) == [("email", row["id"], "page", True)]
    shown = await http.get(stopped.headers["location"])
    assert "Done: no more messages about transfer" in shown.text
    assert 'value="booking"' not in shown.text and 'value="all"' in shown.text  # what is left to stop

    everything = await http.post(link, data={"scope": "all"})
    assert everything.status_code == 303
    assert await optouts_of(db, email) == [
        ("email", row["id"], "page", True),
        ("email", None, "page", True),
    ]
    final = await http.get(link)
    assert final.status_code == 200 and "E-mails stopped" in final.text and "<form" not in final.text


async def test_the_sms_link_stops_texts_to_the_number_only(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    url = optout_url("https://transfers.example/", row["id"], "sms", row["passenger_phone"])
    assert url.startswith("https://transfers.example/m/")
    link = url.removeprefix("https://transfers.example")
    page = await http.get(link)
    assert page.status_code == 200 and "+44 7*** ***456" in page.text and "Stop text messages?" in page.text
    assert (await http.post(link, data={"scope": "all"})).status_code == 303
    assert await optouts_of(db, row["passenger_phone"]) == [("sms", None, "page", True)]
    assert await optouts_of(db, row["passenger_email"]) == []


async def test_a_bad_scope_is_refused_on_the_page_and_nothing_is_written(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    link = path(row["id"], "email", row["passenger_email"])
    forms: list[dict[str, Any]] = [
        {},
        {"scope": ""},
        {"scope": "everything"},
        {"scope": "BOOKING"},
        {"scope": "all\x00"},
    ]
    for form in forms:
        answer = await http.post(link, data=form)
        assert answer.status_code == 422, (form, answer.status_code)
        assert 'class="problem"' in answer.text and "<form" in answer.text
        capability_headers(answer)
    assert await optouts_of(db, row["passenger_email"]) == []


async def test_forged_edited_and_foreign_tokens_open_nothing(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    _, _, other = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    good = optout_token(row["id"], "email", row["passenger_email"])
    flipped = good[:5] + ("A" if good[5] != "A" else "B") + good[6:]
    tokens = [
        "x",
        "a" * 200,
        flipped,  # a signature edited
        good[:22] + "s" + good[23:],  # the channel edited
        good[:22] + "e" + str(other["id"]),  # another booking's id under this signature
        optout_token(row["id"], "email", "someone.else@example.com"),  # an address the booking never had
        optout_token(10**17, "email", "ada@example.com"),  # no such booking
        good + "0",
        "%00" + good,
    ]
    for token in tokens:
        for answer in (await http.get("/m/" + token), await http.post("/m/" + token, data={"scope": "all"})):
            assert answer.status_code == 404, (token, answer.status_code)
            assert "There is nothing to stop at this address" in answer.text
            capability_headers(answer)
    assert await optouts_of(db, row["passenger_email"]) == []


async def test_a_message_sent_to_an_earlier_address_still_opens_its_link(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    earlier = "before." + row["passenger_email"].replace("example.com", "example.org")
    await write_messages(
        db,
        [message(row, Template.DRIVER_CHANGED, Channel.EMAIL, Status.SENT, to_address=earlier, revision="old")],
        clock.now(),
    )
    link = path(row["id"], "email", earlier)
    page = await http.get(link)
    assert page.status_code == 200 and "b***@example.org" in page.text
    assert (await http.post(link, data={"scope": "booking"})).status_code == 303
    assert await optouts_of(db, earlier) == [("email", row["id"], "page", True)]


def test_the_token_is_cut_in_the_logs() -> None:
    token = optout_token(42, "email", "ada@example.com")
    assert redact_path(f"/m/{token}") == f"/m/{token[:4]}…"
    assert token[4:] not in redact_path(f"/m/{token}?done=all")


async def test_the_page_speaks_the_travellers_language(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, reservation_no, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    link = path(row["id"], "email", row["passenger_email"])
    english = await http.get(link)
    assert '<html lang="en">' in english.text and "Stop e-mails?" in english.text
    dutch = await http.get(link, headers={"Accept-Language": "nl-BE, fr;q=0.5"})
    assert '<html lang="nl">' in dutch.text and "Geen e-mails meer ontvangen?" in dutch.text
    await set_passenger_language(db, row["id"], "de-AT")  # the booking's language wins over the browser's
    german = await http.get(link, headers={"Accept-Language": "nl"})
    assert '<html lang="de">' in german.text and "E-Mails abbestellen?" in german.text
    assert f"Nur zu diesem Transfer ({reservation_no})" in german.text and "a***@example.com" in german.text
    french = await http.get(link + "?lang=fr")  # the page's own language links win over everything
    assert '<html lang="fr">' in french.text and 'action="' + link + '?lang=fr"' in french.text
    stopped = await http.post(link + "?lang=fr", data={"scope": "booking"})
    assert stopped.headers["location"] == link + "?done=booking&lang=fr"
    done = await http.get(stopped.headers["location"])
    assert f"C'est fait : plus aucun message pour le transfert {reservation_no}." in done.text.replace("&#39;", "'")
    unknown = await http.get("/m/" + "A" * 22 + "e1", headers={"Accept-Language": "es"})
    assert unknown.status_code == 404 and "Página no encontrada" in unknown.text
