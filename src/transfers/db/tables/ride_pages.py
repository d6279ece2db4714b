"""The traveller's and the driver's pages (docs/rules/ride.md#tracking-page and #driver-page;
migration 0014): the booking's tracking token and the hosted partners' driver links.

Both are capability URLs: the token is the only thing that opens the page, so each is stored with a
unique index (the page's lookup) and at least 128 random bits (``bookings/tracking_link.py``).
"""

from __future__ import annotations

import secrets

from sqlalchemy import Column, ForeignKey, Index, String, Table

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.bookings import bookings
from transfers.db.types import UTCDateTime

# Issued with the booking (in its INSERT: ``bookings/creating.py``, ``bookings/tracking_link.py``); the column's
# default gives one to a row inserted any other way. NULL only for rows older than the migration's backfill.
bookings.append_column(Column("tracking_token", String(32), nullable=True, default=lambda: secrets.token_urlsafe(16)))
bookings_tracking_token = Index("ix_bookings_tracking_token", bookings.c.tracking_token, unique=True)

# One driver link per booking at a time: issuing again after a revocation replaces the token (the
# old URL stops working at once); ``revoked_at`` set means the link opens nothing.
driver_links = Table(
    "driver_links",
    metadata,
    Column("booking_id", PK, ForeignKey("bookings.id"), primary_key=True),
    Column("token", String(32), nullable=False, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
    # when the page's last position was taken: one per 3 s per link (migration 0025)
    Column("last_position_at", UTCDateTime, nullable=True),
)
