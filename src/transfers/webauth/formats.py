"""How the three web areas (console, portal, agency) write what every page shows: an instant at the
airport and in UTC, a long text cut short, a count with its noun, an amount with its currency for
the reader's locale. Shared here, below the areas, so
each area imports none of the others (the layers contract in pyproject.toml). Pure."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from transfers import money
from transfers.reference.airports import find_airport
from transfers.webauth.login_routes import utc

__all__ = [
    "airport_local",
    "counted",
    "excerpt",
    "fx_words",
    "moment_words",
    "people_money",
    "reader_locale",
    "utc",
    "utc_seconds",
]

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


# An Accept-Language header longer than this is read no further (a browser sends a few dozen characters).
_MAX_ACCEPT_LANGUAGE = 300


@lru_cache(maxsize=256)
def reader_locale(accept_language: str) -> str:
    """The locale whose number format the reader's browser asks for (``Accept-Language``, by its ``q``
    weights), among the locales CLDR knows (Babel's data); ``money.PEOPLE_LOCALE`` when none fits. Only
    the amounts follow it (docs/architecture/money.md#pages): the pages' words stay English."""
    from babel import Locale, UnknownLocaleError

    weighted: list[tuple[float, int, str]] = []
    for order, part in enumerate(accept_language[:_MAX_ACCEPT_LANGUAGE].split(",")):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                continue
        if tag and tag != "*" and weight > 0 and tag.replace("-", "").isalnum() and tag.isascii():
            weighted.append((-weight, order, tag))
    for _, _, tag in sorted(weighted):
        try:
            return str(Locale.parse(tag.replace("-", "_")))
        except (ValueError, TypeError, UnknownLocaleError):
            continue
    return money.PEOPLE_LOCALE


def people_money(amount: object, currency: object, locale: str = money.PEOPLE_LOCALE) -> str:
    """An amount a page shows (a Decimal, or the API's text or JSON number) with its currency, for the
    reader (``money.for_people``): "£52.80", "¥10,010"; a missing amount is "—", and a value that is no
    amount of that currency is shown as it is rather than failing the page."""
    if amount is None or amount == "":
        return "—"
    try:
        return money.for_people(Decimal(str(amount)), str(currency), locale)
    except (InvalidOperation, money.MoneyError):
        return str(amount)


_SOURCE_WORDS = {"ecb": "the ECB's", "manual": "a manual", "sandbox": "the sandbox"}


def fx_words(fx: object) -> str:
    """The ``fx`` object of an offer or a booking's price in words (docs/rules/fx.md#search): "Converted
    from EUR at 1 EUR = 0.8563 GBP, the ECB's rate of 27 Nov 2026"; "" for none (nothing converted)."""
    if not isinstance(fx, dict) or not fx.get("rate"):
        return ""
    source = _SOURCE_WORDS.get(str(fx.get("source")), str(fx.get("source")))
    try:
        day = datetime.strptime(str(fx.get("as_of")), "%Y-%m-%d").strftime("%d %b %Y")
    except ValueError:
        day = str(fx.get("as_of"))
    came, went = fx.get("from_currency"), fx.get("to_currency")
    return f"Converted from {came} at 1 {came} = {fx['rate']} {went}, {source} rate of {day}"
