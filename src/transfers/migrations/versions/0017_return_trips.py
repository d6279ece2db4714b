"""Return trips (docs/rules/return-trips.md).

* ``searches.return_pickup_at``: the return pickup a search priced (NULL: a one-way search).
* ``search_vehicles.leg``: 1 for an offer of ``vehicles``, 2 for one of ``return_vehicles`` (existing
  offers are all 1: searches before this revision had no way back).
* ``bookings.trip_id`` / ``trip_leg`` / ``trip_other_reservation_no``: the trip a booking is a leg of
  (NULL for a single booking, and for every booking made before this revision), indexed by trip for
  ``GET /booking-api/bookings?trip_id=``.

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from transfers.db.types import UTCDateTime

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("searches") as batch:
        batch.add_column(sa.Column("return_pickup_at", UTCDateTime(), nullable=True))
    with op.batch_alter_table("search_vehicles") as batch:
        batch.add_column(sa.Column("leg", sa.SmallInteger(), nullable=False, server_default="1"))
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("trip_id", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("trip_leg", sa.SmallInteger(), nullable=True))
        batch.add_column(sa.Column("trip_other_reservation_no", sa.String(length=32), nullable=True))
    op.create_index("ix_bookings_trip_id", "bookings", ["trip_id"])


def downgrade() -> None:
    op.drop_index("ix_bookings_trip_id", table_name="bookings")
    with op.batch_alter_table("bookings") as batch:
        for name in ("trip_other_reservation_no", "trip_leg", "trip_id"):
            batch.drop_column(name)
    with op.batch_alter_table("search_vehicles") as batch:
        batch.drop_column("leg")
    with op.batch_alter_table("searches") as batch:
        batch.drop_column("return_pickup_at")
