"""Addresses and languages of messages to travellers (docs/rules/messages.md#languages). Pure.

* A message shows its address masked, never whole: ``+44 7*** ***456``, ``a***@example.com`` (the
  number's country code, its first national digit and its last three; the e-mail's first letter and
  its domain). The mask has the same shape whatever the number's length, so it tells nothing more.
* ``passenger.language`` arrives as a BCP 47 tag (RFC 5646). ``normalize_tag`` keeps it, in its
  canonical case (``pt-br`` -> ``pt-BR``), when it is well formed and its primary language is a known
  ISO 639 language (Babel's CLDR list); anything else (not text, malformed, over 35 characters, private
  use, an unknown language) is as if the traveller had given none: ``None``, never an error.
* ``language_of``: the language a message is written in: the passenger's, matched by its primary subtag
  against the seven languages, else the client's default, else English.
"""

from __future__ import annotations

import re
from functools import cache

import phonenumbers

from transfers.messages.models import FALLBACK_LANGUAGE, LANGUAGES

MAX_TAG = 35  # RFC 5646 4.4.1: the longest tag an implementation must keep

# RFC 5646's langtag (no grandfathered or private-use-only tags): language[-extlang]{0,3}, script,
# region, variants, extensions, private use.
_LANGTAG = re.compile(
    r"(?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4,8})"
    r"(?:-(?P<script>[a-z]{4}))?"
    r"(?:-(?P<region>[a-z]{2}|[0-9]{3}))?"
    r"(?P<variants>(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*)"
    r"(?P<extensions>(?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*)"
    r"(?P<private>-x(?:-[a-z0-9]{1,8})+)?",
    re.ASCII,
)


@cache
def _known_languages() -> frozenset[str]:
    from babel import Locale

    return frozenset(code for code in Locale("en").languages if isinstance(code, str) and code.isalpha())


def normalize_tag(value: object) -> str | None:
    """``value`` as a canonical BCP 47 tag, or None when it is not one this service knows."""
    if not isinstance(value, str):
        return None
    tag = value.strip().replace("_", "-").lower()
    if not tag or len(tag) > MAX_TAG:
        return None
    match = _LANGTAG.fullmatch(tag)
    if match is None:
        return None
    language = match["language"]
    if language.split("-")[0] not in _known_languages():
        return None
    parts = [language]
    if match["script"]:
        parts.append(match["script"].title())
    if match["region"]:
        parts.append(match["region"].upper())
    rest = (match["variants"] or "") + (match["extensions"] or "") + (match["private"] or "")
    return "-".join(parts) + rest


def primary_language(tag: str | None) -> str | None:
    """The primary subtag of a tag, when it is one of the seven languages (``pt-BR`` -> ``pt``)."""
    if not tag:
        return None
    primary = tag.strip().replace("_", "-").split("-")[0].lower()
    return primary if primary in LANGUAGES else None


def language_of(passenger_language: str | None, default_language: str | None) -> str:
    """The language of a message (docs/rules/messages.md#languages): the passenger's, else the client's
    default, else English. A malformed or unsupported value counts as absent."""
    return (
        primary_language(normalize_tag(passenger_language)) or primary_language(default_language) or FALLBACK_LANGUAGE
    )


def mask_phone(number: str | None) -> str | None:
    """``+447911123456`` -> ``+44 7*** ***456``."""
    if not number:
        return None
    digits = "".join(ch for ch in number if ch.isdigit())
    try:
        parsed = phonenumbers.parse(number if number.startswith("+") else "+" + digits, None)
        country = str(parsed.country_code)
        national = phonenumbers.national_significant_number(parsed)
    except phonenumbers.NumberParseException:
        country, national = "", digits
    if len(national) < 5:
        return f"+{country} ***" if country else "***"
    head = f"+{country} " if country else ""
    return f"{head}{national[0]}*** ***{national[-3:]}"


def mask_email(address: str | None) -> str | None:
    """``alice@example.com`` -> ``a***@example.com``."""
    if not address:
        return None
    local, at, domain = address.rpartition("@")
    if not at:
        return "***"
    return f"{local[:1]}***@{domain}"


def mask(channel: str, address: str | None) -> str | None:
    """The address as shown anywhere (the API, the pages, the CLI): masked by its channel."""
    return mask_phone(address) if channel == "sms" else mask_email(address)
