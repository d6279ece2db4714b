"""The ride (docs/rules/ride.md; migration 0013): driver events and positions.

``ride_events`` is the record of what the partner reported, one row per type per booking: its
``UNIQUE (booking_id, type)`` is what makes two identical events sent at the same moment recorded
once, whatever the timing (docs/rules/ride.md#event-rules). ``ride_positions`` keeps every position
for 30 days after the ride (the scheduled ``prune_positions`` job deletes them).

The booking row carries the ride as the BookingResource shows it (``ride_milestones``: the recorded
events by ``occurred_at``; ``ride_position``: the latest position, with its time in
``ride_position_at`` so a late batch never overwrites a newer one): GET booking, the client's list
and every client webhook snapshot stay one-row reads of ``bookings``.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, Float, ForeignKey, Index, Integer, String, Table, UniqueConstraint

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.bookings import bookings
from transfers.db.types import UTCDateTime

ride_events = Table(
    "ride_events",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("booking_id", ForeignKey("bookings.id"), nullable=False),
    Column("type", String(32), nullable=False),
    Column("occurred_at", UTCDateTime, nullable=False),
    Column("lat", Float, nullable=True),
    Column("lng", Float, nullable=True),
    Column("received_at", UTCDateTime, nullable=False),
    Column("actor", String(200), nullable=False),  # partner:<id>, or the portal's / driver page's actor
    UniqueConstraint("booking_id", "type"),
    Index("ix_ride_events_received", "received_at"),
)

ride_positions = Table(
    "ride_positions",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("booking_id", ForeignKey("bookings.id"), nullable=False),
    Column("lat", Float, nullable=False),
    Column("lng", Float, nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("heading", Integer, nullable=True),
    Column("speed_kmh", Float, nullable=True),
    Column("received_at", UTCDateTime, nullable=False),
    Index("ix_ride_positions_booking_at", "booking_id", "at"),
)

# The ride as the booking shows it (docs/rules/ride.md#ride-field).
bookings.append_column(Column("ride_milestones", JSON, nullable=True))  # [{"type", "occurred_at", ...}]
bookings.append_column(Column("ride_position", JSON, nullable=True))  # {"lat", "lng", "at", "heading", "speed_kmh"}
bookings.append_column(Column("ride_position_at", UTCDateTime, nullable=True))
