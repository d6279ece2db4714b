"""The answer's excerpt on every partner delivery attempt (docs/rules/console.md).

``delivery_attempts.answer_excerpt``: the first 500 characters of the partner's answer body
(UTF-8, undecodable bytes replaced, control characters other than newline and tab removed), for
every attempt that got an HTTP answer, so the console's booking page shows what a partner said even
when it accepted. NULL for attempts without an answer (timeouts, refused connections) and for rows
written before this revision.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("delivery_attempts") as batch:
        batch.add_column(sa.Column("answer_excerpt", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("delivery_attempts") as batch:
        batch.drop_column("answer_excerpt")
