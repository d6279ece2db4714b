"""Bookings remember the Idempotency-Key that created them (unique per client), and when the
reconciliation job last asked the partner about them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("idempotency_key", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("synced_at", transfers.db.types.UTCDateTime(timezone=True), nullable=True))
        batch.create_unique_constraint("uq_bookings_client_id_idempotency_key", ["client_id", "idempotency_key"])


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_constraint("uq_bookings_client_id_idempotency_key", type_="unique")
        batch.drop_column("synced_at")
        batch.drop_column("idempotency_key")
