"""The agency portal (docs/rules/agency-portal.md): ``agency_users``, the people of a client
(a travel agency) who sign in at ``/agency/`` with the role ``admin`` or ``agent``. Their sessions
and sign-in failures live in the shared ``web_sessions`` / ``web_signin_failures`` (realm
``agency``). The agency's ``Bookings`` page pages by the existing ``ix_bookings_client_created``;
its search and pickup filter need the indexes below, each with the client first (bench/agency.py:
with 100 000 bookings an agency, a surname search read every one of them, 250-460 ms; PostgreSQL
now answers "reservation number OR surname prefix OR flight" with a BitmapOr of three small scans).

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "agency_users",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("client_id", PK, nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="active", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("role IN ('admin', 'agent')", name=op.f("ck_agency_users_role")),
        sa.CheckConstraint("status IN ('active', 'disabled')", name=op.f("ck_agency_users_status")),
        sa.ForeignKeyConstraint(["client_id"], ["clients.id"], name=op.f("fk_agency_users_client_id_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agency_users")),
        sa.UniqueConstraint("email", name=op.f("uq_agency_users_email")),
    )
    op.create_index(op.f("ix_agency_users_client_id"), "agency_users", ["client_id"], unique=False)
    op.create_index("ix_bookings_client_pickup", "bookings", ["client_id", "pickup_at"])
    if op.get_bind().dialect.name == "postgresql":  # SQLite cannot reflect expression indexes
        op.create_index(
            "ix_bookings_client_surname_lower",
            "bookings",
            ["client_id", sa.text("lower(passenger_surname) text_pattern_ops")],
        )
        op.create_index(
            "ix_bookings_client_flight", "bookings", ["client_id", sa.text("upper(replace(flight_number, ' ', ''))")]
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_bookings_client_flight", table_name="bookings")
        op.drop_index("ix_bookings_client_surname_lower", table_name="bookings")
    op.drop_index("ix_bookings_client_pickup", table_name="bookings")
    op.drop_index(op.f("ix_agency_users_client_id"), table_name="agency_users")
    op.drop_table("agency_users")
