"""The ride (issue 22, docs/rules/ride.md): reserved for driver events and positions; empty until that issue lands.

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
