"""Which language a traveller is spoken to in (docs/rules/messages.md#languages). Pure.

A language tag is BCP 47 (``pt-BR``, ``de``, ``en-GB``); it is matched by its primary subtag only
(``pt-BR`` -> ``pt``). A tag that is malformed or names a language the service does not speak counts as
absent, so the next source in the order decides.
"""

from __future__ import annotations

import re

# The seven languages of docs/rules/messages.md#languages, English first (the fallback of every text).
LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "it", "pt", "nl")
DEFAULT_LANGUAGE = "en"

# BCP 47 in the shape that matters here: a primary subtag of 2-3 letters (or 5-8 for the registered
# ones), then subtags of 1-8 letters or digits. Longer than 35 characters (the column) is refused.
_TAG = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$|^[A-Za-z]{5,8}(?:-[A-Za-z0-9]{1,8})*$")
MAX_TAG_LENGTH = 35
# At most this many ranges of one Accept-Language header are read (a header is untrusted input).
MAX_ACCEPT_RANGES = 20


def primary_language(tag: str | None) -> str | None:
    """The service's language a BCP 47 tag asks for, by its primary subtag (``"pt-BR"`` -> ``"pt"``), or
    None when the tag is absent, malformed or names a language the service does not speak."""
    if not tag or len(tag) > MAX_TAG_LENGTH:
        return None
    tag = tag.strip().replace("_", "-")
    if not _TAG.match(tag):
        return None
    primary = tag.split("-", 1)[0].lower()
    return primary if primary in LANGUAGES else None


def accept_language(header: str | None) -> str | None:
    """The service's language an ``Accept-Language`` header prefers most (RFC 9110 section 12.5.4): the
    ranges ordered by their ``q`` weight (1 when absent; a malformed weight makes the range count as 0;
    equal weights keep the header's order), the first that names one of ``LANGUAGES`` by its primary
    subtag wins; ``*`` and ranges of weight 0 never pick one. None when nothing matches."""
    if not header:
        return None
    weighted: list[tuple[float, int, str]] = []
    for index, item in enumerate(header.split(",")[:MAX_ACCEPT_RANGES]):
        parts = [part.strip() for part in item.split(";")]
        language_range = parts[0]
        weight = 1.0
        for param in parts[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                weight = _weight(value.strip())
        if language_range and language_range != "*" and weight > 0:
            weighted.append((-weight, index, language_range))
    for _, _, language_range in sorted(weighted):
        found = primary_language(language_range)
        if found is not None:
            return found
    return None


def _weight(value: str) -> float:
    """A ``q`` value: 0 to 1 with at most three decimals; anything else counts as 0 (never chosen)."""
    if not re.fullmatch(r"0(\.\d{0,3})?|1(\.0{0,3})?", value):
        return 0.0
    return float(value)


def message_language(passenger_language: str | None, default_language: str | None) -> str:
    """A message's language: the passenger's tag matched by its primary subtag, else the client's
    default language, else English (docs/rules/messages.md#languages)."""
    return primary_language(passenger_language) or primary_language(default_language) or DEFAULT_LANGUAGE


def page_language(
    asked: str | None, passenger_language: str | None, accept_language_header: str | None, default_language: str | None
) -> str:
    """The traveller page's language, in this order (docs/rules/messages.md#languages): ``?lang=``, the
    booking's passenger language, the ``Accept-Language`` header, the client's default language, English.
    Each source that is absent, malformed or unsupported passes to the next."""
    return (
        primary_language(asked)
        or primary_language(passenger_language)
        or accept_language(accept_language_header)
        or primary_language(default_language)
        or DEFAULT_LANGUAGE
    )
