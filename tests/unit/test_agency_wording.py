"""How the agency portal words things (``agency/wording.py``, ``agency/messages.py``): statuses and
cancellation policies in words, times at the airport, and the API's refusals beside the field that can
fix them, with the API's own code."""

from __future__ import annotations

from datetime import UTC, datetime

from transfers.agency.messages import GENERAL, field_error
from transfers.agency.wording import at_airport, flattened, policy_words, status_words
from transfers.errors import Code, ErrorCode, Invalid, NotFound


def test_statuses_read_as_words() -> None:
    assert status_words("PENDING_APPROVAL") == "Waiting for the transport company to accept"
    assert status_words("APPROVED") == "Confirmed"
    assert status_words("SOMETHING_NEW") == "Something new"
    assert status_words(None) == ""


def test_pickup_times_are_the_airports_clock() -> None:
    winter = datetime(2026, 12, 5, 14, 30, tzinfo=UTC)
    assert at_airport(winter, "LHR") == "Sat 05 Dec 2026, 14:30 (LHR local time)"
    assert at_airport(winter, "CDG") == "Sat 05 Dec 2026, 15:30 (CDG local time)"
    assert at_airport(winter, "ZZZ") == "Sat 05 Dec 2026, 14:30 UTC"
    assert at_airport(None, "LHR") == "—"


def test_a_tiered_policy_in_words() -> None:
    tiers = [
        {"hours_before_pickup": 0, "fee_percent": 100},
        {"hours_before_pickup": 48, "fee_percent": 0},
        {"hours_before_pickup": 24, "fee_percent": 12.5},
    ]
    assert policy_words(tiers, "2026-12-03T14:30:00+00:00") == [
        "Free cancellation until Thu 03 Dec 2026, 14:30 (airport time).",
        "Cancel 48 hours or more before pickup: free.",
        "Between 48 and 24 hours before pickup: 12.5 % of the price.",
        "In the last 24 hours: 100 % of the price.",
    ]
    assert policy_words([{"hours_before_pickup": 0, "fee_percent": 0}]) == [
        "Cancelling is free at any time before pickup."
    ]
    assert policy_words([{"hours_before_pickup": 0, "fee_percent": 100}]) == ["Cancelling costs 100 % of the price."]


def test_every_field_of_a_resource_is_a_row() -> None:
    rows = dict(flattened({"a": {"b": 1, "c": None}, "d": [], "e": ["x", "y"], "f": [{"g": True}], "h": {}}))
    assert rows == {"a.b": "1", "a.c": "—", "d": "—", "e": "x, y", "f[0].g": "yes", "h": "—"}


def test_refusals_go_beside_their_field_with_the_apis_code() -> None:
    field, message = field_error(Invalid(Code.SEARCH_PICKUP_DATETIME_INVALID), lead="2 hours", ahead=365, most=50)
    assert field == "pickup_date"
    assert message.startswith("Choose a pickup date and time, at the airport, at least 2 hours from now")
    assert message.endswith("(API: SEARCH_PICKUP_DATETIME_INVALID, 1317)")
    assert field_error(Invalid(Code.PASSENGER_PHONE_INVALID))[0] == "phone"
    general = field_error(Invalid(ErrorCode.AMENDMENT_NOT_ALLOWED, "Too late to change."))
    assert general == (GENERAL, "Too late to change. (API: AMENDMENT_NOT_ALLOWED)")
    assert field_error(NotFound("No such thing.")) == (GENERAL, "No such thing.")
