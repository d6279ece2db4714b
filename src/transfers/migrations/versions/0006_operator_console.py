"""Operator console (issue 13, DECISIONS 15): operators, their sessions, sign-in throttling,
partner health per minute, partner secret rotation overlap.

Reserved in the chain so the issues of this wave each own one revision; empty until its issue lands.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
