"""Dates and times as a language writes them (docs/rules/messages.md#languages), with Babel's locale
data. Pure. The time is always on the 24-hour clock: a locale whose short time is 12-hour gets ``HH:mm``.

English is written the British way (``Sat 5 Dec``, ``Saturday, 5 December 2026``): day before month,
which every English reader parses, where the American order (``Dec 5``) misleads a European reader of a
European pickup. Portuguese uses Babel's ``pt`` (Brazilian conventions; Portugal writes dates alike).
"""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache

from babel import Locale
from babel.dates import format_date, format_skeleton, format_time
from babel.numbers import format_decimal

from transfers.i18n.languages import DEFAULT_LANGUAGE, LANGUAGES

LOCALES = {"en": "en_GB", "de": "de", "fr": "fr", "es": "es", "it": "it", "pt": "pt", "nl": "nl"}


def locale_of(language: str) -> str:
    return LOCALES.get(language if language in LANGUAGES else DEFAULT_LANGUAGE, "en_GB")


@lru_cache(maxsize=16)
def _time_pattern(locale: str) -> str:
    pattern = str(Locale.parse(locale).time_formats["short"].pattern)
    return "HH:mm" if "h" in pattern or "a" in pattern or "K" in pattern else pattern


def clock(moment: datetime, language: str) -> str:
    """``14:30`` (``9:05`` in Spanish, which writes no leading zero): the time on the 24-hour clock, as the
    moment's own wall clock (pass it in the airport's zone). The two patterns the seven languages use are
    written directly (every page and message writes a few times: Babel's general formatter costs ~0.1 ms)."""
    locale = locale_of(language)
    pattern = _time_pattern(locale)
    if pattern == "HH:mm":
        return f"{moment:%H:%M}"
    if pattern == "H:mm":
        return f"{moment.hour}:{moment:%M}"
    return format_time(moment, pattern, tzinfo=moment.tzinfo, locale=locale)


def short_date(moment: datetime, language: str) -> str:
    """``Sat 5 Dec``, ``Sa., 5. Dez.``: weekday, day and month, for a text message (the moment's own date)."""
    return _skeleton(moment.date(), "MMMEd", locale_of(language))


def long_date(moment: datetime, language: str) -> str:
    """``Saturday, 5 December 2026``, ``samedi 5 décembre 2026``: the full date, for an e-mail or a page."""
    return _full(moment.date(), locale_of(language))


# A day's words are the same all day: the pages and messages of a day's pickups share them.
@lru_cache(maxsize=4096)
def _skeleton(day: date, skeleton: str, locale: str) -> str:
    return format_skeleton(skeleton, day, locale=locale)


@lru_cache(maxsize=4096)
def _full(day: date, locale: str) -> str:
    return format_date(day, "full", locale=locale)


def short_date_with_year(moment: datetime, language: str) -> str:
    """``Sa., 5. Dez. 2026``: weekday, day, month and year."""
    return _skeleton(moment.date(), "yMMMEd", locale_of(language))


def decimal(value: float, language: str, pattern: str = "0.0") -> str:
    """A number as the language writes it: ``4.2``, ``4,2``."""
    return format_decimal(value, format=pattern, locale=locale_of(language))
