"""Partner scorecards, the daily history (docs/rules/quality.md).

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "partner_scorecards",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("airport_iata", sa.String(length=3), nullable=False),
        sa.Column("as_of", WHEN, nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(length=16), nullable=False),
        sa.Column("card", sa.JSON(), nullable=False),
        sa.Column("computed_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["partner_id"], ["partners.id"], name=op.f("fk_partner_scorecards_partner_id_partners")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_scorecards")),
        sa.UniqueConstraint(
            "partner_id", "day", "airport_iata", name=op.f("uq_partner_scorecards_partner_id_day_airport_iata")
        ),
    )
    op.create_index("ix_partner_scorecards_day", "partner_scorecards", ["day"])


def downgrade() -> None:
    op.drop_index("ix_partner_scorecards_day", table_name="partner_scorecards")
    op.drop_table("partner_scorecards")
