"""Partner scorecards (docs/rules/quality.md; migration 0028): the daily history.

One row per partner, day and airport (``airport_iata = '*'``: the partner as a whole), with the
scorecard document as computed. ``UNIQUE (partner_id, day, airport_iata)``: a day recomputed replaces
its rows. A run writes all its rows in one transaction, so a computation killed half-way leaves the
previous day's scores as they were, never a mixture. Rows older than 400 days go in that same
transaction.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Table, UniqueConstraint

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

ALL_AIRPORTS = "*"

partner_scorecards = Table(
    "partner_scorecards",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("day", String(10), nullable=False),  # YYYY-MM-DD (UTC) of as_of
    Column("airport_iata", String(3), nullable=False),  # '*': every airport
    Column("as_of", UTCDateTime, nullable=False),
    Column("score", Integer, nullable=False),
    Column("tier", String(16), nullable=False),
    Column("card", JSON, nullable=False),
    Column("computed_at", UTCDateTime, nullable=False),
    UniqueConstraint("partner_id", "day", "airport_iata"),
    Index("ix_partner_scorecards_day", "day"),
)
