"""Cancellation policies, fees and amendments (docs/rules/cancellation.md).

* ``partners.cancellation_policy``: the partner's default policy (JSON tiers; NULL: free until pickup).
* ``search_vehicles.cancellation_policy``: the policy each offer was quoted with (the vehicle's own,
  else the partner's default; NULL: free until pickup), so a booking is sold exactly what was shown.
* ``bookings.cancellation_policy``: the policy the booking was sold with (NULL for bookings made
  before this revision: free until pickup, the behaviour they were sold with).
* ``bookings.cancellation_fee`` / ``cancellation_refund`` / ``cancelled_at`` / ``cancelled_by``: the
  cancellation as the BookingResource shows it (``fee + refund = total``).
* ``bookings.amendment``: the booking's latest amendment (JSON: status, changes, message, times).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from transfers.db.types import Money, UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("partners") as batch:
        batch.add_column(sa.Column("cancellation_policy", sa.JSON(), nullable=True))
    with op.batch_alter_table("search_vehicles") as batch:
        batch.add_column(sa.Column("cancellation_policy", sa.JSON(), nullable=True))
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("cancellation_policy", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("cancellation_fee", Money(), nullable=True))
        batch.add_column(sa.Column("cancellation_refund", Money(), nullable=True))
        batch.add_column(sa.Column("cancelled_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("cancelled_by", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("amendment", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        for name in (
            "amendment",
            "cancelled_by",
            "cancelled_at",
            "cancellation_refund",
            "cancellation_fee",
            "cancellation_policy",
        ):
            batch.drop_column(name)
    with op.batch_alter_table("search_vehicles") as batch:
        batch.drop_column("cancellation_policy")
    with op.batch_alter_table("partners") as batch:
        batch.drop_column("cancellation_policy")
