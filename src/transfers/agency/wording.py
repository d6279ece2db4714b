"""How the agency portal says things to a travel agent (docs/rules/agency-portal.md#pages): money with
its currency ("45.00 EUR"), statuses in words rather than ``PENDING_APPROVAL``, pickup times at the
airport ("Fri 27 Nov 2026, 14:30 at LHR (Europe/London)"). Pure."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation

from transfers.search.airports import find_airport

STATUS_WORDS = {
    "PENDING": "Waiting for the transport company",
    "PENDING_APPROVAL": "Waiting for the transport company to accept",
    "APPROVED": "Confirmed",
    "CANCELLED": "Cancelled",
    "DECLINED": "Declined by the transport company",
    "FAILED": "Failed",
    "COMPLETED": "Completed",
    "REFUNDED": "Refunded",
}


def status_words(status: object) -> str:
    text = "" if status is None else str(status)
    return STATUS_WORDS.get(text, text.replace("_", " ").capitalize())


def money(amount: object, currency: object = "") -> str:
    """``money(Decimal("45"), "EUR")`` is "45.00 EUR"; a missing amount is "—"."""
    if amount is None or amount == "":
        return "—"
    try:
        value = Decimal(str(amount)).quantize(Decimal("0.01"))
    except InvalidOperation:
        return str(amount)
    return f"{value:,.2f} {currency or ''}".strip()


def at_airport(value: datetime | None, iata: object) -> str:
    """An instant as the clock at the airport shows it, which is what a traveller and a driver go by:
    ``Fri 27 Nov 2026, 14:30 (LHR local time)``."""
    if value is None:
        return "—"
    airport = find_airport(str(iata)) if iata else None
    if airport is None:
        return value.strftime("%a %d %b %Y, %H:%M UTC")
    local = value.astimezone(airport.tz)
    return f"{local:%a %d %b %Y, %H:%M} ({airport.iata} local time)"
