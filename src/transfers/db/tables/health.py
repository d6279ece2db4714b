"""Partner health (docs/rules/console.md, migration 0010): search calls per partner and minute, aggregated."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    Table,
    UniqueConstraint,
)

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

# --- docs/rules/console.md: partner health per minute, signing-secret rotation -------------------------
# Latency histogram bounds (milliseconds, each bucket counts durations <= its bound and above the
# previous one; the last column counts everything slower). Fixed: changing them is a migration.
LATENCY_BOUNDS_MS = (25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000)
LATENCY_COLUMNS = (*(f"lat_le_{bound}" for bound in LATENCY_BOUNDS_MS), "lat_inf")
# The partner client's outcomes (partners/client.py ``Outcome``), one counter column each.
SEARCH_OUTCOMES = ("ok", "timeout", "connect_error", "http_error", "invalid", "too_large", "redirect", "blocked")

# One row per partner and UTC minute with at least one search call: counts and a latency summary,
# never a row per call (partners/health.py buffers in-process and adds to these rows).
partner_search_minutes = Table(
    "partner_search_minutes",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("minute", UTCDateTime, nullable=False),
    Column("calls", Integer, nullable=False),
    *(Column(f"outcome_{name}", Integer, nullable=False, server_default="0") for name in SEARCH_OUTCOMES),
    Column("latency_sum_ms", BigInteger, nullable=False, server_default="0"),
    Column("latency_max_ms", Integer, nullable=False, server_default="0"),
    *(Column(name, Integer, nullable=False, server_default="0") for name in LATENCY_COLUMNS),
    UniqueConstraint("partner_id", "minute"),
    Index("ix_partner_search_minutes_minute", "minute"),
)
