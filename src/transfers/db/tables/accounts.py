"""Who pays and who is paid: clients, their wallets and ledger, partners, API keys, idempotency
keys and the operators' audit log. The money invariants (balance never negative, one debit and at
most one refund per booking) are CHECK and UNIQUE constraints here.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from transfers.db.tables._base import PK, metadata
from transfers.db.types import Money, UTCDateTime

clients = Table(
    "clients",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("pay_type", String(32), nullable=False),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("can_create", Boolean, nullable=False, server_default="1"),
    Column("can_cancel", Boolean, nullable=False, server_default="1"),
    Column("created_at", UTCDateTime, nullable=False),
    # The agency's support phone (E.164), given to its travellers on the ride page (docs/rules/ride.md#tracking-page)
    Column("support_phone", String(32), nullable=True),
    CheckConstraint("status IN ('active', 'suspended')", name="status"),
)

# One wallet per client and currency (migration 0026, docs/rules/wallet.md#currencies); exactly one of a
# client's wallets is its default (the first, unless ``wallet add --default`` moved it): the partial
# unique index keeps "at most one" in the database, the use cases "at least one".
wallets = Table(
    "wallets",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("balance", Money, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("is_default", Boolean, nullable=False, server_default="0"),
    CheckConstraint("balance >= 0", name="balance_not_negative"),
    UniqueConstraint("client_id", "currency"),
)

wallets_one_default = Index(
    "ix_wallets_one_default",
    wallets.c.client_id,
    unique=True,
    postgresql_where=wallets.c.is_default,
    sqlite_where=wallets.c.is_default,
)

partners = Table(
    "partners",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("base_url", String(2000), nullable=False),
    # Comma-separated upper-case IATA codes, or "*" for every airport (the sandbox partner).
    Column("airports", Text, nullable=False),
    Column("markup_percent", Numeric(7, 3), nullable=False, server_default="0"),
    Column("status", String(16), nullable=False, server_default="enabled"),
    # Encrypted with the deployment's secret key: they must be recoverable to sign calls.
    Column("outbound_token_enc", Text, nullable=False),
    Column("signing_secret_enc", Text, nullable=False),
    Column("is_sandbox", Boolean, nullable=False, server_default="0"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("hosted", Boolean, nullable=False, server_default="0"),  # prices from its rate card
    # The signing secret replaced by the last rotation, still sent (second signature)
    # until ``previous_secret_until`` (partners/rotation.py).
    Column("previous_signing_secret_enc", Text, nullable=True),
    Column("previous_secret_until", UTCDateTime, nullable=True),
    CheckConstraint("status IN ('enabled', 'disabled')", name="status"),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("prefix", String(32), nullable=False, unique=True),
    Column("key_hash", String(64), nullable=False),
    Column("client_id", ForeignKey("clients.id"), nullable=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
    CheckConstraint("(client_id IS NULL) <> (partner_id IS NULL)", name="exactly_one_owner"),
)

admin_audit = Table(
    "admin_audit",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("actor", String(200), nullable=False),
    Column("action", String(64), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("details", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

ledger_entries = Table(
    "ledger_entries",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("wallet_id", ForeignKey("wallets.id"), nullable=False, index=True),
    # debit_booking | credit_refund | credit_topup
    Column("kind", String(32), nullable=False),
    Column("amount", Money, nullable=False),  # signed: debits are negative
    Column("booking_id", ForeignKey("bookings.id"), nullable=True),
    Column("note", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    # The wallet's balance right after this entry (docs/rules/wallet.md): written from the balance
    # UPDATE's RETURNING in the same transaction, so the newest entry's value is the balance.
    Column("balance_after", Money, nullable=False),
    # One debit and at most one refund per booking, whatever races happen above.
    UniqueConstraint("booking_id", "kind"),
    CheckConstraint(
        "(kind = 'debit_booking' AND amount < 0) OR (kind <> 'debit_booking' AND amount > 0)",
        name="sign_matches_kind",
    ),
    Index("ix_ledger_entries_wallet_id_id", "wallet_id", "id"),  # the statement, newest first (docs/rules/wallet.md)
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("key", String(255), nullable=False),
    Column("request_hash", String(64), nullable=False),
    Column("state", String(16), nullable=False),  # in_progress | done
    Column("response_status", Integer, nullable=True),
    Column("response_body", Text, nullable=True),
    Column("locked_until", UTCDateTime, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    UniqueConstraint("client_id", "key"),
)

admin_audit_created = Index("ix_admin_audit_created", admin_audit.c.created_at, admin_audit.c.id)
