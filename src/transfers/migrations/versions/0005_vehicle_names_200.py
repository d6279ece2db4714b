"""Vehicle make and model columns widened to the 200 characters PARTNER_API.md allows: they were
100 wide, and on PostgreSQL a partner answering a longer (valid) make failed the whole search.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_COLUMNS = {"search_vehicles": ("make", "model"), "bookings": ("vehicle_make", "vehicle_model")}


def upgrade() -> None:
    for table, columns in _COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.alter_column(
                    column, existing_type=sa.String(length=100), type_=sa.String(length=200), existing_nullable=False
                )


def downgrade() -> None:
    """Values longer than 100 characters are cut to 100 first (else narrowing fails)."""
    for table, columns in _COLUMNS.items():
        for column in columns:
            op.execute(sa.text(f"UPDATE {table} SET {column} = substr({column}, 1, 100) WHERE length({column}) > 100"))
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.alter_column(
                    column, existing_type=sa.String(length=200), type_=sa.String(length=100), existing_nullable=False
                )
