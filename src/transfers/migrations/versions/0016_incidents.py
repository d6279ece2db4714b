"""Incidents (docs/rules/incidents.md): the ``incidents`` table and the part of a booking's
price its incidents refunded (``bookings.incident_refunded``).

No existing row changes: a booking without incidents keeps ``incident_refunded`` NULL (nothing
refunded), and the ledger's incident refunds are new kinds of ``ledger_entries`` rows (its
``kind`` column is free text with no CHECK of its values).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)
MONEY = transfers.db.types.Money(precision=14, scale=2)


def upgrade() -> None:
    op.add_column("bookings", sa.Column("incident_refunded", MONEY, nullable=True))
    op.create_table(
        "incidents",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("public_id", sa.String(length=40), nullable=False),
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reported_by", sa.String(length=16), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("responsible", sa.String(length=16), nullable=True),
        sa.Column("refund", MONEY, nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("resolved_at", WHEN, nullable=True),
        sa.Column("resolved_by", sa.String(length=200), nullable=True),
        sa.CheckConstraint(
            "type IN ('DRIVER_NO_SHOW', 'DRIVER_LATE', 'CUSTOMER_NO_SHOW', 'WRONG_VEHICLE', 'OTHER')",
            name=op.f("ck_incidents_type"),
        ),
        sa.CheckConstraint("status IN ('OPEN', 'RESOLVED')", name=op.f("ck_incidents_status")),
        sa.CheckConstraint("reported_by IN ('client', 'partner', 'operator')", name=op.f("ck_incidents_reported_by")),
        sa.CheckConstraint(
            "responsible IS NULL OR responsible IN ('partner', 'client', 'none')", name=op.f("ck_incidents_responsible")
        ),
        sa.CheckConstraint("refund IS NULL OR refund >= 0", name=op.f("ck_incidents_refund_not_negative")),
        sa.CheckConstraint(
            "(status = 'OPEN' AND resolved_at IS NULL AND refund IS NULL AND responsible IS NULL)"
            " OR (status = 'RESOLVED' AND resolved_at IS NOT NULL AND refund IS NOT NULL AND responsible IS NOT NULL)",
            name=op.f("ck_incidents_resolution_complete"),
        ),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_incidents_booking_id_bookings")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_incidents")),
        sa.UniqueConstraint("public_id", name=op.f("uq_incidents_public_id")),
        sa.UniqueConstraint("booking_id", "type", name=op.f("uq_incidents_booking_id_type")),
    )
    op.create_index("ix_incidents_status_created", "incidents", ["status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_incidents_status_created", table_name="incidents")
    op.drop_table("incidents")
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("incident_refunded")
