"""The month close driven by the database (docs/rules/statements.md#statements): ``statement_close_runs``,
one row (id 1) holding the month the close last ran in and the last journal line it saw, so every worker
and every restart knows whether a close is due without scanning the journal (was: in each process's
memory, so a second worker or a restart closed again, and a line committed late into an ended month
waited for the next month's run).

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "statement_close_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("line_id", PK, nullable=False),
        sa.Column("ran_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_statement_close_runs")),
        sa.CheckConstraint("id = 1", name=op.f("ck_statement_close_runs_one_row")),
    )


def downgrade() -> None:
    op.drop_table("statement_close_runs")
