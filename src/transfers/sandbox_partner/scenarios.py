"""Scenario triggers: magic passenger surnames and flight numbers that make the sandbox partner
misbehave on purpose, so integrators (and the end-to-end tests) can see every path a real partner
can take without waiting for one to fail.

``SCENARIOS`` is the one table; PARTNER_API.md and the tests list it. Matching is
case-insensitive on the trimmed value. A flight number reaches the partner normalised
(docs/rules/flights.md#flight-number: ``XX0000`` arrives as ``XX0``), so flight triggers compare both
sides normalised the same way (``reference.flights.normalise``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from transfers.reference.flights import normalise


class Scenario(StrEnum):
    DECLINE = "DECLINE"
    SLOW_APPROVE = "SLOWAPPROVE"
    PARTNER_DOWN = "PARTNERDOWN"
    PARTNER_CANCEL = "PARTNERCANCEL"
    NO_SHOW = "XX0000"
    NO_AMEND = "NOAMEND"
    RIDE = "RIDE"
    CUSTOMER_NO_SHOW = "NOSHOW"


@dataclass(frozen=True)
class Trigger:
    field: str  # where the value is read in the create request
    effect: str


SCENARIOS: dict[Scenario, Trigger] = {
    Scenario.DECLINE: Trigger(
        "passenger_info.surname",
        'create answers 200 {"status":"DECLINED","message":"No vehicle available"}',
    ),
    Scenario.SLOW_APPROVE: Trigger(
        "passenger_info.surname",
        "approval comes after 10 x the approval delay instead of 1 x",
    ),
    Scenario.PARTNER_DOWN: Trigger(
        "passenger_info.surname",
        "the first 2 create attempts for the booking answer HTTP 503, later ones are handled normally",
    ),
    Scenario.PARTNER_CANCEL: Trigger(
        "passenger_info.surname",
        "after approval, one more approval delay later the partner cancels through the reverse API "
        '(cancel_reason "Driver unavailable")',
    ),
    Scenario.NO_SHOW: Trigger(
        "flight_info.flight_number",
        'after approval, booking info reports "APPROVED" with "no_show": true in booking_details',
    ),
    Scenario.NO_AMEND: Trigger(
        "passenger_info.surname",
        'every amendment ("status": "AMENDED") is answered {"status":"Error","message":'
        '"Amendments are not possible for this booking"}: it is rejected',
    ),
    Scenario.RIDE: Trigger(
        "passenger_info.surname",
        "once approved the whole ride through the reverse API on a compressed clock: departs 5 s after "
        "approval, a position every 2 s, arrives 20 s later, on board 5 s after, drops off 20 s later",
    ),
    Scenario.CUSTOMER_NO_SHOW: Trigger(
        "passenger_info.surname",
        "once approved the driver departs, arrives and reports CUSTOMER_NO_SHOW as soon as the free wait "
        "allows it (the sandbox's clock: as many seconds as the free wait has minutes)",
    ),
}

SLOW_APPROVE_FACTOR = 10
NO_AMEND_MESSAGE = "Amendments are not possible for this booking"
PARTNER_DOWN_FAILURES = 2
PARTNER_CANCEL_REASON = "Driver unavailable"


def active_scenarios(surname: str, flight_number: str) -> frozenset[Scenario]:
    values = {
        "passenger_info.surname": surname.strip().upper(),
        "flight_info.flight_number": normalise(flight_number) or "",
    }
    return frozenset(
        s
        for s, trigger in SCENARIOS.items()
        if values.get(trigger.field)
        == (normalise(s.value) if trigger.field == "flight_info.flight_number" else s.value)
    )
