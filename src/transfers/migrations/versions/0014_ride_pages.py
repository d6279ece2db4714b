"""The traveller's and the driver's pages (issue 22, docs/rules/ride.md): reserved for their tokens; empty until that lands.

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

from __future__ import annotations

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
