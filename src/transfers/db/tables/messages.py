"""Messages to travellers (docs/rules/messages.md; migration 0031): the tables of section 24.

* ``client_message_settings``: one row per client that set anything (no row: every channel off, the
  defaults of ``messages/models.py``). The support phone is ``clients.support_phone`` (migration 0027).
* ``bookings.passenger_language`` (a normalized BCP 47 tag, NULL when absent, unknown or malformed) and
  ``bookings.message_channels`` (``{"email": false}``: the create switched a channel off; NULL: nothing
  switched off).
* ``traveller_messages``: one row per message, planned, sent or not; ``dedupe_key`` (``booking:template:
  channel:revision``) is UNIQUE, so the same trigger planned twice writes one row. ``to_address`` is the
  full address (masked whenever shown); ``body`` and ``subject`` are rendered at the send and emptied
  after 30 days.
* ``message_optouts``: an address that asked for no more messages, for one booking (``booking_id``) or
  every booking (NULL); ``lifted_at`` set when an SMS START lifts it.
* ``message_planned_events``: the client events the planner has read (an anti-join over a trailing
  window, so an event committed late under a lower id is still planned).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.bookings import bookings
from transfers.db.types import UTCDateTime

client_message_settings = Table(
    "client_message_settings",
    metadata,
    Column("client_id", PK, ForeignKey("clients.id"), primary_key=True),
    Column("channels", JSON, nullable=False),  # ["email", "sms"], any of them, none: off
    Column("brand_name", String(30), nullable=True),
    Column("sms_sender", String(11), nullable=True),
    Column("reply_to", String(320), nullable=True),
    Column("default_language", String(8), nullable=True),
    Column("feedback", Boolean, nullable=False, server_default="0"),
    Column("travellers_consented_at", UTCDateTime, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)

bookings.append_column(Column("passenger_language", String(35), nullable=True))
bookings.append_column(Column("message_channels", JSON, nullable=True))

MESSAGE_STATUSES = ("scheduled", "sent", "delivered", "failed", "suppressed", "skipped", "expired")

traveller_messages = Table(
    "traveller_messages",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("booking_id", PK, ForeignKey("bookings.id"), nullable=False),
    Column("client_id", PK, ForeignKey("clients.id"), nullable=False),
    Column("template", String(32), nullable=False),
    Column("channel", String(8), nullable=False),
    Column("to_address", String(320), nullable=True),
    Column("language", String(8), nullable=False),
    Column("status", String(16), nullable=False),
    Column("reason", String(64), nullable=True),
    Column("revision", String(100), nullable=False),
    Column("dedupe_key", String(200), nullable=False, unique=True),
    Column("scheduled_for", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("sent_at", UTCDateTime, nullable=True),
    Column("delivered_at", UTCDateTime, nullable=True),
    Column("provider_id", String(64), nullable=True),
    Column("subject", Text, nullable=True),
    Column("body", Text, nullable=True),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    CheckConstraint("channel IN ('email', 'sms')", name="channel"),
    CheckConstraint(
        "status IN ('scheduled', 'sent', 'delivered', 'failed', 'suppressed', 'skipped', 'expired')", name="status"
    ),
)
# The delivery queue's claim: due scheduled messages.
traveller_messages_due = Index(
    "ix_traveller_messages_status_scheduled_for", traveller_messages.c.status, traveller_messages.c.scheduled_for
)
traveller_messages_booking = Index("ix_traveller_messages_booking_id", traveller_messages.c.booking_id)
# A delivery receipt names the provider's id (Twilio's SID).
traveller_messages_provider = Index("ix_traveller_messages_provider_id", traveller_messages.c.provider_id)

message_optouts = Table(
    "message_optouts",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("channel", String(8), nullable=False),
    Column("address", String(320), nullable=False),  # an e-mail lowercased, or an E.164 number
    Column("booking_id", PK, ForeignKey("bookings.id"), nullable=True),  # NULL: every booking
    Column("source", String(16), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("lifted_at", UTCDateTime, nullable=True),
    CheckConstraint("channel IN ('email', 'sms')", name="channel"),
    CheckConstraint("source IN ('page', 'sms_reply')", name="source"),
)
message_optouts_address = Index(
    "ix_message_optouts_channel_address", message_optouts.c.channel, message_optouts.c.address
)

message_planned_events = Table(
    "message_planned_events",
    metadata,
    Column("event_pk", PK, ForeignKey("client_events.id"), primary_key=True),
    Column("planned_at", UTCDateTime, nullable=False),
)
