"""Bookings remember the Idempotency-Key of the request that cancelled them, so a retry of that
request after a crash answers Success instead of CANCELLATION_FAILED.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("cancel_idempotency_key", sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("cancel_idempotency_key")
