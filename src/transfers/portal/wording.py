"""How the portal says things to a transport company's dispatcher: percentages as people
write them ("10 %", not "10.000 %"), statuses in words rather than ``PENDING_APPROVAL``, and the time
by which a waiting booking must be accepted (counts with the right plural, "1 suitcase", are
``webauth/formats.counted``, shared with the agency). Pure."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

STATUS_WORDS = {
    "PENDING": "Waiting for you to accept",
    "PENDING_APPROVAL": "Waiting for you to accept",
    "APPROVED": "Accepted",
    "CANCELLED": "Cancelled",
    "DECLINED": "Declined",
    "FAILED": "Failed",
    "COMPLETED": "Completed",
    "REFUNDED": "Refunded",
}


def percent(value: Decimal | int | float | str) -> str:
    """``Decimal("10.000")`` is "10 %"; ``Decimal("12.50")`` is "12.5 %" (no trailing zeros)."""
    number = Decimal(str(value))
    text = format(number.quantize(Decimal(1)) if number == number.to_integral() else number.normalize(), "f")
    return f"{text} %"


def status_words(status: str) -> str:
    return STATUS_WORDS.get(status, status.replace("_", " ").capitalize())


def accept_by(
    created_at: datetime, pickup_at: datetime, *, accept_hours: float, before_pickup_hours: float
) -> datetime:
    """When a waiting booking is declined and refunded unless accepted: its creation plus
    TRANSFERS_HOSTED_ACCEPT_HOURS, or TRANSFERS_HOSTED_ACCEPT_BEFORE_PICKUP_HOURS before pickup,
    whichever comes first (the rule ``hosted/jobs.py`` applies; docs/rules/hosted-partners.md)."""
    return min(created_at + timedelta(hours=accept_hours), pickup_at - timedelta(hours=before_pickup_hours))
