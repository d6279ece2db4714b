"""Partner health per minute and signing-secret rotation with an overlap (docs/rules/console.md).

``partner_search_minutes``: one row per partner and UTC minute with search calls, their outcomes and
a latency summary (sum, max and a fixed histogram). ``partners`` gains the previous signing secret
and when it stops being sent.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# Spelled out (not imported from db/tables/): a migration must keep meaning what it meant.
_OUTCOMES = ("ok", "timeout", "connect_error", "http_error", "invalid", "too_large", "redirect", "blocked")
_LATENCY = (*(f"lat_le_{b}" for b in (25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000)), "lat_inf")


def upgrade() -> None:
    op.create_table(
        "partner_search_minutes",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("partner_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("minute", transfers.db.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        *(sa.Column(f"outcome_{name}", sa.Integer(), server_default="0", nullable=False) for name in _OUTCOMES),
        sa.Column("latency_sum_ms", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("latency_max_ms", sa.Integer(), server_default="0", nullable=False),
        *(sa.Column(name, sa.Integer(), server_default="0", nullable=False) for name in _LATENCY),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"], name="fk_partner_search_minutes_partner_id_partners"),
        sa.PrimaryKeyConstraint("id", name="pk_partner_search_minutes"),
        sa.UniqueConstraint("partner_id", "minute", name="uq_partner_search_minutes_partner_id_minute"),
    )
    op.create_index("ix_partner_search_minutes_minute", "partner_search_minutes", ["minute"])
    with op.batch_alter_table("partners") as batch:
        batch.add_column(sa.Column("previous_signing_secret_enc", sa.Text(), nullable=True))
        batch.add_column(
            sa.Column("previous_secret_until", transfers.db.types.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("partners") as batch:
        batch.drop_column("previous_secret_until")
        batch.drop_column("previous_signing_secret_enc")
    op.drop_index("ix_partner_search_minutes_minute", table_name="partner_search_minutes")
    op.drop_table("partner_search_minutes")
