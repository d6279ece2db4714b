"""What a search needs to know before it asks anyone: the enabled partners (their secrets opened)
and the vehicle types, read at most once per ``partner_cache_seconds`` per process.

Why: reading them was ~2 ms of every search (two queries and a connection checkout), a fifth of
the service's own time in a 10-partner search (docs/operations/performance-history.md#profile), for rows that change a
few times a year. The price is a bound, like the auth cache's: a partner enabled, disabled or
edited (``transfers partners ...``, any process) is seen by searches within that many seconds
(docs/operations/settings.md). ``0`` reads them on every search. Bookings, deliveries and the
reverse API never use this snapshot: they read the partner's row when they need it.

How the bound is kept cheaply (docs/operations/performance.md#partner-directory):

* **Staleness.** A snapshot is served while less than the TTL has passed since the read it came
  from *began* (a change committed after that moment is seen by the next read, so no search sees a
  change later than the TTL after it). In the TTL's last fifth (``REFRESH_AHEAD``), the first search to come starts a
  refresh in the background and is answered from the snapshot it has (stale-while-revalidate); only
  a search that finds the snapshot a whole TTL old waits, sharing one read with every other search
  that does. A refresh that fails is logged and leaves the snapshot to expire at its bound.
* **Unchanged data is not read again.** A refresh first reads a mark of every row of
  ``partners``, ``vehicle_types`` and ``rate_cards``, every column of them, so every write path
  counts, on any process: registration, edits, coverage, markup, status, hosted flag, secrets and
  their rotation, cards, vehicle types, a hand-made UPDATE. On PostgreSQL the mark is the SHA-256 of the
  rows as PostgreSQL writes them out as text (not MD5: refused by a FIPS build), on SQLite (no hash
  function) that text itself (``quote()`` of
  each column). Equal to the mark of the snapshot's own read, the snapshot is kept (its age counted
  again from the check's start); otherwise everything is read again, with the mark, from one view
  of the rows (a REPEATABLE READ transaction on PostgreSQL), so a mark always describes exactly the
  rows its snapshot was built from.
* Secrets are opened once per sealed text (``partners.service._opened`` remembers them: a rotated
  secret is a new sealed text, never a stale hit).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.partners.client import PartnerEndpoint
from transfers.partners.models import PartnerRecord
from transfers.partners.repository import PG_MARK, SQLITE_MARK, enabled_with_secrets
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
    # hosted partners' rate cards, parsed; a hosted partner without a card is not asked.
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


# The part of the TTL, at its end, in which a search starts a refresh in the background. Under load a
# snapshot is then read about every (1 - REFRESH_AHEAD) x TTL instead of every TTL: the price of
# never making a search wait (on SQLite every refresh is a full read, so kept small).
REFRESH_AHEAD = 0.2


class PartnerDirectory:
    def __init__(
        self, db: Database, box: SecretBox, ttl_seconds: float, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._db = db
        self._box = box
        self._ttl = ttl_seconds
        self._monotonic = monotonic
        self._snapshot: Snapshot | None = None
        self._mark: str | None = None  # the snapshot's mark (None: not known, read everything)
        self._read_at = 0.0  # when the read the snapshot is as good as began
        self._loading: asyncio.Task[Snapshot] | None = None

    async def snapshot(self) -> Snapshot:
        if self._ttl <= 0:
            return (await self._read(marked=False))[0]
        snapshot, age = self._snapshot, self._monotonic() - self._read_at
        if snapshot is not None and age < self._ttl:
            if age >= self._ttl * (1 - REFRESH_AHEAD):
                self._refreshing()  # in the background: this search goes on with the snapshot it has
            return snapshot
        return await asyncio.shield(self._refreshing())

    @property
    def _marking(self) -> DirectStatement:
        return SQLITE_MARK if self._db.is_sqlite else PG_MARK

    def _refreshing(self) -> asyncio.Task[Snapshot]:
        """The refresh under way (on this loop), or a new one."""
        loading = self._loading
        if loading is None or loading.done() or loading.get_loop() is not asyncio.get_running_loop():
            loading = self._loading = asyncio.ensure_future(self._refresh())
            loading.add_done_callback(_logged)
        return loading

    async def _refresh(self) -> Snapshot:
        started = self._monotonic()
        if self._snapshot is not None and self._mark is not None:
            found = await self._db.read_one(self._marking)
            if found is not None and found["mark"] == self._mark:
                self._read_at = started  # nothing changed since the snapshot's read: as good as new
                return self._snapshot
        snapshot, mark = await self._read()
        self._snapshot, self._mark, self._read_at = snapshot, mark, started  # valid from when it was read
        return snapshot

    async def _read(self, *, marked: bool = True) -> tuple[Snapshot, str | None]:
        """Everything and its mark from one view of the rows (``Database.read_consistent``).
        ``marked=False`` (no cache, ``ttl_seconds`` 0): no mark is kept, so none is computed, and a
        plain read serves."""
        mark = None
        async with self._db.read_consistent() if marked else self._db.read() as conn:
            if marked:
                mark = (await conn.execute(self._marking.statement)).scalar_one()
            rows = await enabled_with_secrets(conn)
            types = await vehicle_type_names(conn)
            stored = await cards_repo.cards_of(conn, [s.record.partner_id for s in rows if s.record.hosted])
        partners = tuple((sealed.record, endpoint(sealed, self._box)) for sealed in rows)
        return Snapshot(partners, frozenset(types), _parsed(stored)), mark


def _logged(task: asyncio.Task[Snapshot]) -> None:
    """A refresh nobody waited for (a background one) that failed: logged, not left unretrieved. The
    snapshot it was refreshing expires at its bound; the searches after that read (and fail) again."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.warning("partner_directory_refresh_failed", error=type(exc).__name__)


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
