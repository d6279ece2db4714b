"""Webhooks to clients (docs/rules/webhooks.md, migration 0007): endpoints, events and their deliveries."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

# --- webhooks to clients (docs/rules/webhooks.md) -------------------------------------------------

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("public_id", String(40), nullable=False, unique=True),  # "we_..." as the API names it
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("url", String(2000), nullable=False),
    Column("events", JSON, nullable=False),  # ["*"] or event type names
    Column("description", String(500), nullable=True),
    Column("status", String(16), nullable=False),  # enabled | disabled
    # Encrypted with the deployment's secret key, like partner secrets: needed to sign.
    Column("secret_enc", Text, nullable=False),
    Column("old_secret_enc", Text, nullable=True),  # the secret before the last rotation ...
    Column("old_secret_until", UTCDateTime, nullable=True),  # ... still signed with until then
    Column("disabled_reason", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("deleted_at", UTCDateTime, nullable=True),  # deleted endpoints keep their delivery history
    CheckConstraint("status IN ('enabled', 'disabled')", name="status"),
    Index("ix_webhook_endpoints_client", "client_id", "id"),
)

client_events = Table(
    "client_events",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("event_id", String(40), nullable=False, unique=True),  # "evt_...": the webhook-id
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("booking_id", ForeignKey("bookings.id"), nullable=True),  # None: a ping
    Column("endpoint_id", ForeignKey("webhook_endpoints.id"), nullable=True),  # a ping's one endpoint
    Column("type", String(64), nullable=False),
    Column("sequence", Integer, nullable=True),
    Column("status", String(32), nullable=True),  # the booking's status as of the event
    Column("previous_status", String(32), nullable=True),
    # The BookingResource as of the event; None when written by a one-statement path that cannot
    # render it (the fan-out then renders the row with this event's status).
    Column("booking", JSON, nullable=True),
    Column("body", Text, nullable=True),  # the exact bytes every delivery sends, fixed at fan-out
    Column("created_at", UTCDateTime, nullable=False),
    Column("fanned_out_at", UTCDateTime, nullable=True),
    UniqueConstraint("booking_id", "sequence"),
    Index("ix_client_events_fan_out", "fanned_out_at", "id"),
)

# A delivery to a client's endpoint (its recipient, ``endpoint:<id>``): a client event's
# (``kind`` client.webhook, ``event_pk`` set, the body the event's), or a message of another kind
# with its own ``webhook_id`` and ``body`` and no event (client.driver_position: ``booking_id`` set,
# docs/rules/ride.md#client-events; migration 0022).
webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("event_pk", ForeignKey("client_events.id"), nullable=True),
    Column("endpoint_id", ForeignKey("webhook_endpoints.id"), nullable=False),
    Column("kind", String(32), nullable=False, server_default="client.webhook"),
    Column("booking_id", ForeignKey("bookings.id"), nullable=True),
    Column("webhook_id", String(64), nullable=True),  # without an event: the webhook-id every attempt sends
    Column("body", Text, nullable=True),  # without an event: the exact bytes every attempt sends
    Column("status", String(16), nullable=False),  # pending | delivered | failed
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("deadline_at", UTCDateTime, nullable=False),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_http_status", Integer, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    CheckConstraint("status IN ('pending', 'delivered', 'failed')", name="status"),
    UniqueConstraint("event_pk", "endpoint_id"),
    Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
    Index("ix_webhook_deliveries_endpoint", "endpoint_id", "id"),
    Index("ix_webhook_deliveries_kind_next", "kind", "status", "next_attempt_at"),  # a claim's kinds tried once
    Index("ix_webhook_deliveries_booking", "booking_id", "kind"),  # a booking's latest position
)
