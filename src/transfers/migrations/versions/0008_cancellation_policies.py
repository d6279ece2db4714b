"""Cancellation policies, fees and amendments (issue 15, DECISIONS 14).

Reserved in the chain so the issues of this wave each own one revision; empty until its issue lands.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from __future__ import annotations

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
