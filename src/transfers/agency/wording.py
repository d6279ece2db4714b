"""How the agency portal says things to a travel agent (docs/rules/agency-portal.md#pages): statuses in
words rather than ``PENDING_APPROVAL``, pickup times at the airport ("Fri 27 Nov 2026, 14:30 at LHR
(Europe/London)"). Amounts are the shared ``money`` filter's (webauth/formats.py). Pure."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from transfers.reference.airports import find_airport
from transfers.webauth.formats import moment_words

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


def _fee(percent: object) -> str:
    number = Decimal(str(percent))
    shown = format(number.normalize(), "f") if number != number.to_integral_value() else str(int(number))
    return "free" if number == 0 else f"{shown} % of the price"


def _hours(hours: int) -> str:
    return "1 hour" if hours == 1 else f"{hours} hours"


def policy_words(tiers: list[dict[str, Any]], free_until_local: str | None = None) -> list[str]:
    """A cancellation policy (the API's ``tiers``: ``hours_before_pickup`` and ``fee_percent``, by
    hours descending, the last at 0) as sentences (docs/rules/cancellation.md): "Cancel up to 48
    hours before pickup: free", "Between 48 and 24 hours before pickup: 50 % of the price", "In the
    last 24 hours: 100 % of the price"; with ``free_until_local`` (the airport's clock) a first line
    "Free cancellation until Fri 27 Nov 2026, 14:30 (airport time)"."""
    ordered = sorted(tiers, key=lambda t: -int(t["hours_before_pickup"]))
    lines: list[str] = []
    if free_until_local:
        moment = datetime.fromisoformat(free_until_local)
        lines.append(f"Free cancellation until {moment:%a %d %b %Y, %H:%M} (airport time).")
    if len(ordered) == 1:
        fee = _fee(ordered[0]["fee_percent"])
        lines.append("Cancelling is free at any time before pickup." if fee == "free" else f"Cancelling costs {fee}.")
        return lines
    for i, tier in enumerate(ordered):
        hours = int(tier["hours_before_pickup"])
        fee = _fee(tier["fee_percent"])
        if i == 0:
            lines.append(f"Cancel {_hours(hours)} or more before pickup: {fee}.")
        elif hours == 0:
            lines.append(f"In the last {_hours(int(ordered[i - 1]['hours_before_pickup']))}: {fee}.")
        else:
            before = int(ordered[i - 1]["hours_before_pickup"])
            lines.append(f"Between {before} and {hours} hours before pickup: {fee}.")
    return lines


def flattened(value: object, prefix: str = "") -> list[tuple[str, str]]:
    """Every field of a JSON document as ("passenger.surname", "Lovelace") rows: the booking page's
    "everything the API answers" table, which shows any field a feature adds to the resource."""
    if isinstance(value, dict):
        if not value and prefix:
            return [(prefix, "—")]
        rows: list[tuple[str, str]] = []
        for key, item in value.items():
            rows += flattened(item, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(value, list):
        if not value:
            return [(prefix, "—")]
        if all(not isinstance(item, dict | list) for item in value):
            return [(prefix, ", ".join(str(item) for item in value))]
        rows = []
        for i, item in enumerate(value):
            rows += flattened(item, f"{prefix}[{i}]")
        return rows
    if value is None:
        return [(prefix, "—")]
    if isinstance(value, bool):
        return [(prefix, "yes" if value else "no")]
    return [(prefix, moment_words(value) if isinstance(value, str) else str(value))]
