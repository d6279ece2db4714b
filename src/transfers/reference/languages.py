"""A passenger's language as the booking's create receives it: a BCP 47 tag (RFC 5646), kept normalized
or dropped (docs/rules/messages.md#languages). Pure; below the bookings, which keep it, and the messages,
which write in it.

``normalize_tag`` keeps a tag, in its canonical case (``pt-br`` -> ``pt-BR``, ``zh-hant-tw`` ->
``zh-Hant-TW``), when it is well formed and its primary language is a known ISO 639 language (Babel's
CLDR list, which knows ``ja`` and ``tlh`` but not ``xx``); anything else (not text, malformed, longer than
35 characters, private use only, grandfathered, an unknown language) is as if the traveller had given
none: ``None``, never an error.
"""

from __future__ import annotations

import re
from functools import cache

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
