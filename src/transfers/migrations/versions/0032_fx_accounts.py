"""The FX accounts of the journal (docs/rules/fx.md#books).

A converted booking's partner line moves money between two currencies: the platform's side in the
booking's currency into the ``fx`` account of that currency, the partner's in its own out of the ``fx``
account of the partner's, so each entry balances in each currency. ``journal_lines.account`` gains the
value ``fx`` (owner 0, one account per currency).

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

NAME = "ck_journal_lines_account_kind"


def upgrade() -> None:
    with op.batch_alter_table("journal_lines") as batch:
        batch.drop_constraint(op.f(NAME), type_="check")
        batch.create_check_constraint(op.f(NAME), "account IN ('wallet', 'partner', 'platform', 'world', 'fx')")


def downgrade() -> None:
    # an FX line cannot be written back into the older books: downgrading with FX lines fails here
    with op.batch_alter_table("journal_lines") as batch:
        batch.drop_constraint(op.f(NAME), type_="check")
        batch.create_check_constraint(op.f(NAME), "account IN ('wallet', 'partner', 'platform', 'world')")
