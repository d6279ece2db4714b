"""The gettext catalogs (docs/rules/messages.md#languages): ``locale/<lang>/LC_MESSAGES/messages.po``,
one per language but English, whose texts are the message ids themselves.

Why the ``.po`` files are compiled when first used rather than ``.mo`` files committed beside them: a
binary file in the repository can drift from the text a reviewer reads, and compiling seven small
catalogs with Babel's own writer (what ``pybabel compile`` runs) takes a few milliseconds once per
process. Fuzzy entries and empty translations are left out by that writer, so gettext answers the
English message id for them: a missing translation falls back to English text, never to an empty one.
"""

from __future__ import annotations

import gettext
from functools import lru_cache
from importlib import resources
from io import BytesIO

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from transfers.i18n.languages import DEFAULT_LANGUAGE, LANGUAGES

DOMAIN = "messages"


def po_text(language: str) -> str:
    """The ``.po`` source of a language's catalog (the package's data file)."""
    path = resources.files("transfers.i18n").joinpath("locale", language, "LC_MESSAGES", f"{DOMAIN}.po")
    return path.read_text(encoding="utf-8")


def compile_po(text: str) -> gettext.NullTranslations:
    """A ``.po`` text as gettext translations (Babel's reader and ``.mo`` writer, in memory)."""
    catalog = read_po(BytesIO(text.encode("utf-8")))
    buffer = BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


@lru_cache(maxsize=len(LANGUAGES))
def translations(language: str) -> gettext.NullTranslations:
    """The translations of one of ``LANGUAGES`` (English and anything unknown: the message ids as they are)."""
    if language == DEFAULT_LANGUAGE or language not in LANGUAGES:
        return gettext.NullTranslations()
    return compile_po(po_text(language))


def N_(message: str) -> str:
    """Marks an English text for extraction (``pybabel extract -k N_``); translated where the language is known."""
    return message


class Words:
    """One language's words: ``words("Call %(phone)s", phone=...)`` translates the English text and fills its
    named placeholders. A translation whose placeholders do not fit (one lost or invented) is not used: the
    English text is, so a line is never empty or broken."""

    def __init__(self, language: str) -> None:
        self.language = language if language in LANGUAGES else DEFAULT_LANGUAGE
        self._translations = translations(self.language)

    def __call__(self, message: str, **values: object) -> str:
        return self._filled(message, self._translations.gettext(message), values)

    def in_context(self, context: str, message: str, **values: object) -> str:
        """The same English text meaning something else here (a flight "Cancelled" is not a booking's)."""
        return self._filled(message, self._translations.pgettext(context, message), values)

    @staticmethod
    def _filled(message: str, translated: str, values: dict[str, object]) -> str:
        if not values:
            return translated
        try:
            return translated % values
        except (KeyError, ValueError, TypeError):
            return message % values
