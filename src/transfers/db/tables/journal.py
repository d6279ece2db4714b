"""The double-entry journal and the partners' monthly statements (migration 0015,
docs/rules/statements.md).

* ``journal_entries``: one row per money movement, never updated; its ``kind`` says what moved
  (a wallet ledger kind such as ``debit_booking``, ``third_party_payment``, or a partner line kind:
  ``RIDE``, ``CANCELLATION_FEE``, ``RECOVERY``, ``PAYOUT``, ``ADJUSTMENT``). A wallet movement
  names its ``ledger_entries`` row (one journal entry per wallet entry).
* ``journal_lines``: the legs of an entry, one per account, signed so that every entry's lines add
  up to zero. An account is ``(account, owner_id, currency)``: ``wallet`` (owner: the wallet id),
  ``partner`` (owner: the partner id), ``platform``, ``world`` and ``fx`` (owner 0; ``fx``: where a
  converted booking's money changes currency, migration 0032, docs/rules/fx.md#books). ``period`` is the UTC
  month ("2026-11") the line counts in: its own month, or for a partner line written after its
  month's statement closed, the first month still open.
* ``partner_statements``: a partner's month once it is CLOSED (or PAID), with its figures frozen;
  the OPEN month has no row (it is computed from the lines).
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, Integer, String, Table, Text, UniqueConstraint

from transfers.db.tables._base import PK, metadata
from transfers.db.types import Money, UTCDateTime

journal_entries = Table(
    "journal_entries",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("kind", String(32), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("booking_id", ForeignKey("bookings.id"), nullable=True, index=True),
    # The wallet movement this entry journals (one each; None for a move of no wallet).
    Column("ledger_entry_id", ForeignKey("ledger_entries.id"), nullable=True, unique=True),
    Column("note", Text, nullable=True),
    Column("reference", String(200), nullable=True),  # a payout's payment reference
    Column("actor", String(200), nullable=True),  # the operator of a payout or an adjustment
    Column("created_at", UTCDateTime, nullable=False),
)

journal_lines = Table(
    "journal_lines",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("entry_id", ForeignKey("journal_entries.id"), nullable=False, index=True),
    Column("account", String(16), nullable=False),
    Column("owner_id", Integer, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("amount", Money, nullable=False),  # signed; an entry's lines add up to zero
    Column("period", String(7), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("account IN ('wallet', 'partner', 'platform', 'world', 'fx')", name="account_kind"),
    # A partner's statement lines by month; a wallet's or any account's balance.
    Index("ix_journal_lines_account_owner_id_currency_period", "account", "owner_id", "currency", "period"),
)

partner_statements = Table(
    "partner_statements",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("period", String(7), nullable=False),
    Column("status", String(8), nullable=False),  # CLOSED | PAID
    Column("opening_balance", Money, nullable=False),
    Column("earned", Money, nullable=False),
    Column("recovered", Money, nullable=False),
    Column("paid", Money, nullable=False),
    Column("closing_balance", Money, nullable=False),
    Column("closed_at", UTCDateTime, nullable=False),
    Column("paid_at", UTCDateTime, nullable=True),
    Column("paid_reference", String(200), nullable=True),
    Column("payout_entry_id", ForeignKey("journal_entries.id"), nullable=True),
    UniqueConstraint("partner_id", "currency", "period"),
    CheckConstraint("status IN ('CLOSED', 'PAID')", name="status"),
)

# The month close's one row (docs/rules/statements.md#statements, migration 0020): the month the close last
# ran in and the last journal line it saw. Every worker reads it to know whether a close is due.
statement_close_runs = Table(
    "statement_close_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("period", String(7), nullable=False),
    Column("line_id", PK, nullable=False),
    Column("ran_at", UTCDateTime, nullable=False),
    CheckConstraint("id = 1", name="one_row"),
)
