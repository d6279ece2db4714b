"""The agency's support phone (docs/rules/ride.md#tracking-page).

``clients.support_phone``: E.164, or NULL (none set); the traveller's ride page offers it to call when the
driver's phone is not shown.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("clients") as batch:
        batch.add_column(sa.Column("support_phone", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("clients") as batch:
        batch.drop_column("support_phone")
