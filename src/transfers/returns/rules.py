"""A return trip's rules (docs/rules/return-trips.md): the way back's request, built from the way out's
(pure: no SQL, no HTTP)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from transfers.bookings.rules import (
    MAX_FLIGHT,
    BookingRequest,
    requests_text,
    required_text,
    stored_flight_number,
)
from transfers.errors import Code, Invalid
from transfers.search.offers import Offer


def return_details(value: Any, out: BookingRequest, offer: Offer) -> BookingRequest:
    """The way back's request (docs/rules/return-trips.md#create): the same passenger and luggage as the way
    out, its own ``return_travel_details`` (``flight_number`` of the departing flight, ``extra_requests``;
    optional, null is absent) and no extras. A flight is never copied from the way out: without one the
    leg's flight number is empty (shown as null everywhere); with one it is normalised as the way out's.
    Its luggage must fit the return vehicle (1015, 1017),
    and a malformed ``return_travel_details`` answers the codes of ``travel_details`` (1012, 1013)."""
    flight, extra_requests = "", None
    if value is not None:
        if not isinstance(value, dict):
            raise Invalid(Code.TRAVEL_DETAILS_REQUIRED)
        extra_requests = requests_text(value.get("extra_requests"))
        if value.get("flight_number") is not None:
            # stored normalised like the way out's (docs/rules/flights.md#flight-number)
            flight = stored_flight_number(
                required_text(value.get("flight_number"), Code.FLIGHT_NUMBER_REQUIRED, MAX_FLIGHT)
            )
    if out.suitcase > offer.suitcases:
        raise Invalid(Code.SUITCASE_INVALID)
    if out.small_bags > offer.small_bags:
        raise Invalid(Code.SMALL_BAGS_INVALID)
    return replace(
        out,
        flight_number=flight,
        extra_requests=extra_requests,
        extras=[],
        total=offer.sell_price,
        net_total=offer.net_price,
    )
