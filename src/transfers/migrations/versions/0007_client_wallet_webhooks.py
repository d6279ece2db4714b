"""Client webhook endpoints and events (issue 14, DECISIONS 12-13).

Reserved in the chain so the issues of this wave each own one revision; empty until its issue lands.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
