"""The double-entry journal and partner statements (issue 24, docs/rules/statements.md): reserved; empty until that lands.

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25
"""

from __future__ import annotations

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
