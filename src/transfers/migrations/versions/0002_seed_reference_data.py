"""Seed reference data and cancellation reasons (docs/rules/reference-data.md).

The ids are fixed so that documentation, clients and partners can rely on them across
deployments; operators may add rows or rename them afterwards.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

VEHICLE_TYPES = [
    (1, "SEDAN", 3),
    (2, "ESTATE", 4),
    (3, "MINIVAN", 7),
    (4, "MINIBUS", 16),
    (5, "BUS", 50),
    (6, "LUXURY", 3),
    (7, "ELECTRIC", 4),
]
SEGMENTS = [(1, "ECONOMY"), (2, "STANDARD"), (3, "BUSINESS"), (4, "FIRST")]
SERVICES = [(1, "PRIVATE_TRANSFER"), (2, "SHUTTLE"), (3, "MEET_AND_GREET"), (4, "VIP_TRANSFER")]
CANCELLATION_REASONS = [
    (1, "Change of plans", "The traveller no longer needs the transfer.", 1),
    (2, "Flight cancelled", "The flight was cancelled or rescheduled by the airline.", 2),
    (3, "Booked by mistake", "The booking was made in error (wrong date, route or passenger).", 3),
    (4, "Found another option", "The traveller chose another means of transport.", 4),
    (5, "Other", None, 5),
]


def upgrade() -> None:
    op.bulk_insert(
        sa.table("vehicle_types", sa.column("id"), sa.column("name"), sa.column("max_passengers")),
        [{"id": i, "name": n, "max_passengers": p} for i, n, p in VEHICLE_TYPES],
    )
    op.bulk_insert(
        sa.table("vehicle_segments", sa.column("id"), sa.column("name")),
        [{"id": i, "name": n} for i, n in SEGMENTS],
    )
    op.bulk_insert(
        sa.table("car_services", sa.column("id"), sa.column("name")),
        [{"id": i, "name": n} for i, n in SERVICES],
    )
    op.bulk_insert(
        sa.table(
            "cancellation_reasons",
            sa.column("id"),
            sa.column("name"),
            sa.column("description"),
            sa.column("position"),
            sa.column("active", sa.Boolean),
        ),
        [{"id": i, "name": n, "description": d, "position": p, "active": True} for i, n, d, p in CANCELLATION_REASONS],
    )
    if op.get_bind().dialect.name == "postgresql":
        # Explicit ids were inserted: move the identity sequences past them.
        for table in ("vehicle_types", "vehicle_segments", "car_services", "cancellation_reasons"):
            op.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))")


def downgrade() -> None:
    for table in ("cancellation_reasons", "car_services", "vehicle_segments", "vehicle_types"):
        op.execute(f"DELETE FROM {table}")
