"""Flights (docs/rules/flights.md): the flight watch, the booking's original pickup, flight state
and disruption mark, the partner's flight limits, and client events' extra data (``db/tables/flights.py``).

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from transfers.db.types import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "flight_watches",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("number", sa.String(length=16), nullable=False),
        sa.Column("airport_iata", sa.String(length=3), nullable=False),
        sa.Column("local_date", sa.String(length=10), nullable=False),
        sa.Column("scheduled_arrival", WHEN, nullable=False),
        sa.Column("next_check_at", WHEN, nullable=True),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("called_at", WHEN, nullable=True),
        sa.Column("checked_at", WHEN, nullable=True),
        sa.Column("report", sa.JSON(), nullable=True),
        sa.Column("failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flight_watches")),
        sa.UniqueConstraint(
            "number", "airport_iata", "local_date", name=op.f("uq_flight_watches_number_airport_iata_local_date")
        ),
    )
    op.create_index(op.f("ix_flight_watches_due"), "flight_watches", ["next_check_at"])
    op.create_index(op.f("ix_flight_watches_called"), "flight_watches", ["called_at"])
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("original_pickup_at", WHEN, nullable=True))
        batch.add_column(sa.Column("flight_state", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("flight_disrupted_at", WHEN, nullable=True))
        batch.add_column(sa.Column("free_wait_minutes", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("flight_watch_id", PK, nullable=True))
        batch.create_foreign_key(
            op.f("fk_bookings_flight_watch_id_flight_watches"), "flight_watches", ["flight_watch_id"], ["id"]
        )
        batch.create_index(op.f("ix_bookings_flight_watch_id"), ["flight_watch_id"])
    op.execute("UPDATE bookings SET original_pickup_at = pickup_at")
    with op.batch_alter_table("partners") as batch:
        batch.add_column(sa.Column("follow_flight_minutes", sa.Integer(), server_default="180", nullable=False))
        batch.add_column(sa.Column("free_wait_minutes", sa.Integer(), server_default="60", nullable=False))
        batch.create_check_constraint(
            op.f("ck_partners_follow_flight_minutes_range"), "follow_flight_minutes BETWEEN 0 AND 1440"
        )
        batch.create_check_constraint(
            op.f("ck_partners_free_wait_minutes_range"), "free_wait_minutes BETWEEN 0 AND 240"
        )
    with op.batch_alter_table("client_events") as batch:
        batch.add_column(sa.Column("data", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("client_events") as batch:
        batch.drop_column("data")
    with op.batch_alter_table("partners") as batch:
        batch.drop_constraint(op.f("ck_partners_free_wait_minutes_range"), type_="check")
        batch.drop_constraint(op.f("ck_partners_follow_flight_minutes_range"), type_="check")
        batch.drop_column("free_wait_minutes")
        batch.drop_column("follow_flight_minutes")
    with op.batch_alter_table("bookings") as batch:
        batch.drop_index(op.f("ix_bookings_flight_watch_id"))
        batch.drop_constraint(op.f("fk_bookings_flight_watch_id_flight_watches"), type_="foreignkey")
        for name in (
            "flight_watch_id",
            "free_wait_minutes",
            "flight_disrupted_at",
            "flight_state",
            "original_pickup_at",
        ):
            batch.drop_column(name)
    op.drop_index(op.f("ix_flight_watches_called"), table_name="flight_watches")
    op.drop_index(op.f("ix_flight_watches_due"), table_name="flight_watches")
    op.drop_table("flight_watches")
