"""What every geocoder answers (docs/rules/agency-portal.md#geocoder): a ``Place`` per match, through the ``Geocoder``
protocol, so a page asks "where is 'Zürich'?" without knowing whether the answer came from the
offline gazetteer (``builtin.py``) or a Nominatim server (``nominatim.py``).

Errors: a geocoder that cannot answer (server down, rate-limited, slow, garbage) raises
``GeocoderUnavailable`` with a sentence a person can read; callers then offer coordinates instead.
No match at all is an empty list, not an error.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, Protocol

from transfers.errors import Unavailable

PlaceKind = Literal["city", "airport", "place"]
MAX_QUERY_CHARS = 200
DEFAULT_LIMIT = 8


@dataclass(frozen=True, slots=True)
class Place:
    """One match. ``country`` is the ISO 3166-1 alpha-2 code (upper case, "" when the source gave
    none); ``code`` is an airport's IATA code ("" otherwise)."""

    name: str
    country: str
    lat: float
    lng: float
    kind: PlaceKind
    code: str = ""

    @property
    def label(self) -> str:
        """How a page shows the match: "Zürich, CH", "Zurich Airport (ZRH), CH"."""
        name = f"{self.name} ({self.code})" if self.code else self.name
        return f"{name}, {self.country}" if self.country else name

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "country": self.country,
            "lat": self.lat,
            "lng": self.lng,
            "kind": self.kind,
            "code": self.code,
            "label": self.label,
        }


class GeocoderUnavailable(Unavailable):
    """The geocoder could not answer now; ``str()`` says why in words (no stack, no URL secrets). An
    ``Unavailable`` of the one error tree, so a caller that does not offer coordinates instead
    renders it as any other."""


class Geocoder(Protocol):
    name: str

    def start_warming(self) -> None:
        """Prepare in the background for a search that is likely soon (never blocks)."""
        ...

    async def search(
        self, text: str, *, near: tuple[float, float] | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[Place]:
        """Places matching ``text``, best first, at most ``limit``; those nearer ``near`` (lat, lng)
        first among equally good names. Empty or blank text: no places."""
        ...


_SEPARATORS = re.compile(r"[\s\-‐-―'’`.,/()]+")

# The combining diacritical blocks (Latin, Greek, Cyrillic accents): what "ü" leaves after NFKD.
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")


def fold(text: str) -> str:
    """The form both the gazetteer's names and a person's query are compared in: accents removed
    (NFKD, combining marks dropped: "Zürich" -> "zurich"), case folded ("ß" -> "ss"), hyphens,
    apostrophes and runs of spaces made one space. Non-Latin scripts keep their letters."""
    if text.isascii():
        return _SEPARATORS.sub(" ", text.lower()).strip()
    bare = _MARKS.sub("", unicodedata.normalize("NFKD", text))
    return _SEPARATORS.sub(" ", bare.casefold()).strip()


def clean_query(text: str) -> str:
    """The query as sent to a geocoder: control characters dropped, spaces collapsed, bounded."""
    printable = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return " ".join(printable.split())[:MAX_QUERY_CHARS]
