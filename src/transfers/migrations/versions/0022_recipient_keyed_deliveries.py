"""Deliveries keyed by their recipient (docs/architecture/deliveries.md): an ``outbox`` message names
its ``recipient`` and may name no booking and no partner; driver positions move from the ``outbox``
to ``webhook_deliveries`` (the client-webhook path, docs/rules/ride.md#client-events).

``outbox``: ``recipient`` added (every existing row is a partner call: ``partner:<partner_id>``),
``booking_id`` and ``partner_id`` nullable. The outbox's ``client.driver_position`` rows are deleted
with their attempts: a position is stale 15 s after it was due and these rows were pruned a day after
they finished; from now on positions are written to ``webhook_deliveries``.

``webhook_deliveries``: ``kind`` (every existing row ``client.webhook``), and for a delivery that is no
client event (a driver position) its own ``webhook_id`` and ``body``, the ``booking_id`` it is about,
and no ``event_pk``; indexes for the claim of kinds tried once and a booking's latest position.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_POSITION = "client.driver_position"
_BOOKING_FK = "fk_webhook_deliveries_booking_id_bookings"


def upgrade() -> None:
    op.get_bind().execute(
        sa.text("DELETE FROM delivery_attempts WHERE outbox_id IN (SELECT id FROM outbox WHERE kind = :kind)"),
        {"kind": _POSITION},
    )
    op.get_bind().execute(sa.text("DELETE FROM outbox WHERE kind = :kind"), {"kind": _POSITION})
    op.add_column("outbox", sa.Column("recipient", sa.String(100), nullable=True))
    op.execute("UPDATE outbox SET recipient = 'partner:' || CAST(partner_id AS VARCHAR(20))")
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("recipient", existing_type=sa.String(100), nullable=False)
        batch.alter_column("booking_id", existing_type=PK, nullable=True)
        batch.alter_column("partner_id", existing_type=PK, nullable=True)

    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(sa.Column("kind", sa.String(32), nullable=False, server_default="client.webhook"))
        batch.add_column(sa.Column("booking_id", PK, nullable=True))
        batch.add_column(sa.Column("webhook_id", sa.String(64), nullable=True))
        batch.add_column(sa.Column("body", sa.Text(), nullable=True))
        batch.alter_column("event_pk", existing_type=PK, nullable=True)
        batch.create_foreign_key(_BOOKING_FK, "bookings", ["booking_id"], ["id"])
        batch.create_index("ix_webhook_deliveries_kind_next", ["kind", "status", "next_attempt_at"])
        batch.create_index("ix_webhook_deliveries_booking", ["booking_id", "kind"])


def downgrade() -> None:
    op.execute("DELETE FROM webhook_deliveries WHERE event_pk IS NULL")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_index("ix_webhook_deliveries_booking")
        batch.drop_index("ix_webhook_deliveries_kind_next")
        batch.drop_constraint(_BOOKING_FK, type_="foreignkey")
        batch.alter_column("event_pk", existing_type=PK, nullable=False)
        batch.drop_column("body")
        batch.drop_column("webhook_id")
        batch.drop_column("booking_id")
        batch.drop_column("kind")

    op.execute(
        "DELETE FROM delivery_attempts WHERE outbox_id IN "
        "(SELECT id FROM outbox WHERE booking_id IS NULL OR partner_id IS NULL)"
    )
    op.execute("DELETE FROM outbox WHERE booking_id IS NULL OR partner_id IS NULL")
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("partner_id", existing_type=PK, nullable=False)
        batch.alter_column("booking_id", existing_type=PK, nullable=False)
        batch.drop_column("recipient")
