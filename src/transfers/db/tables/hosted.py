"""Hosted partners (docs/rules/hosted-partners.md, migration 0009): rate cards, daily capacity, partner users and the
e-mails sent to them.
"""

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
)

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

# --- hosted partners, rate cards, partner users, daily capacity, partner e-mails ------------
# (docs/rules/hosted-partners.md; migration 0009). ``partners.hosted`` is added to the partners table there.

rate_cards = Table(
    "rate_cards",
    metadata,
    Column("partner_id", PK, ForeignKey("partners.id"), primary_key=True),
    Column("card", JSON, nullable=False),  # validated against openapi/rate-card.schema.json when set
    Column("updated_at", UTCDateTime, nullable=False),
    Column("updated_by", String(200), nullable=False),
)

# Bookings holding a seat of a hosted vehicle on one local pickup date (the airport's calendar).
# Claimed by a conditional UPDATE in the booking's create transaction: race-free across processes.
hosted_capacity = Table(
    "hosted_capacity",
    metadata,
    Column("partner_id", PK, ForeignKey("partners.id"), primary_key=True),
    Column("vehicle_id", String(64), primary_key=True),
    Column("local_date", String(10), primary_key=True),  # YYYY-MM-DD
    Column("booked", Integer, nullable=False, server_default="0"),
    CheckConstraint("booked >= 0", name="booked_not_negative"),
)

partner_users = Table(
    "partner_users",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", PK, ForeignKey("partners.id"), nullable=False, index=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("password_hash", Text, nullable=False),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("status IN ('active', 'disabled')", name="status"),
)

# E-mails to a partner's users (new booking, cancellation), written in the transaction of the
# change they report and sent by the worker; ``dedupe_key`` makes "never twice" a constraint.
partner_emails = Table(
    "partner_emails",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", PK, ForeignKey("partners.id"), nullable=False),
    Column("booking_id", PK, ForeignKey("bookings.id"), nullable=False),
    Column("kind", String(32), nullable=False),  # booking.new | .cancelled | .amended | .pickup_moved
    Column("dedupe_key", String(100), nullable=False, unique=True),
    Column("status", String(16), nullable=False),  # pending | sent | failed
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("recipients", JSON, nullable=True),  # who it went to, once sent
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime, nullable=True),
    Index("ix_partner_emails_status_next", "status", "next_attempt_at"),
)
