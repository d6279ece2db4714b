"""The agency portal (docs/rules/agency-portal.md, migration 0018): the people of a client
(a travel agency) who sign in at ``/agency/``. Their sessions and failed sign-ins are rows of the
shared ``web_sessions`` / ``web_signin_failures`` in the realm ``agency``."""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, String, Table, func

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.bookings import bookings
from transfers.db.types import UTCDateTime

agency_users = Table(
    "agency_users",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("client_id", PK, ForeignKey("clients.id"), nullable=False, index=True),
    Column("email", String(320), nullable=False, unique=True),  # stored lower-case; one account per mailbox
    Column("role", String(16), nullable=False),
    Column("password_hash", String(255), nullable=False),  # argon2id (webauth/passwords.py)
    Column("status", String(16), nullable=False, server_default="active"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("disabled_at", UTCDateTime, nullable=True),
    CheckConstraint("role IN ('admin', 'agent')", name="role"),
    CheckConstraint("status IN ('active', 'disabled')", name="status"),
)

# The agency's ``Bookings`` search within one client (agency/queries.py, bench/agency.py): each
# branch of "reservation number OR surname prefix OR flight" has an index with the client first, so
# PostgreSQL answers the OR with a BitmapOr of three small scans instead of reading the agency's
# every booking; the pickup-day filter likewise. The expression indexes are PostgreSQL's only (SQLite
# cannot reflect them, and a SQLite deployment is small enough to scan).
bookings_client_surname = Index(
    "ix_bookings_client_surname_lower",
    bookings.c.client_id,
    func.lower(bookings.c.passenger_surname).label("surname_lower"),
    postgresql_ops={"surname_lower": "text_pattern_ops"},
).ddl_if(dialect="postgresql")
bookings_client_flight = Index(
    "ix_bookings_client_flight",
    bookings.c.client_id,
    func.upper(func.replace(bookings.c.flight_number, " ", "")),
).ddl_if(dialect="postgresql")
bookings_client_pickup = Index("ix_bookings_client_pickup", bookings.c.client_id, bookings.c.pickup_at)
