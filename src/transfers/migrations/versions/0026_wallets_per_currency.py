"""Wallets per currency (docs/rules/wallet.md#currencies): a client may hold one wallet per currency,
one of them its default. ``wallets.client_id`` is no longer unique; ``(client_id, currency)`` is, and
``is_default`` marks the default (at most one per client: a partial unique index). Every existing
wallet is its client's only one, so it becomes the default.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("wallets") as batch:
        batch.add_column(sa.Column("is_default", sa.Boolean(), nullable=False, server_default="0"))
        batch.drop_constraint("uq_wallets_client_id", type_="unique")
        batch.create_unique_constraint("uq_wallets_client_id_currency", ["client_id", "currency"])
    op.execute("UPDATE wallets SET is_default = TRUE")
    op.create_index(
        "ix_wallets_one_default",
        "wallets",
        ["client_id"],
        unique=True,
        postgresql_where=sa.text("is_default"),
        sqlite_where=sa.text("is_default"),
    )


def downgrade() -> None:
    extra = op.get_bind().execute(sa.text("SELECT count(*) FROM wallets WHERE NOT is_default")).scalar_one()
    if extra:
        raise RuntimeError(f"{extra} wallets are not their client's default: one wallet per client cannot hold them")
    op.drop_index("ix_wallets_one_default", table_name="wallets")
    with op.batch_alter_table("wallets") as batch:
        batch.drop_constraint("uq_wallets_client_id_currency", type_="unique")
        batch.create_unique_constraint("uq_wallets_client_id", ["client_id"])
        batch.drop_column("is_default")
