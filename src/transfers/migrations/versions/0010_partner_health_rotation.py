"""Partner health per minute and signing-secret rotation with an overlap (issue 13, DECISIONS 15).

Reserved in the chain so the issues of this wave each own one revision; empty until its issue lands.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from __future__ import annotations

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
