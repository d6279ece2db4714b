"""What the ``Book`` forms send to the API's use cases (docs/rules/agency-portal.md#pages): the search
(from the airport or to it, with the way back on the same form) and the booking's extras with their
quantities. The portal books what the API books: these build the API's own request bodies, and the
API's rules answer them (a bad count or date is the API's refusal beside its field). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FROM_AIRPORT, TO_AIRPORT = "from", "to"
MAX_QUANTITY_TEXT = 5  # a quantity longer than this is refused by the API's rule, never cut


def count(value: str) -> int | str:
    """A count as the API takes it: an integer, or the text as typed (the API refuses it with its code)."""
    text = value.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 6 else text


def direction(typed: Mapping[str, str]) -> str:
    return TO_AIRPORT if typed.get("direction") == TO_AIRPORT else FROM_AIRPORT


def local_time(date: str, time: str) -> str:
    """The API's ``YYYY-MM-DD HH:MM`` (seconds as typed, when a browser sends them)."""
    return f"{date.strip()} {time.strip()}"


def return_problems(typed: Mapping[str, str]) -> dict[str, str]:
    """The way back is optional, but half of it is a mistake worth saying (not a one-way trip)."""
    date, time = typed.get("return_date", "").strip(), typed.get("return_time", "").strip()
    if date and not time:
        return {"return_time": "Enter the time of the way back, or clear its date for a one-way trip."}
    if time and not date:
        return {"return_date": "Enter the date of the way back, or clear its time for a one-way trip."}
    return {}


def search_body(typed: Mapping[str, str], lat: float, lng: float, label: str) -> dict[str, Any]:
    """The API's search request for the form: the airport and the place in the chosen direction,
    ``return_datetime`` when the way back is asked for, and ``currency`` when one was chosen (the API
    answers a currency the agency holds no wallet in with its 1325)."""
    airport = {"type": "AIRPORT", "iata_code": typed["airport"].strip().upper()}
    place = {"type": "POINT", "lat": lat, "lng": lng, "name": label}
    to_airport = direction(typed) == TO_AIRPORT
    body: dict[str, Any] = {
        "pickup_datetime": local_time(typed["pickup_date"], typed["pickup_time"]),
        "pickup_location": place if to_airport else airport,
        "dropoff_location": airport if to_airport else place,
        "travelers": {
            "adult": count(typed["adult"]),
            "children": count(typed.get("children") or "0"),
            "infant": count(typed.get("infant") or "0"),
        },
    }
    if typed.get("return_date", "").strip() and typed.get("return_time", "").strip():
        body["return_datetime"] = local_time(typed["return_date"], typed["return_time"])
    if typed.get("currency", "").strip():  # only offered when the agency holds several wallets
        body["currency"] = typed["currency"].strip()
    return body


def extra_field(extra_id: int) -> str:
    return f"extra_{extra_id}"


def chosen_extras(form: Mapping[str, object], extra_ids: list[int]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The API's ``extra_services`` for the quantities typed beside the offer's extras (0 or empty:
    not wanted), and the quantities as typed, to show again. A quantity that is not a whole number
    is sent as typed, so the API's 1021 answers it beside the field."""
    items: list[dict[str, Any]] = []
    typed: dict[str, str] = {}
    for extra_id in extra_ids:
        raw = form.get(extra_field(extra_id))
        text = raw.replace("\x00", "").strip()[:20] if isinstance(raw, str) else ""
        typed[extra_field(extra_id)] = text
        if text in ("", "0"):
            continue
        items.append({"id": extra_id, "quantity": count(text)})
    return items, typed
