"""Signed-in web areas (the console and the partner portal, docs/rules/console.md, docs/rules/hosted-partners.md,
migration 0006):
operators, server-side sessions and failed sign-ins for throttling.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Index,
    String,
    Table,
)

from transfers.db.tables._base import PK, metadata
from transfers.db.types import UTCDateTime

# --- the operator console (docs/rules/console.md): operators, browser sessions, sign-in throttling --------
# ``web_sessions`` and ``web_signin_failures`` serve every signed-in web area (``realm``: "console"
# for operators, "partner" for the partner portal's users): ``user_id`` is that realm's user's id.

operators = Table(
    "operators",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("email", String(320), nullable=False, unique=True),  # stored lower-case
    Column("role", String(16), nullable=False),
    Column("password_hash", String(255), nullable=False),  # argon2id (webauth/passwords.py)
    Column("status", String(16), nullable=False, server_default="active"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("disabled_at", UTCDateTime, nullable=True),
    CheckConstraint("role IN ('admin', 'support')", name="role"),
    CheckConstraint("status IN ('active', 'disabled')", name="status"),
)

web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("realm", String(16), nullable=False),
    Column("user_id", BigInteger, nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),  # sha256 of the cookie's token
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_web_sessions_realm_user", "realm", "user_id"),
)

web_signin_failures = Table(
    "web_signin_failures",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("realm", String(16), nullable=False),
    Column("email", String(320), nullable=False),  # as typed, lower-cased, cut to 320
    Column("created_at", UTCDateTime, nullable=False),
    # the lock-out counts failures per e-mail and client address (migration 0025; NULL before it)
    Column("client_address", String(64), nullable=True),
    Index("ix_web_signin_failures_realm_email", "realm", "email", "created_at"),
)

# Sign-in attempts per client address, every realm together (migration 0025): at most 10 a minute are
# checked, the rest refused before any password hash (webauth/signin.py).
web_signin_attempts = Table(
    "web_signin_attempts",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("client_address", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_web_signin_attempts_address", "client_address", "created_at"),
)
