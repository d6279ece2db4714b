"""Client wallet statement and webhooks to clients (docs/rules/wallet.md, docs/rules/webhooks.md).

* ``ledger_entries.balance_after``: the wallet's balance right after each entry, written by the
  same statement that moves the balance (existing rows: the running sum in ledger order).
* ``bookings.event_sequence``: the ``sequence`` of the booking's last client event.
* ``webhook_endpoints``, ``client_events``, ``webhook_deliveries``: where clients are told,
  what happened (written with the change), and each event's delivery to each endpoint.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = transfers.db.types.Money(precision=14, scale=2)
INSTANT = transfers.db.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("ledger_entries") as batch:
        batch.add_column(sa.Column("balance_after", MONEY, nullable=True))
    # Ledger order is id order (each entry is inserted while its wallet row is locked).
    op.execute(
        "UPDATE ledger_entries SET balance_after = (SELECT SUM(l2.amount) FROM ledger_entries l2 "
        "WHERE l2.wallet_id = ledger_entries.wallet_id AND l2.id <= ledger_entries.id)"
    )
    with op.batch_alter_table("ledger_entries") as batch:
        batch.alter_column("balance_after", existing_type=MONEY, nullable=False)
        batch.create_index("ix_ledger_entries_wallet_id_id", ["wallet_id", "id"])
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("event_sequence", sa.Integer(), nullable=False, server_default="0"))
    # Bookings made before this release had no events; their next event continues from the
    # number of status changes they went through, so sequences only grow.
    op.execute(
        "UPDATE bookings SET event_sequence = (SELECT COUNT(*) FROM booking_transitions t "
        "WHERE t.booking_id = bookings.id)"
    )

    op.create_table(
        "webhook_endpoints",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("public_id", sa.String(length=40), nullable=False),
        sa.Column("client_id", PK, nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("description", sa.String(length=500), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("secret_enc", sa.Text(), nullable=False),
        sa.Column("old_secret_enc", sa.Text(), nullable=True),
        sa.Column("old_secret_until", INSTANT, nullable=True),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("created_at", INSTANT, nullable=False),
        sa.Column("updated_at", INSTANT, nullable=False),
        sa.Column("deleted_at", INSTANT, nullable=True),
        sa.CheckConstraint("status IN ('enabled', 'disabled')", name=op.f("ck_webhook_endpoints_status")),
        sa.ForeignKeyConstraint(["client_id"], ["clients.id"], name=op.f("fk_webhook_endpoints_client_id_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
        sa.UniqueConstraint("public_id", name=op.f("uq_webhook_endpoints_public_id")),
    )
    op.create_index("ix_webhook_endpoints_client", "webhook_endpoints", ["client_id", "id"])

    op.create_table(
        "client_events",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("client_id", PK, nullable=False),
        sa.Column("booking_id", PK, nullable=True),
        sa.Column("endpoint_id", PK, nullable=True),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=True),
        sa.Column("previous_status", sa.String(length=32), nullable=True),
        sa.Column("booking", sa.JSON(), nullable=True),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("created_at", INSTANT, nullable=False),
        sa.Column("fanned_out_at", INSTANT, nullable=True),
        sa.ForeignKeyConstraint(["client_id"], ["clients.id"], name=op.f("fk_client_events_client_id_clients")),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_client_events_booking_id_bookings")),
        sa.ForeignKeyConstraint(
            ["endpoint_id"], ["webhook_endpoints.id"], name=op.f("fk_client_events_endpoint_id_webhook_endpoints")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_client_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_client_events_event_id")),
        sa.UniqueConstraint("booking_id", "sequence", name=op.f("uq_client_events_booking_id_sequence")),
    )
    op.create_index("ix_client_events_fan_out", "client_events", ["fanned_out_at", "id"])

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("event_pk", PK, nullable=False),
        sa.Column("endpoint_id", PK, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", INSTANT, nullable=False),
        sa.Column("deadline_at", INSTANT, nullable=False),
        sa.Column("lease_until", INSTANT, nullable=True),
        sa.Column("last_http_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", INSTANT, nullable=False),
        sa.Column("finished_at", INSTANT, nullable=True),
        sa.CheckConstraint("status IN ('pending', 'delivered', 'failed')", name=op.f("ck_webhook_deliveries_status")),
        sa.ForeignKeyConstraint(
            ["event_pk"], ["client_events.id"], name=op.f("fk_webhook_deliveries_event_pk_client_events")
        ),
        sa.ForeignKeyConstraint(
            ["endpoint_id"], ["webhook_endpoints.id"], name=op.f("fk_webhook_deliveries_endpoint_id_webhook_endpoints")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint("event_pk", "endpoint_id", name=op.f("uq_webhook_deliveries_event_pk_endpoint_id")),
    )
    op.create_index("ix_webhook_deliveries_status_next", "webhook_deliveries", ["status", "next_attempt_at"])
    op.create_index("ix_webhook_deliveries_endpoint", "webhook_deliveries", ["endpoint_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_endpoint", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_status_next", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_client_events_fan_out", table_name="client_events")
    op.drop_table("client_events")
    op.drop_index("ix_webhook_endpoints_client", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("event_sequence")
    with op.batch_alter_table("ledger_entries") as batch:
        batch.drop_index("ix_ledger_entries_wallet_id_id")
        batch.drop_column("balance_after")
