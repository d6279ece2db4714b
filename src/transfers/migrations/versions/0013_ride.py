"""The ride (docs/rules/ride.md): driver events and positions.

* ``ride_events``: one row per event type per booking (``UNIQUE (booking_id, type)``: two identical
  events sent at once are recorded once).
* ``ride_positions``: every position a partner sent, kept 30 days after the ride.
* ``bookings.ride_milestones`` / ``ride_position`` / ``ride_position_at``: the ride as the
  BookingResource shows it, so reading a booking stays one row.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from transfers.db.types import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "ride_events",
        sa.Column("id", PK, primary_key=True, autoincrement=True),
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("occurred_at", UTCDateTime(), nullable=False),
        sa.Column("lat", sa.Float(), nullable=True),
        sa.Column("lng", sa.Float(), nullable=True),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_ride_events_booking_id_bookings"),
        sa.PrimaryKeyConstraint("id", name="pk_ride_events"),
        sa.UniqueConstraint("booking_id", "type", name="uq_ride_events_booking_id_type"),
    )
    op.create_index("ix_ride_events_received", "ride_events", ["received_at"])
    op.create_table(
        "ride_positions",
        sa.Column("id", PK, primary_key=True, autoincrement=True),
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("lat", sa.Float(), nullable=False),
        sa.Column("lng", sa.Float(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("heading", sa.Integer(), nullable=True),
        sa.Column("speed_kmh", sa.Float(), nullable=True),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_ride_positions_booking_id_bookings"),
        sa.PrimaryKeyConstraint("id", name="pk_ride_positions"),
    )
    op.create_index("ix_ride_positions_booking_at", "ride_positions", ["booking_id", "at"])
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("ride_milestones", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("ride_position", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("ride_position_at", UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        for name in ("ride_position_at", "ride_position", "ride_milestones"):
            batch.drop_column(name)
    op.drop_index("ix_ride_positions_booking_at", table_name="ride_positions")
    op.drop_table("ride_positions")
    op.drop_index("ix_ride_events_received", table_name="ride_events")
    op.drop_table("ride_events")
