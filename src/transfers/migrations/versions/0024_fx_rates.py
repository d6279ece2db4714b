"""Exchange rates (docs/rules/fx.md): ``fx_rates`` (reference rates from EUR by currency, source and
date: ``ecb`` files and ``manual`` rates; the sandbox table is not stored) and ``fx_fetches`` (one row:
the scheduled fetch of the ECB file, its last try, success and failure).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "fx_rates",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("rate", sa.String(length=24), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fx_rates")),
        sa.UniqueConstraint("currency", "source", "as_of", name=op.f("uq_fx_rates_currency_source_as_of")),
        sa.CheckConstraint("source IN ('ecb', 'manual')", name=op.f("ck_fx_rates_source")),
    )
    op.create_table(
        "fx_fetches",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("succeeded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fx_fetches")),
        sa.CheckConstraint("id = 1", name=op.f("ck_fx_fetches_one_row")),
    )
    op.execute("INSERT INTO fx_fetches (id) VALUES (1)")


def downgrade() -> None:
    op.drop_table("fx_fetches")
    op.drop_table("fx_rates")
