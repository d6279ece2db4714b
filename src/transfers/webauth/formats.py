"""How the three web areas (console, portal, agency) write what every page shows: an instant at the
airport and in UTC, a long text cut short, a count with its noun. Shared here, below the areas, so
each area imports none of the others (the layers contract in pyproject.toml). Pure."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from transfers.reference.airports import find_airport
from transfers.webauth.login_routes import utc

__all__ = ["airport_local", "counted", "excerpt", "moment_words", "utc", "utc_seconds"]

# The plural of the nouns the pages count; others take an "s".
_PLURALS = {"child": "children", "small bag": "small bags", "person": "people"}


def airport_local(value: datetime | None, iata: str | None) -> str:
    """The same instant at the airport: ``2026-11-23 18:30 (Europe/Paris, +01:00)``."""
    if value is None or not iata:
        return "—"
    airport = find_airport(iata)
    if airport is None:
        return "—"
    local = value.astimezone(airport.tz)
    offset = local.strftime("%z")
    return f"{local:%Y-%m-%d %H:%M} {airport.iata} local ({airport.tz.key}, {offset[:3]}:{offset[3:]})"


def utc_seconds(value: datetime | None) -> str:
    """An instant to the second (``2026-11-23 17:30:05 UTC``): a booking's story, where events
    within one minute (created, sent, approved) must read in order."""
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def excerpt(value: object, limit: int = 300) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counted(count: int, noun: str) -> str:
    """``counted(1, "suitcase")`` is "1 suitcase"; ``counted(2, "child")`` is "2 children"."""
    return f"{count} {noun if count == 1 else _PLURALS.get(noun, noun + 's')}"


_ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})")


def moment_words(text: str) -> str:
    """An ISO 8601 instant as the API writes it ("2026-11-27T14:30:00+00:00") as a page shows one
    ("2026-11-27 14:30 UTC", or "2026-11-27 14:30 (UTC+01:00)" in its own offset); any other text as
    it is."""
    if not _ISO_MOMENT.fullmatch(text):
        return text
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    offset = moment.utcoffset()
    if not offset:
        return f"{moment:%Y-%m-%d %H:%M} UTC"
    zone = f"{moment:%z}"
    return f"{moment:%Y-%m-%d %H:%M} (UTC{zone[:3]}:{zone[3:5]})"
