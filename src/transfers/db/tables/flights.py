"""Flight tracking (migration 0012, docs/rules/flights.md).

* ``flight_watches``: one row per flight number, arrival airport and local date, however many bookings
  share it (docs/rules/flights.md#watching: one provider call each): when it is checked next, the lease of
  the worker checking it (``lease_until``: several workers never check one flight at once), the last
  report and the last failure.
* ``bookings.original_pickup_at`` (as booked; ``pickup_at`` is the current pickup), ``flight_state`` (the
  booking's ``flight`` as last checked, JSON), ``flight_disrupted_at`` (the disruption mark: cancelling is
  free from then on), ``free_wait_minutes`` (the partner's free wait at airports as sold; NULL: the
  default), ``flight_watch_id`` (the watch it shares; NULL: not watched).
* ``partners.follow_flight_minutes`` (0..1440, 180) and ``free_wait_minutes`` (0..240, 60): the partner's
  limits (docs/rules/flights.md#partner-policy).
* ``client_events.data``: what an event carries besides the booking (``booking.pickup_time_changed``:
  ``previous_pickup_datetime`` and ``reason``).
"""

from __future__ import annotations

from sqlalchemy import JSON, CheckConstraint, Column, ForeignKey, Index, Integer, String, Table, Text, UniqueConstraint

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.accounts import partners
from transfers.db.tables.bookings import bookings
from transfers.db.tables.webhooks import client_events
from transfers.db.types import UTCDateTime

DEFAULT_FOLLOW_FLIGHT_MINUTES = 180
DEFAULT_FREE_WAIT_MINUTES = 60

flight_watches = Table(
    "flight_watches",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("number", String(16), nullable=False),
    Column("airport_iata", String(3), nullable=False),
    Column("local_date", String(10), nullable=False),  # YYYY-MM-DD at the arrival airport
    Column("scheduled_arrival", UTCDateTime, nullable=False),  # what the provider is asked about
    Column("next_check_at", UTCDateTime, nullable=True),  # NULL: the watch is over
    Column("lease_until", UTCDateTime, nullable=True),  # a worker is checking it until then
    Column("called_at", UTCDateTime, nullable=True),  # the last provider call (the per-minute budget)
    Column("checked_at", UTCDateTime, nullable=True),  # the last answer
    Column("report", JSON, nullable=True),  # the last answer, as FlightReport's fields
    Column("failures", Integer, nullable=False, server_default="0"),  # in a row
    Column("last_error", Text, nullable=True),
    UniqueConstraint("number", "airport_iata", "local_date"),
    Index("ix_flight_watches_due", "next_check_at"),
    Index("ix_flight_watches_called", "called_at"),
)

bookings.append_column(Column("original_pickup_at", UTCDateTime, nullable=True))
bookings.append_column(Column("flight_state", JSON, nullable=True))
bookings.append_column(Column("flight_disrupted_at", UTCDateTime, nullable=True))
bookings.append_column(Column("free_wait_minutes", Integer, nullable=True))  # the partner's, as sold
bookings.append_column(Column("flight_watch_id", ForeignKey("flight_watches.id"), nullable=True, index=True))
partners.append_column(
    Column("follow_flight_minutes", Integer, nullable=False, server_default=str(DEFAULT_FOLLOW_FLIGHT_MINUTES))
)
partners.append_column(
    Column("free_wait_minutes", Integer, nullable=False, server_default=str(DEFAULT_FREE_WAIT_MINUTES))
)
partners.append_constraint(
    CheckConstraint("follow_flight_minutes BETWEEN 0 AND 1440", name="follow_flight_minutes_range")
)
partners.append_constraint(CheckConstraint("free_wait_minutes BETWEEN 0 AND 240", name="free_wait_minutes_range"))
client_events.append_column(Column("data", JSON, nullable=True))
