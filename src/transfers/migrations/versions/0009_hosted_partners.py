"""Hosted partners, rate cards, partner users, daily capacity and partner e-mails
(docs/rules/hosted-partners.md).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("partners") as batch:
        batch.add_column(sa.Column("hosted", sa.Boolean(), server_default="0", nullable=False))
    op.create_table(
        "rate_cards",
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("card", sa.JSON(), nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.Column("updated_by", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"], name=op.f("fk_rate_cards_partner_id_partners")),
        sa.PrimaryKeyConstraint("partner_id", name=op.f("pk_rate_cards")),
    )
    op.create_table(
        "hosted_capacity",
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("vehicle_id", sa.String(length=64), nullable=False),
        sa.Column("local_date", sa.String(length=10), nullable=False),
        sa.Column("booked", sa.Integer(), server_default="0", nullable=False),
        sa.CheckConstraint("booked >= 0", name=op.f("ck_hosted_capacity_booked_not_negative")),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"], name=op.f("fk_hosted_capacity_partner_id_partners")),
        sa.PrimaryKeyConstraint("partner_id", "vehicle_id", "local_date", name=op.f("pk_hosted_capacity")),
    )
    op.create_table(
        "partner_users",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="active", nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.CheckConstraint("status IN ('active', 'disabled')", name=op.f("ck_partner_users_status")),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"], name=op.f("fk_partner_users_partner_id_partners")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_users")),
        sa.UniqueConstraint("email", name=op.f("uq_partner_users_email")),
    )
    op.create_index(op.f("ix_partner_users_partner_id"), "partner_users", ["partner_id"])
    op.create_table(
        "partner_emails",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("dedupe_key", sa.String(length=100), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", WHEN, nullable=False),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("recipients", sa.JSON(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"], name=op.f("fk_partner_emails_partner_id_partners")),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_partner_emails_booking_id_bookings")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_emails")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_partner_emails_dedupe_key")),
    )
    op.create_index("ix_partner_emails_status_next", "partner_emails", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_partner_emails_status_next", table_name="partner_emails")
    op.drop_table("partner_emails")
    op.drop_index(op.f("ix_partner_users_partner_id"), table_name="partner_users")
    op.drop_table("partner_users")
    op.drop_table("hosted_capacity")
    op.drop_table("rate_cards")
    with op.batch_alter_table("partners") as batch:
        batch.drop_column("hosted")
