"""What an incident may be and say (docs/rules/incidents.md). Pure: no SQL, no HTTP.

Every refusal is a domain error with the contract's code: ``INVALID_INCIDENT`` for a body that is
not a report, ``INCIDENT_NOT_ALLOWED`` outside the booking's window; an operator's resolution that
breaks a rule is ``InvalidResolution`` (the console re-renders its form with the message).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from transfers import money
from transfers.bookings.ride_field import RideEventType
from transfers.bookings.state import REFUNDING, BookingStatus
from transfers.errors import ErrorCode, Invalid, Refused
from transfers.text import REFUSED, refused_character

REPORT_WINDOW = timedelta(hours=72)  # docs/rules/incidents.md#report: from pickup until 72 h after
MAX_DESCRIPTION = 2000
MAX_NOTE = 2000
ZERO = Decimal("0.00")


class IncidentType(StrEnum):
    DRIVER_NO_SHOW = "DRIVER_NO_SHOW"
    DRIVER_LATE = "DRIVER_LATE"
    CUSTOMER_NO_SHOW = "CUSTOMER_NO_SHOW"
    WRONG_VEHICLE = "WRONG_VEHICLE"
    OTHER = "OTHER"


class IncidentStatus(StrEnum):
    OPEN = "OPEN"
    RESOLVED = "RESOLVED"


class Reporter(StrEnum):
    CLIENT = "client"
    PARTNER = "partner"
    OPERATOR = "operator"


class Responsible(StrEnum):
    PARTNER = "partner"
    CLIENT = "client"
    NONE = "none"


# docs/rules/incidents.md#report: a customer no-show is the partner's word, never the client's.
CLIENT_TYPES = (IncidentType.DRIVER_NO_SHOW, IncidentType.DRIVER_LATE, IncidentType.WRONG_VEHICLE, IncidentType.OTHER)
REPORTABLE = frozenset({BookingStatus.APPROVED, BookingStatus.COMPLETED})
_REPORT_KEYS = frozenset({"type", "description"})
_MONEY = re.compile(r"[0-9]{1,9}(\.[0-9]+)?")  # ASCII digits only: \d takes any script's


class InvalidResolution(Invalid):
    """An operator's resolution breaks a rule (refund out of range, unknown responsible, ...):
    nothing was written."""


def parse_report(body: dict[str, Any]) -> tuple[IncidentType, str]:
    """The type and description of a client's report (docs/rules/incidents.md#report), or
    ``INVALID_INCIDENT`` naming the first wrong field."""
    unknown = sorted(set(body) - _REPORT_KEYS)
    if unknown:
        raise Invalid(ErrorCode.INVALID_INCIDENT, f"Unknown field: {unknown[0]}.")
    kind = body.get("type")
    if not isinstance(kind, str) or kind not in {t.value for t in CLIENT_TYPES}:
        raise Invalid(
            ErrorCode.INVALID_INCIDENT,
            "type must be one of DRIVER_NO_SHOW, DRIVER_LATE, WRONG_VEHICLE, OTHER.",
        )
    description = body.get("description")
    if not isinstance(description, str):
        raise Invalid(ErrorCode.INVALID_INCIDENT, "description must be a string of 1..2000 characters.")
    found = refused_character(description, multiline=True)
    if found is not None:  # docs/rules/booking.md#text: the partner reads it in its portal and booking info
        raise Invalid(ErrorCode.INVALID_INCIDENT, f"description may not contain {REFUSED} ({found}).")
    description = description.strip()
    if not description or len(description) > MAX_DESCRIPTION:
        raise Invalid(ErrorCode.INVALID_INCIDENT, "description must be a string of 1..2000 characters.")
    return IncidentType(kind), description


def report_opens(pickup_at: datetime, completed_at: datetime | None) -> datetime:
    """When a report becomes possible (docs/rules/incidents.md#report): the pickup time, or the moment the
    booking became COMPLETED when that was earlier (a ride that ended before its booked pickup, e.g. the
    sandbox's compressed ride or a driver who came early, can be complained about at once)."""
    if completed_at is not None and completed_at < pickup_at:
        return completed_at
    return pickup_at


def check_reportable(
    status: BookingStatus, pickup_at: datetime, now: datetime, completed_at: datetime | None = None
) -> None:
    """docs/rules/incidents.md#report: APPROVED or COMPLETED, from the pickup time (or from the moment it
    became COMPLETED, when that was earlier) until 72 h after the pickup. ``completed_at`` is when the
    booking became COMPLETED (None while it is not)."""
    opens = report_opens(pickup_at, completed_at if status is BookingStatus.COMPLETED else None)
    if status not in REPORTABLE or not (opens <= now <= pickup_at + REPORT_WINDOW):
        raise Refused(ErrorCode.INCIDENT_NOT_ALLOWED)


def parse_refund(raw: object, unrefunded: Decimal, currency: str) -> Decimal:
    """An operator's refund: a plain decimal with at most the currency's decimals, 0 .. ``unrefunded``
    (docs/rules/incidents.md#resolve). Strings and Decimals only: a float would not be exact."""
    if isinstance(raw, Decimal):
        text = str(raw)
    elif isinstance(raw, str):
        text = raw.strip()
    else:
        raise InvalidResolution("Refund must be an amount like 12.50.")
    if text.startswith("-"):
        raise InvalidResolution("Refund cannot be negative.")
    example = money.text(Decimal("12.5"), currency) if money.places(currency) else money.text(Decimal(12), currency)
    shape = f"Refund must be an amount with {money.decimals_in_words(currency)}, like {example}."
    if not _MONEY.fullmatch(text):
        raise InvalidResolution(shape)
    try:
        amount = money.parse(text, currency)
    except money.MoneyError:
        raise InvalidResolution(shape) from None
    if amount > unrefunded:
        raise InvalidResolution(f"Refund cannot exceed what is still unrefunded ({money.text(unrefunded, currency)}).")
    return amount


def parse_responsible(raw: object) -> Responsible:
    if not isinstance(raw, str) or raw not in {r.value for r in Responsible}:
        raise InvalidResolution("Responsible must be partner, client or none.")
    return Responsible(raw)


def clean_note(raw: object) -> str:
    """The operator's note: required (it is what the client and partner read), 1..2000 characters."""
    text = raw.replace("\x00", "").strip() if isinstance(raw, str) else ""
    if not text:
        raise InvalidResolution("Give a note: it is what the client and the partner read.")
    if len(text) > MAX_NOTE:
        raise InvalidResolution(f"A note has at most {MAX_NOTE} characters.")
    return text


def unrefunded(status: BookingStatus, total: Decimal, incident_refunded: Decimal | None) -> Decimal:
    """What incidents may still refund of a booking's price: nothing once a refunding status gave
    the rest back (a later cancel or refund), else the price less the incidents' refunds so far."""
    if status in REFUNDING:
        return ZERO
    return total - (incident_refunded or ZERO)


# docs/rules/incidents.md#driver-no-show: the missing arrival is evidence only from a partner that reports its
# rides. Its driver-event coverage (the console's: the share of its COMPLETED bookings picked up in the last
# 30 days with all four milestones) is judged once it has at least MIN_RIDES of them, and must reach
# COVERED/OF, else the report waits for an operator.
COVERAGE_WINDOW = timedelta(days=30)
MIN_RIDES = 5
COVERED, OF = 4, 5  # 80 %
# Any of these on record says the driver came: the arrival itself, the passenger on board, the drop-off.
DRIVER_CAME = frozenset(
    {
        RideEventType.DRIVER_ARRIVED_AT_PICKUP,
        RideEventType.DRIVER_DEPARTED_TO_DROPOFF,
        RideEventType.DRIVER_ARRIVED_AT_DROPOFF,
    }
)


def reports_its_rides(completed: int, covered: int) -> bool:
    """Whether a partner's coverage lets a missing arrival count as evidence: too few completed rides to
    judge (fewer than MIN_RIDES in the window: the benefit of the doubt goes to the traveller, as for any
    partner), or at least 80 % of them with all four milestones."""
    return completed < MIN_RIDES or covered * OF >= completed * COVERED


def driver_no_show_decided(
    incident_type: IncidentType, recorded: frozenset[RideEventType], completed: int, covered: int
) -> bool:
    """docs/rules/incidents.md#driver-no-show: a client's DRIVER_NO_SHOW is resolved at once against the
    partner when nothing on record says the driver came (no arrival, no passenger on board, no drop-off)
    and the partner reports its rides (``reports_its_rides``: its coverage ``covered`` of ``completed``);
    otherwise it waits for an operator, who weighs the evidence. Without the coverage condition, a
    partner that sends no driver events would pay back every ride any client called a no-show."""
    return (
        incident_type is IncidentType.DRIVER_NO_SHOW
        and not recorded & DRIVER_CAME
        and reports_its_rides(completed, covered)
    )
