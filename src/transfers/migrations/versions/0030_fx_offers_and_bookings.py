"""Converted offers and bookings (docs/rules/fx.md#search).

A search in another currency than a partner quotes in converts the partner's price; the offer and
the booking keep, beside the converted amounts they are sold in, the partner's own:

* ``search_vehicles.fx`` / ``bookings.fx``: the rate used (``{"from_currency", "to_currency",
  "rate", "source", "as_of"}``), NULL when nothing was converted;
* ``search_vehicles.partner_currency`` / ``partner_net_price``: the partner's currency and its own
  net price of the vehicle (NULL: not converted, ``net_price`` is the partner's);
* ``bookings.partner_currency`` / ``partner_net_total``: the partner's currency and its own net
  total (vehicle and extras), what it is told and paid in (NULL: ``net_total`` / ``currency``).

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from transfers.db.types import Money

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("search_vehicles") as batch:
        batch.add_column(sa.Column("fx", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("partner_currency", sa.String(3), nullable=True))
        batch.add_column(sa.Column("partner_net_price", Money(), nullable=True))
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("fx", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("partner_currency", sa.String(3), nullable=True))
        batch.add_column(sa.Column("partner_net_total", Money(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("partner_net_total")
        batch.drop_column("partner_currency")
        batch.drop_column("fx")
    with op.batch_alter_table("search_vehicles") as batch:
        batch.drop_column("partner_net_price")
        batch.drop_column("partner_currency")
        batch.drop_column("fx")
