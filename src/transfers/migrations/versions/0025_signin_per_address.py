"""Sign-in counted per client address, and the driver page's position pace (docs/operations/security.md).

``web_signin_attempts``: one row per sign-in attempt admitted in any signed-in area, keyed by the
client's address, so at most 10 a minute per address are checked (before any password hash).
``web_signin_failures.client_address``: the lock-out counts failures per e-mail *and* address, so
nobody locks a person out from elsewhere (rows from before have NULL and count for no address).
``driver_links.last_position_at``: when the link's last position was taken (one per 3 s per link).

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import transfers.db.types

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = transfers.db.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "web_signin_attempts",
        sa.Column("id", PK, primary_key=True, autoincrement=True),
        sa.Column("client_address", sa.String(64), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_web_signin_attempts_address", "web_signin_attempts", ["client_address", "created_at"])
    with op.batch_alter_table("web_signin_failures") as batch:
        batch.add_column(sa.Column("client_address", sa.String(64), nullable=True))
    with op.batch_alter_table("driver_links") as batch:
        batch.add_column(sa.Column("last_position_at", WHEN, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("driver_links") as batch:
        batch.drop_column("last_position_at")
    with op.batch_alter_table("web_signin_failures") as batch:
        batch.drop_column("client_address")
    op.drop_index("ix_web_signin_attempts_address", table_name="web_signin_attempts")
    op.drop_table("web_signin_attempts")
