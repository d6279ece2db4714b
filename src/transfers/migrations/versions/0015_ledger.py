"""The double-entry journal and partner statements (docs/rules/statements.md).

* ``journal_entries`` / ``journal_lines``: every money movement as one balanced entry over the
  accounts (each wallet, each partner's payable, the platform, the world), never updated.
* ``partner_statements``: a partner's month once CLOSED (or PAID), its figures frozen.

The upgrade also writes the entries of everything that happened before it, so the books reconcile
from the first day (each statement of rows already there is written in SQL, the same on both
databases: a ``Money`` column holds NUMERIC on PostgreSQL and integer cents on SQLite, and copying
or negating it is exact in both):

1. one entry per wallet ledger row (a top-up from the world, a debit to the platform, a refund
   back from it), with the wallet row's time, kind, booking and note;
2. a ``reverse_api`` booking's price from the world (when created) and its refund back there
   (when it entered its refunding status);
3. ``RIDE`` = net for every booking that became COMPLETED (at that transition's time);
4. ``CANCELLATION_FEE`` = fee x net / total, half-up, for every client's cancel that kept a fee.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from transfers.db.types import Money, UTCDateTime

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
REFUNDING = "('CANCELLED', 'DECLINED', 'FAILED', 'REFUNDED')"


def upgrade() -> None:
    op.create_table(
        "journal_entries",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("booking_id", PK, nullable=True),
        sa.Column("ledger_entry_id", PK, nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("reference", sa.String(length=200), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name=op.f("fk_journal_entries_booking_id_bookings")),
        sa.ForeignKeyConstraint(
            ["ledger_entry_id"], ["ledger_entries.id"], name=op.f("fk_journal_entries_ledger_entry_id_ledger_entries")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_journal_entries")),
        sa.UniqueConstraint("ledger_entry_id", name=op.f("uq_journal_entries_ledger_entry_id")),
    )
    op.create_index(op.f("ix_journal_entries_booking_id"), "journal_entries", ["booking_id"], unique=False)
    op.create_table(
        "journal_lines",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("entry_id", PK, nullable=False),
        sa.Column("account", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("amount", Money(), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "account IN ('wallet', 'partner', 'platform', 'world')", name=op.f("ck_journal_lines_account_kind")
        ),
        sa.ForeignKeyConstraint(
            ["entry_id"], ["journal_entries.id"], name=op.f("fk_journal_lines_entry_id_journal_entries")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_journal_lines")),
    )
    op.create_index(op.f("ix_journal_lines_entry_id"), "journal_lines", ["entry_id"], unique=False)
    op.create_index(
        "ix_journal_lines_account_owner_id_currency_period",
        "journal_lines",
        ["account", "owner_id", "currency", "period"],
        unique=False,
    )
    op.create_table(
        "partner_statements",
        sa.Column("id", PK, autoincrement=True, nullable=False),
        sa.Column("partner_id", PK, nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("opening_balance", Money(), nullable=False),
        sa.Column("earned", Money(), nullable=False),
        sa.Column("recovered", Money(), nullable=False),
        sa.Column("paid", Money(), nullable=False),
        sa.Column("closing_balance", Money(), nullable=False),
        sa.Column("closed_at", UTCDateTime(), nullable=False),
        sa.Column("paid_at", UTCDateTime(), nullable=True),
        sa.Column("paid_reference", sa.String(length=200), nullable=True),
        sa.Column("payout_entry_id", PK, nullable=True),
        sa.CheckConstraint("status IN ('CLOSED', 'PAID')", name=op.f("ck_partner_statements_status")),
        sa.ForeignKeyConstraint(
            ["partner_id"], ["partners.id"], name=op.f("fk_partner_statements_partner_id_partners")
        ),
        sa.ForeignKeyConstraint(
            ["payout_entry_id"],
            ["journal_entries.id"],
            name=op.f("fk_partner_statements_payout_entry_id_journal_entries"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_statements")),
        sa.UniqueConstraint(
            "partner_id", "currency", "period", name=op.f("uq_partner_statements_partner_id_currency_period")
        ),
    )
    _backfill()


def _month(column: str) -> str:
    """The UTC month of a timestamp column as ``YYYY-MM`` (SQLite stores UTC text)."""
    if op.get_bind().dialect.name == "sqlite":
        return f"substr({column}, 1, 7)"
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM')"


def _share(amount: str, net: str, total: str) -> str:
    """``amount x net / total`` rounded half-up to the cent (all positive)."""
    if op.get_bind().dialect.name == "sqlite":  # integer cents
        return f"((2 * {amount} * {net} + {total}) / (2 * {total}))"
    return f"ROUND({amount} * {net} / {total}, 2)"


def _entries(kind: str, created: str, where: str, note: str = "NULL") -> None:
    op.execute(
        "INSERT INTO journal_entries (kind, currency, booking_id, ledger_entry_id, note, created_at) "
        f"SELECT '{kind}', b.currency, b.id, NULL, {note}, {created} FROM bookings b WHERE {where} ORDER BY b.id"
    )


def _lines(kind: str, legs: list[tuple[str, str, str]]) -> None:
    """Lines of the booking entries of ``kind``: (account, owner id, signed amount over ``b``)."""
    for account, owner, amount in legs:
        op.execute(
            "INSERT INTO journal_lines (entry_id, account, owner_id, currency, amount, period, created_at) "
            f"SELECT e.id, '{account}', {owner}, e.currency, {amount}, {_month('e.created_at')}, e.created_at "
            f"FROM journal_entries e JOIN bookings b ON b.id = e.booking_id WHERE e.kind = '{kind}'"
        )


def _backfill() -> None:
    # 1. every wallet movement
    op.execute(
        "INSERT INTO journal_entries (kind, currency, booking_id, ledger_entry_id, note, created_at) "
        "SELECT l.kind, w.currency, l.booking_id, l.id, l.note, l.created_at "
        "FROM ledger_entries l JOIN wallets w ON w.id = l.wallet_id ORDER BY l.id"
    )
    for account, owner, amount in (
        ("'wallet'", "l.wallet_id", "l.amount"),
        ("CASE WHEN l.kind = 'credit_topup' THEN 'world' ELSE 'platform' END", "0", "-l.amount"),
    ):
        op.execute(
            "INSERT INTO journal_lines (entry_id, account, owner_id, currency, amount, period, created_at) "
            f"SELECT e.id, {account}, {owner}, e.currency, {amount}, {_month('e.created_at')}, e.created_at "
            "FROM journal_entries e JOIN ledger_entries l ON l.id = e.ledger_entry_id"
        )
    # 2. what third parties paid, and got back
    _entries("third_party_payment", "b.created_at", "b.pay_type = 'reverse_api'")
    _lines("third_party_payment", [("world", "0", "-b.total"), ("platform", "0", "b.total")])
    ended = (
        "COALESCE(b.cancelled_at, (SELECT MIN(t.created_at) FROM booking_transitions t "
        "WHERE t.booking_id = b.id AND t.to_status = b.status), b.updated_at)"
    )
    _entries(
        "third_party_refund",
        ended,
        f"b.pay_type = 'reverse_api' AND b.status IN {REFUNDING} AND COALESCE(b.cancellation_refund, b.total) > 0",
    )
    refund = "COALESCE(b.cancellation_refund, b.total)"
    _lines("third_party_refund", [("platform", "0", f"-{refund}"), ("world", "0", refund)])
    # 3. RIDE: every booking that became COMPLETED
    completed = (
        "(SELECT MIN(t.created_at) FROM booking_transitions t WHERE t.booking_id = b.id AND t.to_status = 'COMPLETED')"
    )
    _entries(
        "RIDE",
        f"COALESCE({completed}, b.updated_at)",
        f"b.status = 'COMPLETED' OR {completed} IS NOT NULL",
    )
    _lines("RIDE", [("platform", "0", "-b.net_total"), ("partner", "b.partner_id", "b.net_total")])
    # 4. CANCELLATION_FEE: a client's cancel that kept a fee
    share = _share("b.cancellation_fee", "b.net_total", "b.total")
    _entries(
        "CANCELLATION_FEE",
        "COALESCE(b.cancelled_at, b.updated_at)",
        f"b.status = 'CANCELLED' AND b.cancellation_fee > 0 AND b.total > 0 AND {share} > 0",
        note="'fee kept on cancel'",
    )
    _lines("CANCELLATION_FEE", [("platform", "0", f"-{share}"), ("partner", "b.partner_id", share)])


def downgrade() -> None:
    op.drop_table("partner_statements")
    op.drop_index("ix_journal_lines_account_owner_id_currency_period", table_name="journal_lines")
    op.drop_index(op.f("ix_journal_lines_entry_id"), table_name="journal_lines")
    op.drop_table("journal_lines")
    op.drop_index(op.f("ix_journal_entries_booking_id"), table_name="journal_entries")
    op.drop_table("journal_entries")
