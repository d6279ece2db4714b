"""The rating page ``/r/{token}`` over real HTTP (docs/rules/ratings.md#rating-page), on the session's
database: the form, one rating per booking, the window on the injected clock, the tracking token and
forged tokens refused, the capability headers, and the link in the client's resource only."""

from __future__ import annotations

from datetime import timedelta

import httpx

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.incidents.helpers import at
from tests.ratings.helpers import dropped_off_ride, rate, rating_rows
from transfers.bookings.rating_link import rating_token, reservation_of
from transfers.clock import ShiftedClock
from transfers.db.engine import Database


def path(reservation_no: str) -> str:
    return "/r/" + rating_token(reservation_no)


def capability_headers(answer: httpx.Response) -> None:
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert "script-src" not in answer.headers["content-security-policy"]  # no script at all


async def test_the_form_records_one_rating_and_shows_it_back(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    page = await http.get(path(reservation_no))
    assert page.status_code == 200, page.text
    capability_headers(page)
    assert 'type="radio" name="stars" value="5"' in page.text and "<textarea" in page.text
    assert reservation_no in page.text

    sent = await http.post(path(reservation_no), data={"stars": "2", "comment": "Late, <b>rude</b>\r\nbut safe"})
    assert sent.status_code == 303 and sent.headers["location"] == path(reservation_no) + "?done=1"
    stored = await rating_rows(db, row["id"])
    assert [(r["stars"], r["comment"], r["source"]) for r in stored] == [
        (2, "Late, <b>rude</b>\r\nbut safe", "traveller")
    ]
    shown = await http.get(sent.headers["location"])
    assert shown.status_code == 200 and "Your rating was recorded." in shown.text
    assert "&lt;b&gt;rude&lt;/b&gt;" in shown.text and "<b>rude</b>" not in shown.text
    assert "<form" not in shown.text

    again = await http.post(path(reservation_no), data={"stars": "5"})
    assert again.status_code == 409 and "already rated" in again.text
    by_api = await rate(http, key, reservation_no, {"stars": 5})
    assert by_api.status_code == 409 and by_api.json()["code"] == "RATING_EXISTS"
    assert len(await rating_rows(db, row["id"])) == 1


async def test_bad_forms_are_refused_on_the_page_and_nothing_is_written(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    for form in (
        {},
        {"stars": "0"},
        {"stars": "6"},
        {"stars": "4.5"},
        {"stars": "five"},
        {"stars": "3", "comment": "x" * 1001},
        {"stars": "3", "comment": "flip\u202eme"},
    ):
        answer = await http.post(path(reservation_no), data=form)
        assert answer.status_code == 422, (form, answer.status_code)
        assert 'class="problem"' in answer.text and "<form" in answer.text
    kept = await http.post(path(reservation_no), data={"stars": "3", "comment": "x" * 1001})
    assert 'value="3" required checked' in kept.text  # the choice is kept for the next try
    assert await rating_rows(db, row["id"]) == []


async def test_the_page_is_not_open_before_the_drop_off(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, early, _, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner, drop_off=False)
    not_yet = await http.get(path(early))
    assert not_yet.status_code == 403 and "dropped you off" in not_yet.text
    capability_headers(not_yet)
    assert (await http.post(path(early), data={"stars": "5"})).status_code == 403


async def test_the_page_closes_seven_days_after_the_drop_off(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, reservation_no, row, dropped, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    at(clock, dropped, timedelta(days=7, seconds=-1))
    assert (await http.get(path(reservation_no))).status_code == 200
    at(clock, dropped, timedelta(days=7))
    closed = await http.get(path(reservation_no))
    assert closed.status_code == 410 and "7 days" in closed.text
    assert (await http.post(path(reservation_no), data={"stars": "5"})).status_code == 410
    assert await rating_rows(db, row["id"]) == []


async def test_the_tracking_token_and_forged_tokens_open_nothing(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    token = rating_token(reservation_no)
    forged = [
        row["tracking_token"],
        reservation_no,
        "A" * 22 + reservation_no,
        token[:-1],
        token[:21] + ("B" if token[21] != "B" else "C") + token[22:],
        token + "/x",
        "é" * 30,
    ]
    for candidate in forged:
        answer = await http.get("/r/" + candidate)
        assert answer.status_code == 404, candidate
        posted = await http.post("/r/" + candidate, data={"stars": "5"})
        assert posted.status_code in (404, 405), candidate
    assert reservation_of(token) == reservation_no
    assert reservation_of(row["tracking_token"]) is None
    assert await rating_rows(db, row["id"]) == []


async def test_the_link_is_the_clients_only(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, partner_key = await dropped_off_ride(http, db, clock, make_client, make_partner)
    token = rating_token(reservation_no)
    client_view = await http.get(
        "/api/v1/booking-api/booking", params={"reservation_no": reservation_no}, headers=bearer(key)
    )
    assert client_view.json()["ride"]["rating_url"].endswith("/r/" + token)
    partner_view = await http.get(f"/api/v1/reverse/booking/info/{reservation_no}", headers=bearer(partner_key))
    assert partner_view.status_code == 200, partner_view.text
    assert "rating_url" not in partner_view.json()["ride"]
    assert token not in partner_view.text
    traveller = await http.get(f"/t/{row['tracking_token']}.json")
    assert traveller.status_code == 200 and token not in traveller.text and "/r/" not in traveller.text
    traveller_page = await http.get(f"/t/{row['tracking_token']}")
    assert token not in traveller_page.text
