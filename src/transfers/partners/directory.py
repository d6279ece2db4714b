"""What a search needs to know before it asks anyone: the enabled partners (their secrets opened)
and the vehicle types, read at most once per ``partner_cache_seconds`` per process.

Why: reading them was ~2 ms of every search (two queries and a connection checkout), a fifth of
the service's own time in a 10-partner search (bench/README.md, "Profile"), for rows that change a
few times a year. The price is a bound, like the auth cache's: a partner enabled, disabled or
edited (``transfers partners ...``, any process) is seen by searches within that many seconds
(docs/operations/settings.md). ``0`` reads them on every search. Concurrent searches that find the snapshot
expired share one read. Bookings, deliveries and the reverse API never use this snapshot: they
read the partner's row when they need it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from transfers.db.engine import Database
from transfers.partners.client import PartnerEndpoint
from transfers.partners.models import PartnerRecord
from transfers.partners.repository import enabled_with_secrets
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import endpoint
from transfers.ratecards import repository as cards_repo
from transfers.ratecards.card import RateCard, load_stored
from transfers.reference.repository import vehicle_type_names

log = structlog.get_logger("transfers.partners")


@dataclass(frozen=True)
class Snapshot:
    partners: tuple[tuple[PartnerRecord, PartnerEndpoint], ...]
    vehicle_types: frozenset[str]
    # issue 16: hosted partners' rate cards, parsed; a hosted partner without a card is not asked.
    cards: Mapping[int, RateCard] = field(default_factory=dict)
    # Per airport, who serves it: worked out once per snapshot, not per search (a scan of every
    # enabled partner). A snapshot never changes, so neither does the answer.
    _by_airport: dict[str, tuple[list[Any], list[Any]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _serving(self, iata: str) -> tuple[list[Any], list[Any]]:
        found = self._by_airport.get(iata)
        if found is None:
            found = self._by_airport[iata] = (
                [(record, point) for record, point in self.partners if record.serves(iata) and not record.hosted],
                [
                    (record, self.cards[record.partner_id])
                    for record, _ in self.partners
                    if record.hosted and record.serves(iata) and record.partner_id in self.cards
                ],
            )
        return found

    def serving(self, iata: str) -> list[tuple[PartnerRecord, PartnerEndpoint]]:
        """The server partners serving the airport (hosted ones: ``hosted_serving``). The list is
        shared by every search of this snapshot: read it, never change it."""
        return self._serving(iata)[0]

    def hosted_serving(self, iata: str) -> list[tuple[PartnerRecord, RateCard]]:
        return self._serving(iata)[1]


class PartnerDirectory:
    def __init__(self, db: Database, box: SecretBox, ttl_seconds: float) -> None:
        self._db = db
        self._box = box
        self._ttl = ttl_seconds
        self._snapshot: Snapshot | None = None
        self._expires = 0.0
        self._loading: asyncio.Future[Snapshot] | None = None

    async def snapshot(self) -> Snapshot:
        if self._ttl <= 0:
            return await self._read()
        if self._snapshot is not None and time.monotonic() < self._expires:
            return self._snapshot
        loading = self._loading
        if loading is None or loading.done() or loading.get_loop() is not asyncio.get_running_loop():
            loading = asyncio.ensure_future(self._refresh())
            self._loading = loading
        return await asyncio.shield(loading)

    async def _refresh(self) -> Snapshot:
        started = time.monotonic()
        snapshot = await self._read()
        self._snapshot, self._expires = snapshot, started + self._ttl  # valid from when it was read
        return snapshot

    async def _read(self) -> Snapshot:
        async with self._db.read() as conn:
            rows = await enabled_with_secrets(conn)
            types = await vehicle_type_names(conn)
            stored = await cards_repo.cards_of(conn, [s.record.partner_id for s in rows if s.record.hosted])
        return Snapshot(
            tuple((sealed.record, endpoint(sealed, self._box)) for sealed in rows), frozenset(types), _parsed(stored)
        )


def _parsed(stored: Mapping[int, dict[str, Any]]) -> dict[int, RateCard]:
    """Cards as the pricing reads them; one that no longer parses (a schema change since it was set)
    leaves its partner out of searches, logged, rather than failing every search."""
    cards = {}
    for partner_id, document in stored.items():
        try:
            cards[partner_id] = load_stored(document)
        except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
            log.error("rate_card_unreadable", partner_id=partner_id, reason=type(exc).__name__)
    return cards
