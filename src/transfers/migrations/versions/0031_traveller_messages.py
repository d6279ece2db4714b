"""Messages to travellers (docs/rules/messages.md): the client's settings, the messages, the opt-outs,
the planner's marks, and the booking's language and channel switches.

New tables, and two nullable columns on ``bookings``: no existing row changes (a booking without a
language or switches is as if the create had said nothing).

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)
STATUSES = "'scheduled', 'sent', 'delivered', 'failed', 'suppressed', 'skipped', 'expired'"


def upgrade() -> None:
    op.create_table(
        "client_message_settings",
        sa.Column("client_id", PK, nullable=False),
        sa.Column("channels", sa.JSON(), nullable=False),
        sa.Column("brand_name", sa.String(length=30), nullable=True),
        sa.Column("sms_sender", sa.String(length=11), nullable=True),
        sa.Column("reply_to", sa.String(length=320), nullable=True),
        sa.Column("default_language", sa.String(length=8), nullable=True),
        sa.Column("feedback", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("travellers_consented_at", WHEN, nullable=True),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["client_id"], ["clients.id"], name=op.f("fk_client_message_settings_client_id_clients")
        ),
        sa.PrimaryKeyConstraint("client_id", name=op.f("pk_client_message_settings")),
    )
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("passenger_language", sa.String(35), nullable=True))
        batch.add_column(sa.Column("message_channels", sa.JSON(), nullable=True))
    op.create_table(
        "traveller_messages",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("booking_id", PK, nullable=False),
        sa.Column("client_id", PK, nullable=False),
        sa.Column("template", sa.String(length=32), nullable=False),
        sa.Column("channel", sa.String(length=8), nullable=False),
        sa.Column("to_address", sa.String(length=320), nullable=True),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=64), nullable=True),
        sa.Column("revision", sa.String(length=100), nullable=False),
        sa.Column("dedupe_key", sa.String(length=200), nullable=False),
        sa.Column("scheduled_for", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=True),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.Column("delivered_at", WHEN, nullable=True),
        sa.Column("provider_id", sa.String(length=64), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("finished_at", WHEN, nullable=True),
        sa.CheckConstraint("channel IN ('email', 'sms')", name=op.f("ck_traveller_messages_channel")),
        sa.CheckConstraint(f"status IN ({STATUSES})", name=op.f("ck_traveller_messages_status")),
        sa.ForeignKeyConstraint(
            ["booking_id"], ["bookings.id"], name=op.f("fk_traveller_messages_booking_id_bookings")
        ),
        sa.ForeignKeyConstraint(["client_id"], ["clients.id"], name=op.f("fk_traveller_messages_client_id_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_traveller_messages")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_traveller_messages_dedupe_key")),
    )
    op.create_index("ix_traveller_messages_status_scheduled_for", "traveller_messages", ["status", "scheduled_for"])
    op.create_index("ix_traveller_messages_booking_id", "traveller_messages", ["booking_id"])
    op.create_index("ix_traveller_messages_provider_id", "traveller_messages", ["provider_id"])
    op.create_table(
        "message_optouts",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("channel", sa.String(length=8), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("booking_id", PK, nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("lifted_at", WHEN, nullable=True),
        sa.CheckConstraint("channel IN ('email', 'sms')", name=op.f("ck_message_optouts_channel")),
        sa.CheckConstraint("source IN ('page', 'sms_reply')", name=op.f("ck_message_optouts_source")),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_message_optouts_booking_id_bookings")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_optouts")),
    )
    op.create_index("ix_message_optouts_channel_address", "message_optouts", ["channel", "address"])
    op.create_table(
        "message_planned_events",
        sa.Column("event_pk", PK, nullable=False),
        sa.Column("planned_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["event_pk"], ["client_events.id"], name=op.f("fk_message_planned_events_event_pk_client_events")
        ),
        sa.PrimaryKeyConstraint("event_pk", name=op.f("pk_message_planned_events")),
    )


def downgrade() -> None:
    op.drop_table("message_planned_events")
    op.drop_index("ix_message_optouts_channel_address", table_name="message_optouts")
    op.drop_table("message_optouts")
    op.drop_index("ix_traveller_messages_provider_id", table_name="traveller_messages")
    op.drop_index("ix_traveller_messages_booking_id", table_name="traveller_messages")
    op.drop_index("ix_traveller_messages_status_scheduled_for", table_name="traveller_messages")
    op.drop_table("traveller_messages")
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("message_channels")
        batch.drop_column("passenger_language")
    op.drop_table("client_message_settings")
