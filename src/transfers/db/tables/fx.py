"""Exchange rates (migration 0024, docs/rules/fx.md).

* ``fx_rates``: reference rates from EUR, one per currency, source and date (``ecb``: loaded from an
  ECB file, by the scheduled fetch, ``transfers fx fetch`` or ``transfers fx import``; ``manual``:
  ``transfers fx set``). The sandbox table is not stored: it is the same every day (``fx.rates``).
  ``rate`` is the decimal as published or typed, kept as text: exact on both databases (SQLite's
  NUMERIC would make it a binary float) and never rounded.
* ``fx_fetches``: one row (id 1) for the scheduled fetch of the ECB file: when it was last tried
  (several workers claim it by a conditional UPDATE, so one fetches), when it last succeeded, and
  the last failure, which ``transfers doctor`` shows.
"""

from __future__ import annotations

from sqlalchemy import JSON, CheckConstraint, Column, Date, Integer, String, Table, Text, UniqueConstraint

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.bookings import bookings, search_vehicles
from transfers.db.types import Money, UTCDateTime

fx_rates = Table(
    "fx_rates",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("currency", String(3), nullable=False),
    Column("source", String(8), nullable=False),
    Column("as_of", Date, nullable=False),
    Column("rate", String(24), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("actor", String(200), nullable=True),  # who set a manual rate or imported a file
    UniqueConstraint("currency", "source", "as_of"),
    CheckConstraint("source IN ('ecb', 'manual')", name="source"),
)

fx_fetches = Table(
    "fx_fetches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("attempted_at", UTCDateTime, nullable=True),
    Column("succeeded_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    CheckConstraint("id = 1", name="one_row"),
)

# Converted offers and bookings (migration 0030, docs/rules/fx.md#search): the rate used (NULL: nothing was
# converted) and the partner's own currency and net amount beside the converted ones they are sold in.
search_vehicles.append_column(Column("fx", JSON, nullable=True))
search_vehicles.append_column(Column("partner_currency", String(3), nullable=True))
search_vehicles.append_column(Column("partner_net_price", Money, nullable=True))
bookings.append_column(Column("fx", JSON, nullable=True))
bookings.append_column(Column("partner_currency", String(3), nullable=True))
bookings.append_column(Column("partner_net_total", Money, nullable=True))
