"""Flights (issue 23, docs/rules/flights.md): reserved for the flight watch; empty until that issue lands.

The revision numbers 0012-0019 were laid down together so that the issues built side by side each
fill their own file and the history stays one line.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from __future__ import annotations

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
