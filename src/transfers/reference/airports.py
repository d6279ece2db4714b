"""Airports from the maintained ``airportsdata`` dataset (IATA codes, coordinates, IANA zones)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import airportsdata


@dataclass(frozen=True, slots=True)
class Airport:
    iata: str
    name: str
    lat: float
    lng: float
    tz: ZoneInfo


@lru_cache(maxsize=1)
def dataset() -> dict[str, Any]:
    """The whole IATA table, loaded once per process (a few MB, ~0.2 s): every user (search, the
    sandbox partner's fares, the CLI's service-area check) shares this one copy."""
    return dict(airportsdata.load("IATA"))


def is_known(code: str) -> bool:
    """``code`` names an airport in the dataset (exactly, upper case)."""
    return code in dataset()


@lru_cache(maxsize=4096)
def find_airport(code: str) -> Airport | None:
    """The airport for a three-letter code (any case), or None when unknown or without a time zone."""
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        return None
    row = dataset().get(code.upper())
    if row is None:
        return None
    try:
        tz = ZoneInfo(str(row["tz"]))
    except (ZoneInfoNotFoundError, ValueError, KeyError):
        return None
    return Airport(code.upper(), str(row["name"]), float(row["lat"]), float(row["lon"]), tz)


@lru_cache(maxsize=4096)
def country_of(code: str) -> str | None:
    """The ISO 3166 country of the airport with this three-letter code (any case), or None when unknown:
    the country a driver's phone typed without its country code is read in (``reference/phones.py``)."""
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        return None
    row = dataset().get(code.upper())
    country = str(row.get("country") or "") if row is not None else ""
    return country if len(country) == 2 and country.isalpha() else None


def local_time(iata: str, instant: datetime) -> datetime:
    """``instant`` in the airport's own time zone (what clients and partners are shown)."""
    airport = find_airport(iata)
    return instant.astimezone(airport.tz) if airport else instant


def great_circle_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Haversine distance on a sphere of the Earth's mean radius."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(a))
