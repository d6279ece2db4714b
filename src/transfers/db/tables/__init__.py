"""The relational schema (SQLAlchemy Core), shared by the repositories and Alembic.

Core tables rather than ORM classes: the hot paths (auth lookup, booking read, wallet debit) are
single statements, and PERF-NOTES.md shows ORM identity-map overhead dominating such requests.

Invariants the database itself holds, as the last line of defence behind the domain rules:
wallet balances never negative (CHECK); one debit and at most one refund per booking (UNIQUE);
API keys owned by exactly one client or one partner (CHECK); idempotency keys unique per client.
"""

from __future__ import annotations

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.accounts import (
    admin_audit,
    admin_audit_created,
    api_keys,
    clients,
    idempotency_keys,
    ledger_entries,
    partners,
    wallets,
)
from transfers.db.tables.agency import agency_users
from transfers.db.tables.bookings import (
    booking_transitions,
    bookings,
    bookings_created,
    bookings_email,
    bookings_partner_created,
    bookings_partner_reference,
    bookings_surname,
    delivery_attempts,
    outbox,
    search_vehicles,
    searches,
)
from transfers.db.tables.flights import flight_watches
from transfers.db.tables.fx import fx_fetches, fx_rates
from transfers.db.tables.health import LATENCY_BOUNDS_MS, LATENCY_COLUMNS, SEARCH_OUTCOMES, partner_search_minutes
from transfers.db.tables.hosted import hosted_capacity, partner_emails, partner_users, rate_cards
from transfers.db.tables.incidents import incidents, incidents_status_created
from transfers.db.tables.journal import journal_entries, journal_lines, partner_statements, statement_close_runs
from transfers.db.tables.messages import (
    client_message_settings,
    message_optouts,
    message_optouts_address,
    message_planned_events,
    traveller_messages,
    traveller_messages_booking,
    traveller_messages_due,
    traveller_messages_provider,
)
from transfers.db.tables.quality import partner_scorecards
from transfers.db.tables.ratings import ratings, ratings_partner_created
from transfers.db.tables.reference import cancellation_reasons, car_services, vehicle_segments, vehicle_types
from transfers.db.tables.requestlog import api_requests
from transfers.db.tables.return_trips import bookings_trip
from transfers.db.tables.ride import ride_events, ride_positions
from transfers.db.tables.ride_pages import bookings_tracking_token, driver_links
from transfers.db.tables.web import operators, web_sessions, web_signin_attempts, web_signin_failures
from transfers.db.tables.webhooks import client_events, webhook_deliveries, webhook_endpoints

__all__ = [
    "LATENCY_BOUNDS_MS",
    "LATENCY_COLUMNS",
    "PK",
    "SEARCH_OUTCOMES",
    "admin_audit",
    "admin_audit_created",
    "agency_users",
    "api_keys",
    "api_requests",
    "booking_transitions",
    "bookings",
    "bookings_created",
    "bookings_email",
    "bookings_partner_created",
    "bookings_partner_reference",
    "bookings_surname",
    "bookings_tracking_token",
    "bookings_trip",
    "cancellation_reasons",
    "car_services",
    "client_events",
    "client_message_settings",
    "clients",
    "delivery_attempts",
    "driver_links",
    "flight_watches",
    "fx_fetches",
    "fx_rates",
    "hosted_capacity",
    "idempotency_keys",
    "incidents",
    "incidents_status_created",
    "journal_entries",
    "journal_lines",
    "ledger_entries",
    "message_optouts",
    "message_optouts_address",
    "message_planned_events",
    "metadata",
    "operators",
    "outbox",
    "partner_emails",
    "partner_scorecards",
    "partner_search_minutes",
    "partner_statements",
    "partner_users",
    "partners",
    "rate_cards",
    "ratings",
    "ratings_partner_created",
    "ride_events",
    "ride_positions",
    "search_vehicles",
    "searches",
    "statement_close_runs",
    "traveller_messages",
    "traveller_messages_booking",
    "traveller_messages_due",
    "traveller_messages_provider",
    "vehicle_segments",
    "vehicle_types",
    "wallets",
    "web_sessions",
    "web_signin_attempts",
    "web_signin_failures",
    "webhook_deliveries",
    "webhook_endpoints",
]
