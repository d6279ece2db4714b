"""The relational schema (SQLAlchemy Core), shared by the repositories and Alembic.

Core tables rather than ORM classes: the hot paths (auth lookup, booking read, wallet debit) are
single statements, and PERF-NOTES.md shows ORM identity-map overhead dominating such requests.

Invariants the database itself holds, as the last line of defence behind the domain rules:
wallet balances never negative (CHECK); one debit and at most one refund per booking (UNIQUE);
API keys owned by exactly one client or one partner (CHECK); idempotency keys unique per client.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)

from transfers.db.types import Money, UTCDateTime

# Deterministic constraint names so Alembic migrations are identical on both databases.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# BigInteger primary keys; SQLite needs INTEGER for its rowid alias, hence with_variant.
PK = BigInteger().with_variant(Integer(), "sqlite")

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
    CheckConstraint("status IN ('active', 'suspended')", name="status"),
)

wallets = Table(
    "wallets",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False, unique=True),
    Column("currency", String(3), nullable=False),
    Column("balance", Money, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("balance >= 0", name="balance_not_negative"),
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
    Column("hosted", Boolean, nullable=False, server_default="0"),  # issue 16: prices from its rate card
    # Issue 13: the signing secret replaced by the last rotation, still sent (second signature)
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
    CheckConstraint(
        "(client_id IS NULL) <> (partner_id IS NULL)", name="exactly_one_owner"
    ),
)

vehicle_types = Table(
    "vehicle_types",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("max_passengers", Integer, nullable=True),
)

vehicle_segments = Table(
    "vehicle_segments",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
)

car_services = Table(
    "car_services",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
)

cancellation_reasons = Table(
    "cancellation_reasons",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=True),
    Column("position", Integer, nullable=False),
    Column("active", Boolean, nullable=False, server_default="1"),
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

searches = Table(
    "searches",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("search_id", String(64), nullable=False, unique=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("request", JSON, nullable=False),
    Column("airport_iata", String(3), nullable=False),
    Column("pickup_at", UTCDateTime, nullable=False),
    Column("pickup_location", JSON, nullable=False),
    Column("dropoff_location", JSON, nullable=False),
    Column("adult", Integer, nullable=False),
    Column("children", Integer, nullable=False),
    Column("infant", Integer, nullable=False),
    Column("distance_km", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
)

search_vehicles = Table(
    "search_vehicles",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("search_pk", ForeignKey("searches.id", ondelete="CASCADE"), nullable=False),
    Column("vehicle_no", Integer, nullable=False),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("partner_vehicle_id", String(200), nullable=False),
    Column("make", String(200), nullable=False),
    Column("model", String(200), nullable=False),
    Column("type", String(64), nullable=False),
    Column("max_passengers", Integer, nullable=False),
    Column("suitcases", Integer, nullable=False),
    Column("small_bags", Integer, nullable=False),
    Column("net_price", Money, nullable=False),
    Column("sell_price", Money, nullable=False),
    Column("currency", String(3), nullable=False),
    # [{"id": int, "partner_extra_id": str, "name": str, "pricing_type": str,
    #   "net_price": "1.00", "price": "1.10"}]
    Column("extras", JSON, nullable=False),
    UniqueConstraint("search_pk", "vehicle_no"),
)

bookings = Table(
    "bookings",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("reservation_no", String(32), nullable=False, unique=True),
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("search_vehicle_id", ForeignKey("search_vehicles.id"), nullable=True),
    Column("status", String(32), nullable=False),
    Column("pay_type", String(32), nullable=False),
    Column("airport_iata", String(3), nullable=False),
    Column("pickup_at", UTCDateTime, nullable=False),
    Column("pickup_location", JSON, nullable=False),
    Column("dropoff_location", JSON, nullable=False),
    Column("flight_number", String(64), nullable=False),
    Column("extra_requests", Text, nullable=True),
    Column("adult", Integer, nullable=False),
    Column("children", Integer, nullable=False),
    Column("infant", Integer, nullable=False),
    Column("passenger_name", String(200), nullable=False),
    Column("passenger_surname", String(200), nullable=False),
    Column("passenger_email", String(320), nullable=False),
    Column("passenger_phone", String(32), nullable=False),
    Column("suitcase", Integer, nullable=False),
    Column("small_bags", Integer, nullable=False),
    Column("vehicle_make", String(200), nullable=False),
    Column("vehicle_model", String(200), nullable=False),
    Column("vehicle_type", String(64), nullable=False),
    Column("partner_vehicle_id", String(200), nullable=False),
    Column("total", Money, nullable=False),
    Column("net_total", Money, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("distance_km", Integer, nullable=True),
    Column("booking_type", String(16), nullable=False),
    # [{"id": int, "partner_extra_id": str, "name": str, "quantity": int, "price": "..."}]
    Column("extras", JSON, nullable=False),
    Column("partner_reference", String(200), nullable=True),
    Column("driver_name", String(200), nullable=True),
    Column("driver_phone", String(32), nullable=True),
    Column("driver_plate", String(32), nullable=True),
    Column("meeting_point", Text, nullable=True),
    Column("cancellation_reason_id", ForeignKey("cancellation_reasons.id"), nullable=True),
    Column("cancel_note", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # The Idempotency-Key of the request that created it: a retried create can never book twice.
    Column("idempotency_key", String(255), nullable=True),
    Column("synced_at", UTCDateTime, nullable=True),  # last reconciliation with the partner
    Column("cancel_idempotency_key", String(255), nullable=True),  # the key of the cancelling request
    # The ``sequence`` of the booking's last client event (issue 14, DECISIONS 13).
    Column("event_sequence", Integer, nullable=False, server_default="0"),
    UniqueConstraint("client_id", "idempotency_key"),
    Index("ix_bookings_client_created", "client_id", "created_at", "id"),
    Index("ix_bookings_status_created", "status", "created_at"),
    Index("ix_bookings_status_pickup", "status", "pickup_at"),
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
    # The wallet's balance right after this entry (issue 14, DECISIONS 12): written from the balance
    # UPDATE's RETURNING in the same transaction, so the newest entry's value is the balance.
    Column("balance_after", Money, nullable=False),
    # One debit and at most one refund per booking, whatever races happen above.
    UniqueConstraint("booking_id", "kind"),
    CheckConstraint(
        "(kind = 'debit_booking' AND amount < 0) OR (kind <> 'debit_booking' AND amount > 0)",
        name="sign_matches_kind",
    ),
    Index("ix_ledger_entries_wallet_id_id", "wallet_id", "id"),  # the statement, newest first (issue 14)
)

booking_transitions = Table(
    "booking_transitions",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("booking_id", ForeignKey("bookings.id"), nullable=False, index=True),
    Column("from_status", String(32), nullable=True),
    Column("to_status", String(32), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("reason", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("booking_id", ForeignKey("bookings.id"), nullable=False, index=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("kind", String(32), nullable=False),  # booking.create | booking.update
    Column("webhook_id", String(64), nullable=False, unique=True),
    Column("payload", JSON, nullable=False),
    # pending | delivered | failed (permanent error) | expired (deadline passed)
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("deadline_at", UTCDateTime, nullable=False),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    Index("ix_outbox_status_next", "status", "next_attempt_at"),
)

delivery_attempts = Table(
    "delivery_attempts",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("outbox_id", ForeignKey("outbox.id"), nullable=False, index=True),
    Column("attempt_no", Integer, nullable=False),
    Column("started_at", UTCDateTime, nullable=False),
    Column("duration_ms", Integer, nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("http_status", Integer, nullable=True),
    Column("error", Text, nullable=True),
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


# --- issue 15: cancellation policies, fees and amendments (DECISIONS 14; migration 0008) -------------
# Columns added to existing tables, kept together here so the other issues' blocks never collide.
# A policy is its JSON tiers (``cancellation/policy.py``); NULL means "free until pickup".
partners.append_column(Column("cancellation_policy", JSON, nullable=True))  # the partner's default
search_vehicles.append_column(Column("cancellation_policy", JSON, nullable=True))  # as quoted
bookings.append_column(Column("cancellation_policy", JSON, nullable=True))  # as sold
bookings.append_column(Column("cancellation_fee", Money, nullable=True))  # kept on cancel
bookings.append_column(Column("cancellation_refund", Money, nullable=True))  # fee + refund = total
bookings.append_column(Column("cancelled_at", UTCDateTime, nullable=True))
bookings.append_column(Column("cancelled_by", String(16), nullable=True))  # client | partner | operator
# The latest amendment: {"status", "changes", "message", "requested_at", "decided_at"} (amendments.py).
bookings.append_column(Column("amendment", JSON, nullable=True))


# --- issue 16: hosted partners, rate cards, partner users, daily capacity, partner e-mails ------------
# (DECISIONS 16; migration 0009). ``partners.hosted`` is added to the partners table there.

rate_cards = Table(
    "rate_cards",
    metadata,
    Column("partner_id", PK, ForeignKey("partners.id"), primary_key=True),
    Column("card", JSON, nullable=False),  # validated against openapi/rate-card.schema.json when set
    Column("updated_at", UTCDateTime, nullable=False),
    Column("updated_by", String(200), nullable=False),
)

# Bookings holding a seat of a hosted vehicle on one local pickup date (the airport's calendar).
# Claimed by a conditional UPDATE in the booking's create transaction: race-free across processes.
hosted_capacity = Table(
    "hosted_capacity",
    metadata,
    Column("partner_id", PK, ForeignKey("partners.id"), primary_key=True),
    Column("vehicle_id", String(64), primary_key=True),
    Column("local_date", String(10), primary_key=True),  # YYYY-MM-DD
    Column("booked", Integer, nullable=False, server_default="0"),
    CheckConstraint("booked >= 0", name="booked_not_negative"),
)

partner_users = Table(
    "partner_users",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", PK, ForeignKey("partners.id"), nullable=False, index=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("password_hash", Text, nullable=False),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("status IN ('active', 'disabled')", name="status"),
)

# E-mails to a partner's users (new booking, cancellation), written in the transaction of the
# change they report and sent by the worker; ``dedupe_key`` makes "never twice" a constraint.
partner_emails = Table(
    "partner_emails",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", PK, ForeignKey("partners.id"), nullable=False),
    Column("booking_id", PK, ForeignKey("bookings.id"), nullable=False),
    Column("kind", String(32), nullable=False),  # booking.new | booking.cancelled | booking.amended
    Column("dedupe_key", String(100), nullable=False, unique=True),
    Column("status", String(16), nullable=False),  # pending | sent | failed
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("recipients", JSON, nullable=True),  # who it went to, once sent
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime, nullable=True),
    Index("ix_partner_emails_status_next", "status", "next_attempt_at"),
)

# --- issue 13 (part 2): partner health per minute, signing-secret rotation -------------------------
# Latency histogram bounds (milliseconds, each bucket counts durations <= its bound and above the
# previous one; the last column counts everything slower). Fixed: changing them is a migration.
LATENCY_BOUNDS_MS = (25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000)
LATENCY_COLUMNS = (*(f"lat_le_{bound}" for bound in LATENCY_BOUNDS_MS), "lat_inf")
# The partner client's outcomes (partners/client.py ``Outcome``), one counter column each.
SEARCH_OUTCOMES = ("ok", "timeout", "connect_error", "http_error", "invalid", "too_large", "redirect", "blocked")

# One row per partner and UTC minute with at least one search call: counts and a latency summary,
# never a row per call (partners/health.py buffers in-process and adds to these rows).
partner_search_minutes = Table(
    "partner_search_minutes",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("partner_id", ForeignKey("partners.id"), nullable=False),
    Column("minute", UTCDateTime, nullable=False),
    Column("calls", Integer, nullable=False),
    *(Column(f"outcome_{name}", Integer, nullable=False, server_default="0") for name in SEARCH_OUTCOMES),
    Column("latency_sum_ms", BigInteger, nullable=False, server_default="0"),
    Column("latency_max_ms", Integer, nullable=False, server_default="0"),
    *(Column(name, Integer, nullable=False, server_default="0") for name in LATENCY_COLUMNS),
    UniqueConstraint("partner_id", "minute"),
    Index("ix_partner_search_minutes_minute", "minute"),
)

# --- issue 13 (operator console, DECISIONS 15): operators, browser sessions, sign-in throttling --------
# ``web_sessions`` and ``web_signin_failures`` serve every signed-in web area (``realm``: "console"
# for operators, "partner" for the partner portal's users): ``user_id`` is that realm's user's id.

operators = Table(
    "operators",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("email", String(320), nullable=False, unique=True),  # stored lower-case
    Column("role", String(16), nullable=False),
    Column("password_hash", String(255), nullable=False),  # argon2id (webauth/passwords.py)
    Column("status", String(16), nullable=False, server_default="active"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("disabled_at", UTCDateTime, nullable=True),
    CheckConstraint("role IN ('admin', 'support')", name="role"),
    CheckConstraint("status IN ('active', 'disabled')", name="status"),
)

web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("realm", String(16), nullable=False),
    Column("user_id", BigInteger, nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),  # sha256 of the cookie's token
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_web_sessions_realm_user", "realm", "user_id"),
)

web_signin_failures = Table(
    "web_signin_failures",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("realm", String(16), nullable=False),
    Column("email", String(320), nullable=False),  # as typed, lower-cased, cut to 320
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_web_signin_failures_realm_email", "realm", "email", "created_at"),
)

admin_audit_created = Index("ix_admin_audit_created", admin_audit.c.created_at, admin_audit.c.id)
bookings_created = Index("ix_bookings_created", bookings.c.created_at, bookings.c.id)
bookings_partner_created = Index("ix_bookings_partner_created", bookings.c.partner_id, bookings.c.created_at,
                                 bookings.c.id)
bookings_partner_reference = Index("ix_bookings_partner_reference", bookings.c.partner_reference)
bookings_surname = Index("ix_bookings_surname_lower", func.lower(bookings.c.passenger_surname).label("surname_lower"),
                         postgresql_ops={"surname_lower": "text_pattern_ops"}).ddl_if(dialect="postgresql")
bookings_email = Index("ix_bookings_email_lower", func.lower(bookings.c.passenger_email).label("email_lower"),
                       postgresql_ops={"email_lower": "text_pattern_ops"}).ddl_if(dialect="postgresql")


# --- issue 14: webhooks to clients (DECISIONS 13) -------------------------------------------------

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("public_id", String(40), nullable=False, unique=True),  # "we_..." as the API names it
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("url", String(2000), nullable=False),
    Column("events", JSON, nullable=False),  # ["*"] or event type names
    Column("description", String(500), nullable=True),
    Column("status", String(16), nullable=False),  # enabled | disabled
    # Encrypted with the deployment's secret key, like partner secrets: needed to sign.
    Column("secret_enc", Text, nullable=False),
    Column("old_secret_enc", Text, nullable=True),  # the secret before the last rotation ...
    Column("old_secret_until", UTCDateTime, nullable=True),  # ... still signed with until then
    Column("disabled_reason", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("deleted_at", UTCDateTime, nullable=True),  # deleted endpoints keep their delivery history
    CheckConstraint("status IN ('enabled', 'disabled')", name="status"),
    Index("ix_webhook_endpoints_client", "client_id", "id"),
)

client_events = Table(
    "client_events",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("event_id", String(40), nullable=False, unique=True),  # "evt_...": the webhook-id
    Column("client_id", ForeignKey("clients.id"), nullable=False),
    Column("booking_id", ForeignKey("bookings.id"), nullable=True),  # None: a ping
    Column("endpoint_id", ForeignKey("webhook_endpoints.id"), nullable=True),  # a ping's one endpoint
    Column("type", String(64), nullable=False),
    Column("sequence", Integer, nullable=True),
    Column("status", String(32), nullable=True),  # the booking's status as of the event
    Column("previous_status", String(32), nullable=True),
    # The BookingResource as of the event; None when written by a one-statement path that cannot
    # render it (the fan-out then renders the row with this event's status).
    Column("booking", JSON, nullable=True),
    Column("body", Text, nullable=True),  # the exact bytes every delivery sends, fixed at fan-out
    Column("created_at", UTCDateTime, nullable=False),
    Column("fanned_out_at", UTCDateTime, nullable=True),
    UniqueConstraint("booking_id", "sequence"),
    Index("ix_client_events_fan_out", "fanned_out_at", "id"),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("event_pk", ForeignKey("client_events.id"), nullable=False),
    Column("endpoint_id", ForeignKey("webhook_endpoints.id"), nullable=False),
    Column("status", String(16), nullable=False),  # pending | delivered | failed
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("deadline_at", UTCDateTime, nullable=False),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("last_http_status", Integer, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    CheckConstraint("status IN ('pending', 'delivered', 'failed')", name="status"),
    UniqueConstraint("event_pk", "endpoint_id"),
    Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
    Index("ix_webhook_deliveries_endpoint", "endpoint_id", "id"),
)
