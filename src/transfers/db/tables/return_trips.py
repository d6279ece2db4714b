"""Return trips (docs/rules/return-trips.md; migration 0017): the return time a search was
asked for, which leg each offered vehicle is for, and the trip each booking belongs to.

Columns appended to existing tables, kept together here so the other issues' blocks never collide.
"""

from __future__ import annotations

from sqlalchemy import Column, Index, SmallInteger, String

from transfers.db.tables.bookings import bookings, search_vehicles, searches
from transfers.db.types import UTCDateTime

# docs/rules/return-trips.md#search: the return pickup the search priced (NULL: a one-way search).
searches.append_column(Column("return_pickup_at", UTCDateTime, nullable=True))
# 1: an offer of ``vehicles`` (the way out), 2: of ``return_vehicles`` (the way back). One numbering
# per search (``vehicle_no`` unique per search), so the two lists' ids never meet.
search_vehicles.append_column(Column("leg", SmallInteger, nullable=False, server_default="1"))
# docs/rules/return-trips.md#legs: the trip ("TR-..."), this booking's leg (1 out, 2 back) and the
# other leg's reservation number, written with both bookings in one transaction; NULL for a single booking.
bookings.append_column(Column("trip_id", String(32), nullable=True))
bookings.append_column(Column("trip_leg", SmallInteger, nullable=True))
bookings.append_column(Column("trip_other_reservation_no", String(32), nullable=True))
bookings_trip = Index("ix_bookings_trip_id", bookings.c.trip_id)
