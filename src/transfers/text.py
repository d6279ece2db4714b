"""Which characters a name or a free text sent on to partners and travellers may hold
(docs/rules/booking.md#text). Pure: the one rule every input model concerned asks.

Refused, because they hide or reorder what a reader sees, or break the screens, logs, CSV files and
e-mails the text ends up in: the C0 controls (U+0000-U+001F), DEL (U+007F), the C1 controls
(U+0080-U+009F), the bidirectional embeddings and overrides (U+202A-U+202E) and isolates
(U+2066-U+2069), and the line and paragraph separators (U+2028, U+2029). A bidirectional override in
a driver's or passenger's name makes ``Smith`` read as someone else on a partner's screen; the
invisible marks that real right-to-left names need (U+200E, U+200F, U+061C) are not refused.

A one-line value (a name, a flight number, an address, a plate, a phone) holds none of them. A free
text written over several lines (a passenger's requests, a meeting point, an incident's description, a
cancellation's note or reason) may also hold a line feed, a carriage return and a tab: a text area
sends them, and a reader sees them for what they are.
"""

from __future__ import annotations

import re

_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_MULTILINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
REFUSED = "control characters or bidirectional overrides"


def refused_character(value: str, *, multiline: bool = False) -> str | None:
    """The first character ``value`` may not hold, as its code point (``"U+202E"``), or None when it is
    clean. ``multiline``: a free text, where a line feed, a carriage return and a tab are allowed."""
    found = (_MULTILINE if multiline else _ONE_LINE).search(value)
    return None if found is None else f"U+{ord(found.group()):04X}"


def is_clean(value: str, *, multiline: bool = False) -> bool:
    return refused_character(value, multiline=multiline) is None


def without_refused(value: str, *, multiline: bool = True) -> str:
    """``value`` with every refused character removed: for the one optional text that is cleaned rather
    than refused (a client's cancellation note: a cancel never fails on its note)."""
    return (_MULTILINE if multiline else _ONE_LINE).sub("", value)
