"""Searches and the offers they stored, bookings, their status transitions, and the partner outbox
with every delivery attempt; plus the cancellation-policy and amendment columns
(docs/rules/cancellation.md, migration 0008) and the indexes the console's booking list needs (migration 0006).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.accounts import partners
from transfers.db.types import Money, UTCDateTime

searches = Table(
    "searches",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("search_id", String(64), nullable=False, unique=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("request", JSON, nullable=False),
    Column("airport_iata", String(3), nullable=False),
    Column("pickup_at", UTCDateTime, nullable=False),
    Column("pickup_location", JSON, nullable=False),
    Column("dropoff_location", JSON, nullable=False),
    Column("adult", Integer, nullable=False),
    Column("children", Integer, nullable=False),
    Column("infant", Integer, nullable=False),
    Column("distance_km", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
)

search_vehicles = Table(
    "search_vehicles",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    # No foreign keys here (migration 0021): the offers are written with their search, by the statement
    # that inserts it, on the search's answer path; each key cost a trigger per offer
    # (docs/operations/performance.md#searches).
    Column("search_pk", PK, nullable=False),
    Column("vehicle_no", Integer, nullable=False),
    Column("partner_id", PK, nullable=False),
    Column("partner_vehicle_id", String(200), nullable=False),
    Column("make", String(200), nullable=False),
    Column("model", String(200), nullable=False),
    Column("type", String(64), nullable=False),
    Column("max_passengers", Integer, nullable=False),
    Column("suitcases", Integer, nullable=False),
    Column("small_bags", Integer, nullable=False),
    Column("net_price", Money, nullable=False),
    Column("sell_price", Money, nullable=False),
    Column("currency", String(3), nullable=False),
    # [{"id": int, "partner_extra_id": str, "name": str, "pricing_type": str,
    #   "net_price": "1.00", "price": "1.10"}]
    Column("extras", JSON, nullable=False),
    UniqueConstraint("search_pk", "vehicle_no"),
)

bookings = Table(
    "bookings",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("reservation_no", String(32), nullable=False, unique=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("search_vehicle_id", ForeignKey("search_vehicles.id"), nullable=True),
    Column("status", String(32), nullable=False),
    Column("pay_type", String(32), nullable=False),
    Column("airport_iata", String(3), nullable=False),
    Column("pickup_at", UTCDateTime, nullable=False),
    Column("pickup_location", JSON, nullable=False),
    Column("dropoff_location", JSON, nullable=False),
    Column("flight_number", String(64), nullable=False),
    Column("extra_requests", Text, nullable=True),
    Column("adult", Integer, nullable=False),
    Column("children", Integer, nullable=False),
    Column("infant", Integer, nullable=False),
    Column("passenger_name", String(200), nullable=False),
    Column("passenger_surname", String(200), nullable=False),
    Column("passenger_email", String(320), nullable=False),
    Column("passenger_phone", String(32), nullable=False),
    Column("suitcase", Integer, nullable=False),
    Column("small_bags", Integer, nullable=False),
    Column("vehicle_make", String(200), nullable=False),
    Column("vehicle_model", String(200), nullable=False),
    Column("vehicle_type", String(64), nullable=False),
    Column("partner_vehicle_id", String(200), nullable=False),
    Column("total", Money, nullable=False),
    Column("net_total", Money, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("distance_km", Integer, nullable=True),
    Column("booking_type", String(16), nullable=False),
    # [{"id": int, "partner_extra_id": str, "name": str, "quantity": int, "price": "..."}]
    Column("extras", JSON, nullable=False),
    Column("partner_reference", String(200), nullable=True),
    Column("driver_name", String(200), nullable=True),
    Column("driver_phone", String(32), nullable=True),
    Column("driver_plate", String(32), nullable=True),
    Column("meeting_point", Text, nullable=True),
    Column("cancellation_reason_id", ForeignKey("cancellation_reasons.id"), nullable=True),
    Column("cancel_note", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # The Idempotency-Key of the request that created it: a retried create can never book twice.
    Column("idempotency_key", String(255), nullable=True),
    Column("synced_at", UTCDateTime, nullable=True),  # last reconciliation with the partner
    Column("cancel_idempotency_key", String(255), nullable=True),  # the key of the cancelling request
    # The ``sequence`` of the booking's last client event (docs/rules/webhooks.md).
    Column("event_sequence", Integer, nullable=False, server_default="0"),
    UniqueConstraint("client_id", "idempotency_key"),
    Index("ix_bookings_client_created", "client_id", "created_at", "id"),
    Index("ix_bookings_status_created", "status", "created_at"),
    Index("ix_bookings_status_pickup", "status", "pickup_at"),
)

booking_transitions = Table(
    "booking_transitions",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("booking_id", ForeignKey("bookings.id"), nullable=False, index=True),
    Column("from_status", String(32), nullable=True),
    Column("to_status", String(32), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("reason", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    # A message is for its recipient ("partner:12" for a partner call, or what its kind names); the
    # booking it is about and the partner it goes to are optional (migration 0022).
    Column("booking_id", ForeignKey("bookings.id"), nullable=True, index=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=True),
    Column("recipient", String(100), nullable=False),
    Column("kind", String(32), nullable=False),  # a delivery kind's name: booking.create, booking.update, ...
    Column("webhook_id", String(64), nullable=False, unique=True),
    Column("payload", JSON, nullable=False),
    # pending | delivered | failed (permanent error) | expired (deadline passed)
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("deadline_at", UTCDateTime, nullable=False),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    Index("ix_outbox_status_next", "status", "next_attempt_at"),
)

delivery_attempts = Table(
    "delivery_attempts",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("outbox_id", ForeignKey("outbox.id"), nullable=False, index=True),
    Column("attempt_no", Integer, nullable=False),
    Column("started_at", UTCDateTime, nullable=False),
    Column("duration_ms", Integer, nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("http_status", Integer, nullable=True),
    Column("error", Text, nullable=True),
    # The first 500 characters of the answer body, cleaned (partners/client.py ``answer_excerpt``);
    # NULL when no HTTP answer came (migration 0011).
    Column("answer_excerpt", Text, nullable=True),
)


# --- cancellation policies, fees and amendments (docs/rules/cancellation.md; migration 0008) -------------
# Columns added to existing tables, kept together here so the other issues' blocks never collide.
# A policy is its JSON tiers (``cancellation/policy.py``); NULL means "free until pickup".
partners.append_column(Column("cancellation_policy", JSON, nullable=True))  # the partner's default
search_vehicles.append_column(Column("cancellation_policy", JSON, nullable=True))  # as quoted
bookings.append_column(Column("cancellation_policy", JSON, nullable=True))  # as sold
bookings.append_column(Column("cancellation_fee", Money, nullable=True))  # kept on cancel
bookings.append_column(Column("cancellation_refund", Money, nullable=True))  # fee + refund = total
bookings.append_column(Column("cancelled_at", UTCDateTime, nullable=True))
bookings.append_column(Column("cancelled_by", String(16), nullable=True))  # client | partner | operator
# The latest amendment: {"status", "changes", "message", "requested_at", "decided_at"} (bookings/amend_rules.py).
bookings.append_column(Column("amendment", JSON, nullable=True))
bookings_created = Index("ix_bookings_created", bookings.c.created_at, bookings.c.id)
bookings_partner_created = Index(
    "ix_bookings_partner_created", bookings.c.partner_id, bookings.c.created_at, bookings.c.id
)
bookings_partner_reference = Index("ix_bookings_partner_reference", bookings.c.partner_reference)
bookings_surname = Index(
    "ix_bookings_surname_lower",
    func.lower(bookings.c.passenger_surname).label("surname_lower"),
    postgresql_ops={"surname_lower": "text_pattern_ops"},
).ddl_if(dialect="postgresql")
bookings_email = Index(
    "ix_bookings_email_lower",
    func.lower(bookings.c.passenger_email).label("email_lower"),
    postgresql_ops={"email_lower": "text_pattern_ops"},
).ddl_if(dialect="postgresql")
