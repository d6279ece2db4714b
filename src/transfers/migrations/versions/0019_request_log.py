"""The agency portal's request log (docs/rules/agency-portal.md#request-log): ``api_requests``,
one row per client API request (never a body, a key or a query string), written in batches off the
request path (``requestlog/``), kept 7 days, indexed by client and time (the portal's page) and by
time (the retention job).

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "api_requests",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("client_id", PK, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("path", sa.String(length=500), nullable=False),
        sa.Column("status", sa.SmallInteger(), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=True),
        sa.Column("duration_us", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_requests")),
    )
    op.create_index(op.f("ix_api_requests_client_at"), "api_requests", ["client_id", "at", "id"], unique=False)
    op.create_index(op.f("ix_api_requests_at"), "api_requests", ["at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_api_requests_at"), table_name="api_requests")
    op.drop_index(op.f("ix_api_requests_client_at"), table_name="api_requests")
    op.drop_table("api_requests")
