"""The agency portal's ``Book`` forms as the API's request bodies (agency/trip_form.py), instants in
words (webauth/formats.moment_words) and refund notes that do not repeat themselves
(bookings/cancel_rules.refund_note). Pure."""

from __future__ import annotations

from transfers.agency import trip_form
from transfers.bookings.cancel_rules import refund_note
from transfers.webauth.formats import moment_words

TYPED = {
    "airport": "lhr ",
    "pickup_date": "2026-12-09",
    "pickup_time": "14:30",
    "adult": "2",
    "children": "",
    "infant": "1",
}


def test_an_arrival_goes_from_the_airport_and_one_way_has_no_return() -> None:
    body = trip_form.search_body(TYPED, 51.5, -0.12, "Trafalgar Square")
    assert body == {
        "pickup_datetime": "2026-12-09 14:30",
        "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
        "dropoff_location": {"type": "POINT", "lat": 51.5, "lng": -0.12, "name": "Trafalgar Square"},
        "travelers": {"adult": 2, "children": 0, "infant": 1},
    }


def test_a_departure_goes_to_the_airport_with_its_way_back() -> None:
    typed = {**TYPED, "direction": "to", "return_date": "2026-12-12", "return_time": "09:15"}
    body = trip_form.search_body(typed, 51.5, -0.12, "Richmond")
    assert body["pickup_location"]["type"] == "POINT" and body["dropoff_location"]["iata_code"] == "LHR"
    assert body["return_datetime"] == "2026-12-12 09:15"
    assert trip_form.return_problems(typed) == {}
    assert set(trip_form.return_problems({**typed, "return_time": ""})) == {"return_time"}
    assert set(trip_form.return_problems({**typed, "return_date": " "})) == {"return_date"}


def test_extras_are_sent_with_their_quantities_and_a_bad_one_as_typed() -> None:
    form = {"extra_3": "2", "extra_4": "0", "extra_5": "", "extra_6": "two"}
    items, typed = trip_form.chosen_extras(form, [3, 4, 5, 6, 7])
    assert items == [{"id": 3, "quantity": 2}, {"id": 6, "quantity": "two"}]  # the API answers 1021
    assert typed == {"extra_3": "2", "extra_4": "0", "extra_5": "", "extra_6": "two", "extra_7": ""}


def test_instants_in_words() -> None:
    assert moment_words("2026-11-27T14:30:00+00:00") == "2026-11-27 14:30 UTC"
    assert moment_words("2026-11-27T14:30:00Z") == "2026-11-27 14:30 UTC"
    assert moment_words("2026-11-27T14:30:00-05:30") == "2026-11-27 14:30 (UTC-05:30)"
    assert moment_words("TB-7K3M9Q2X") == "TB-7K3M9Q2X" and moment_words("2026-11-27") == "2026-11-27"


def test_a_refund_note_says_what_happened_once() -> None:
    assert refund_note("REFUNDED", "refunded by operator: driver never came") == (
        "refunded by operator: driver never came"
    )
    assert refund_note("DECLINED", "no driver free") == "declined: no driver free"
    assert refund_note("FAILED", None) == "failed"
