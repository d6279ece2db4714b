"""How many SMS segments a text costs (docs/rules/messages.md#templates): GSM-7 or UCS-2, as the
networks count them (3GPP TS 23.038 and 23.040). Pure.

A text whose every character is in the GSM 03.38 alphabet (the basic table, or the extension table
whose characters take two septets: an escape, then the character) travels as GSM-7: 160 septets in one
segment; a longer text is split into segments of 153 (7 octets go to the concatenation header), and an
escape pair is never split across two. Any other character makes the whole text UCS-2: 70 UTF-16 code
units in one segment, else segments of 67, a surrogate pair never split.

Why written here: no package on PyPI that counts segments is kept up (the few there are unmaintained
single-author releases); docs/architecture/dependencies.md says so. The alphabet is a fixed table of the
standard, tested against hand-counted texts in tests/unit/test_message_segments.py.

``to_gsm7`` is what a message does before it goes by SMS: every character outside the GSM alphabet is
replaced by its nearest GSM letter (``á`` -> ``a``, ``ç`` -> ``c``, a typographic quote -> ``'``), as
providers' "smart encoding" does, so a Spanish Saturday (``sáb``) or a driver named João does not turn a
2-segment text into a 5-segment UCS-2 one.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

# GSM 03.38 basic character set (the escape 0x1B left out: it introduces the extension table).
GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
# The extension table: each costs two septets.
GSM7_EXTENSION = frozenset("\f^{}\\[~]|€")

GSM7_SINGLE, GSM7_PART = 160, 153
UCS2_SINGLE, UCS2_PART = 70, 67
# docs/rules/messages.md#templates: every SMS template fits this many segments in every language.
MAX_SEGMENTS = 3

# Characters without a decomposition into a GSM letter, and their nearest GSM text.
_NEAREST = {
    "ç": "c",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "ı": "i",
    "œ": "oe",
    "Œ": "OE",
    "þ": "th",
    "Þ": "Th",
    "ð": "d",
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "«": '"',
    "»": '"',
    "\u2013": "-",
    "\u2014": "-",
    "\u2026": "...",
    "\u00a0": " ",
    "\u202f": " ",
    "\u2009": " ",
    "\t": " ",
}


@dataclass(frozen=True, slots=True)
class Segments:
    """A text's encoding (``"GSM-7"`` or ``"UCS-2"``), its length in that encoding's units (septets or
    UTF-16 code units) and the number of segments it is sent as."""

    encoding: str
    units: int
    count: int


def is_gsm7(text: str) -> bool:
    return all(c in GSM7_BASIC or c in GSM7_EXTENSION for c in text)


def count(text: str) -> Segments:
    """The segments ``text`` is sent as."""
    if is_gsm7(text):
        sizes = [2 if c in GSM7_EXTENSION else 1 for c in text]
        return Segments("GSM-7", sum(sizes), _pack(sizes, GSM7_SINGLE, GSM7_PART))
    sizes = [2 if ord(c) > 0xFFFF else 1 for c in text]
    return Segments("UCS-2", sum(sizes), _pack(sizes, UCS2_SINGLE, UCS2_PART))


def _pack(sizes: list[int], single: int, part: int) -> int:
    """Segments for characters of these sizes: one when all fit ``single``; else filled ``part`` units at
    a time, a two-unit character (escape pair, surrogate pair) moving whole to the next segment."""
    total = sum(sizes)
    if total <= single:
        return 1 if total else 0
    segments, used = 1, 0
    for size in sizes:
        if used + size > part:
            segments, used = segments + 1, 0
        used += size
    return segments


def to_gsm7(text: str) -> str:
    """``text`` in the GSM alphabet: each other character replaced by its nearest GSM text (its letter
    without the accent, or the table above), else ``?``."""
    if is_gsm7(text):
        return text
    return "".join(_nearest(c) for c in text)


def _nearest(char: str) -> str:
    if char in GSM7_BASIC or char in GSM7_EXTENSION:
        return char
    if char in _NEAREST:
        return _NEAREST[char]
    # a precomposed letter whose accented form is in the alphabet stays whole (é, ñ); others lose the mark
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    if base and is_gsm7(base):
        return base
    return "?"
