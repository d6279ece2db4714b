"""The traveller's and the driver's pages (docs/rules/ride.md#tracking-page, #driver-page): the
booking's tracking token (backfilled for the bookings made before it) and the hosted partners' driver links.

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)
BATCH = 500


def upgrade() -> None:
    op.add_column("bookings", sa.Column("tracking_token", sa.String(length=32), nullable=True))
    # Every existing booking gets its own token (128 random bits, as bookings/tracking_link.py issues them).
    bind = op.get_bind()
    bookings = sa.table("bookings", sa.column("id", PK), sa.column("tracking_token", sa.String))
    while True:
        ids = [
            row[0]
            for row in bind.execute(
                sa.select(bookings.c.id).where(bookings.c.tracking_token.is_(None)).limit(BATCH)
            ).all()
        ]
        if not ids:
            break
        bind.execute(
            bookings.update().where(bookings.c.id == sa.bindparam("b_id")),
            [{"b_id": booking_id, "tracking_token": secrets.token_urlsafe(16)} for booking_id in ids],
        )
    op.create_index("ix_bookings_tracking_token", "bookings", ["tracking_token"], unique=True)
    op.create_table(
        "driver_links",
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("token", sa.String(length=32), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("revoked_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_driver_links_booking_id_bookings")),
        sa.PrimaryKeyConstraint("booking_id", name=op.f("pk_driver_links")),
        sa.UniqueConstraint("token", name=op.f("uq_driver_links_token")),
    )


def downgrade() -> None:
    op.drop_table("driver_links")
    op.drop_index("ix_bookings_tracking_token", table_name="bookings")
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("tracking_token")
