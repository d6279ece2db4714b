"""A search's offers keep no foreign keys (docs/operations/performance.md#searches): ``search_vehicles``
loses ``search_pk -> searches`` and ``partner_id -> partners``.

Why: a search stores its row and its offers (2 per partner: 20 for 10 partners) in one statement on the
answer's path, and each offer row fired both foreign-key triggers: 40 checks per search, each a lookup
that also takes a KEY SHARE lock on the partner's row, which every concurrent search of that airport
locks too. Measured on PostgreSQL, the store's backend CPU went from 0.39 to 0.24 ms per 10-partner
search without them (docs/operations/performance-history.md#search-fourth-pass). What they guarded cannot happen by construction:
the offers are written by the very statement (or transaction) that inserts their search and takes its
id from it, their partners come from the partner directory, and neither searches nor partners are ever
deleted (partners are disabled). ``bookings.search_vehicle_id -> search_vehicles`` stays.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

_PARTNER_FK = "fk_search_vehicles_partner_id_partners"
_SEARCH_FK = "fk_search_vehicles_search_pk_searches"


def upgrade() -> None:
    with op.batch_alter_table("search_vehicles") as batch:
        batch.drop_constraint(_PARTNER_FK, type_="foreignkey")
        batch.drop_constraint(_SEARCH_FK, type_="foreignkey")


def downgrade() -> None:
    with op.batch_alter_table("search_vehicles") as batch:
        batch.create_foreign_key(_PARTNER_FK, "partners", ["partner_id"], ["id"])
        batch.create_foreign_key(_SEARCH_FK, "searches", ["search_pk"], ["id"], ondelete="CASCADE")
