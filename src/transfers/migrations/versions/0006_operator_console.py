"""Operator console (docs/rules/console.md): operators, browser sessions and sign-in failures
(shared by every signed-in web area through their ``realm``), and the indexes the console's
booking list and audit log page by.

Why the booking indexes: the console lists bookings newest first, by partner, and finds them by
passenger surname (prefix, case-insensitive), e-mail (case-insensitive) or partner reference; with
a million bookings each of those was a full scan (bench/console_bench.py). The surname and e-mail
indexes are on ``lower(...)``; on PostgreSQL with ``text_pattern_ops`` so that ``LIKE 'abc%'`` uses
them whatever the database's collation. PostgreSQL only: SQLite cannot reflect an expression index
(SQLAlchemy warns, and the schema check fails), and a SQLite deployment is small enough to scan.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _ts() -> sa.types.TypeEngine[object]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "operators",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="active", nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("disabled_at", _ts(), nullable=True),
        sa.CheckConstraint("role IN ('admin', 'support')", name=op.f("ck_operators_role")),
        sa.CheckConstraint("status IN ('active', 'disabled')", name=op.f("ck_operators_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_operators")),
        sa.UniqueConstraint("email", name=op.f("uq_operators_email")),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("realm", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("last_seen_at", _ts(), nullable=False),
        sa.Column("expires_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_web_sessions_token_hash")),
    )
    op.create_index("ix_web_sessions_realm_user", "web_sessions", ["realm", "user_id"])
    op.create_table(
        "web_signin_failures",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("realm", sa.String(length=16), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_signin_failures")),
    )
    op.create_index("ix_web_signin_failures_realm_email", "web_signin_failures", ["realm", "email", "created_at"])
    op.create_index("ix_admin_audit_created", "admin_audit", ["created_at", "id"])
    op.create_index("ix_bookings_created", "bookings", ["created_at", "id"])
    op.create_index("ix_bookings_partner_created", "bookings", ["partner_id", "created_at", "id"])
    op.create_index("ix_bookings_partner_reference", "bookings", ["partner_reference"])
    if op.get_bind().dialect.name == "postgresql":  # SQLite cannot reflect expression indexes (see above)
        op.create_index("ix_bookings_surname_lower", "bookings", [sa.text("lower(passenger_surname) text_pattern_ops")])
        op.create_index("ix_bookings_email_lower", "bookings", [sa.text("lower(passenger_email) text_pattern_ops")])


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_bookings_email_lower", table_name="bookings")
        op.drop_index("ix_bookings_surname_lower", table_name="bookings")
    for name in ("ix_bookings_partner_reference", "ix_bookings_partner_created", "ix_bookings_created"):
        op.drop_index(name, table_name="bookings")
    op.drop_index("ix_admin_audit_created", table_name="admin_audit")
    op.drop_index("ix_web_signin_failures_realm_email", table_name="web_signin_failures")
    op.drop_table("web_signin_failures")
    op.drop_index("ix_web_sessions_realm_user", table_name="web_sessions")
    op.drop_table("web_sessions")
    op.drop_table("operators")
