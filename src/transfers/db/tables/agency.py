"""The agency portal (issue 27, docs/rules/agency-portal.md, migration 0018): the people of a client
(a travel agency) who sign in at ``/agency/``. Their sessions and failed sign-ins are rows of the
shared ``web_sessions`` / ``web_signin_failures`` in the realm ``agency``."""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, String, Table

from transfers.db.tables._base import PK, metadata
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
