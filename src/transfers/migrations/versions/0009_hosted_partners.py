"""Hosted partners, rate cards, partner users and daily capacity (issue 16, DECISIONS 16).

Reserved in the chain so the issues of this wave each own one revision; empty until its issue lands.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
