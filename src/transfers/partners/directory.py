"""What a search needs to know before it asks anyone: the enabled partners (their secrets opened)
and the vehicle types, read at most once per ``partner_cache_seconds`` per process.

Why: reading them was ~2 ms of every search (two queries and a connection checkout), a fifth of
the service's own time in a 10-partner search (bench/README.md, "Profile"), for rows that change a
few times a year. The price is a bound, like the auth cache's: a partner enabled, disabled or
edited (``transfers partners ...``, any process) is seen by searches within that many seconds
(README, settings). ``0`` reads them on every search. Concurrent searches that find the snapshot
expired share one read. Bookings, deliveries and the reverse API never use this snapshot: they
read the partner's row when they need it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from transfers.db.engine import Database
from transfers.partners.client import PartnerEndpoint
from transfers.partners.models import PartnerRecord
from transfers.partners.repository import enabled_with_secrets
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import endpoint
from transfers.reference.repository import vehicle_type_names


@dataclass(frozen=True)
class Snapshot:
    partners: tuple[tuple[PartnerRecord, PartnerEndpoint], ...]
    vehicle_types: frozenset[str]

    def serving(self, iata: str) -> list[tuple[PartnerRecord, PartnerEndpoint]]:
        return [(record, point) for record, point in self.partners if record.serves(iata)]


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
        return Snapshot(tuple((sealed.record, endpoint(sealed, self._box)) for sealed in rows),
                        frozenset(types))
