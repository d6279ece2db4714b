"""Ratings (docs/rules/ratings.md): the ``ratings`` table, one row per booking.

New table only: no existing row changes.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("stars", sa.SmallInteger(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.CheckConstraint("stars BETWEEN 1 AND 5", name=op.f("ck_ratings_stars")),
        sa.CheckConstraint("source IN ('traveller', 'client')", name=op.f("ck_ratings_source")),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_ratings_booking_id_bookings")),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"], name=op.f("fk_ratings_partner_id_partners")),
        sa.PrimaryKeyConstraint("booking_id", name=op.f("pk_ratings")),
    )
    op.create_index("ix_ratings_partner_created", "ratings", ["partner_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_ratings_partner_created", table_name="ratings")
    op.drop_table("ratings")
