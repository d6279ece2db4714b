"""Money columns store amounts exactly, in any currency's decimals (docs/architecture/money.md#storing).

PostgreSQL: ``NUMERIC(14, 2)`` becomes ``NUMERIC(18, 4)`` (four places: ISO 4217's largest minor unit;
14 integer digits as before). SQLite: the integer in each money column was the amount in cents and
becomes the amount x 10^4, so every stored value is multiplied by 100. Values do not change: 45.10 EUR
reads back 45.10. On SQLite the update is one statement per table, so a half-converted table cannot
be left behind (the migration runs in one transaction).

The downgrade goes back to two places, and refuses (rather than rounds) when an amount has more.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

# Every money column, by table (db/tables: the columns typed ``Money``).
MONEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "search_vehicles": ("net_price", "sell_price"),
    "bookings": ("total", "net_total", "cancellation_fee", "cancellation_refund", "incident_refunded"),
    "wallets": ("balance",),
    "incidents": ("refund",),
    "ledger_entries": ("amount", "balance_after"),
    "journal_lines": ("amount",),
    "partner_statements": ("opening_balance", "earned", "recovered", "paid", "closing_balance"),
}


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def upgrade() -> None:
    for table, columns in MONEY_COLUMNS.items():
        if _sqlite():  # cents -> amount x 10^4; NULL stays NULL
            op.execute(f"UPDATE {table} SET " + ", ".join(f"{c} = {c} * 100" for c in columns))
            continue
        for column in columns:
            op.alter_column(table, column, type_=sa.Numeric(18, 4), existing_type=sa.Numeric(14, 2))


def downgrade() -> None:
    for table, columns in MONEY_COLUMNS.items():
        finer = " OR ".join(f"{c} % 100 <> 0" if _sqlite() else f"{c} <> round({c}, 2)" for c in columns)
        count = op.get_bind().execute(sa.text(f"SELECT count(*) FROM {table} WHERE {finer}")).scalar_one()
        if count:
            raise RuntimeError(f"{table}: {count} rows hold amounts with more than two decimals; not rounded")
        if _sqlite():
            op.execute(f"UPDATE {table} SET " + ", ".join(f"{c} = {c} / 100" for c in columns))
            continue
        for column in columns:
            op.alter_column(table, column, type_=sa.Numeric(14, 2), existing_type=sa.Numeric(18, 4))
