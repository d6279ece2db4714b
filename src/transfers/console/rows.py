"""The typed rows of the console's read-only queries (``queries``, ``admin_queries``,
``delivery_queries``): one per page line or panel, built from the row in the query so the routes
and templates read attributes and a renamed column fails at the type check, not on a page.
Each field list is its statement's select list (``tests/unit/test_typed_rows.py`` checks they
are columns)."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from decimal import Decimal
from typing import Any

from transfers.rows import row_type

# --- dashboard ---------------------------------------------------------------------------------------


@row_type
class DeliverySummary:
    """Partner deliveries pending and failed (refused or expired), and the oldest pending one's creation."""

    pending: int
    failed: int
    oldest_pending: datetime | None


@row_type
class PartnerErrors:
    """A partner whose deliveries failed attempts in the window, and how many."""

    id: int
    name: str
    errors: int


@row_type
class WebhookFailure:
    """A client webhook endpoint with failed (or being retried) deliveries in the window."""

    public_id: str
    url: str
    client_id: int
    client_name: str
    failed: int
    retrying: int


# --- bookings list, choices, audit log ---------------------------------------------------------------


@row_type
class BookingLine:
    """A line of the console's bookings list: ``bookings`` columns and the two parties' names."""

    id: int
    reservation_no: str
    status: str
    client_id: int
    client_name: str
    partner_id: int
    partner_name: str
    airport_iata: str
    pickup_at: datetime
    passenger_name: str
    passenger_surname: str
    total: Decimal
    currency: str
    partner_reference: str | None
    created_at: datetime


@row_type
class Choice:
    """A client or partner offered in a filter's drop-down."""

    id: int
    name: str


@row_type
class AuditEntry:
    """One ``admin_audit`` row; ``details`` is the JSON the action wrote."""

    id: int
    actor: str
    action: str
    subject: str
    details: dict[str, Any]
    created_at: datetime


# --- clients and partners ----------------------------------------------------------------------------


@row_type
class ClientLine:
    """A line of the clients' list: the client and its wallet (none yet: currency and balance None)."""

    id: int
    name: str
    pay_type: str
    status: str
    created_at: datetime
    currency: str | None
    balance: Decimal | None


@row_type
class ClientDetail:
    """A ``clients`` row with its wallet's id, currency and balance (None without a wallet)."""

    id: int
    name: str
    pay_type: str
    status: str
    can_create: bool
    can_cancel: bool
    created_at: datetime
    support_phone: str | None  # the agency's, for its travellers' ride page (E.164)
    wallet_id: int | None
    currency: str | None
    balance: Decimal | None


@row_type
class KeyLine:
    """An API key as the console shows it: the prefix and its dates, never the hash."""

    prefix: str
    created_at: datetime
    revoked_at: datetime | None


@row_type
class ConsolePartner:
    """A partner's public columns (no sealed secret) for the console's partner pages."""

    id: int
    name: str
    base_url: str
    airports: str  # comma-separated IATA codes, or "*"
    markup_percent: Decimal
    status: str
    is_sandbox: bool
    created_at: datetime
    previous_secret_until: datetime | None  # a previous signing secret still sent until then
    cancellation_policy: dict[str, Any] | None  # JSON: the partner's default policy
    hosted: bool
    follow_flight_minutes: int
    free_wait_minutes: int


@row_type
class LastCheck:
    """The latest conformance check of a partner: its ``partner.check`` audit row's who, when and table."""

    actor: str
    created_at: datetime
    details: dict[str, Any]


# --- deliveries --------------------------------------------------------------------------------------


@row_type
class DeliveryLine:
    """A partner delivery (``outbox`` row without its payload) with its booking's number and partner's name."""

    id: int
    kind: str
    status: str
    attempts: int
    next_attempt_at: datetime
    deadline_at: datetime
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None
    partner_id: int
    recipient: str
    webhook_id: str
    partner_name: str
    reservation_no: str


@row_type
class PartnerGroup:
    """A partner with failed, expired or pending deliveries: the counts and the newest one's error."""

    id: int
    name: str
    status: str
    failed: int
    pending: int
    newest_id: int
    last_error: str | None


@row_type
class EndpointGroup:
    """A client webhook endpoint with failed or pending deliveries, and the newest one's answer."""

    endpoint_pk: int
    public_id: str
    url: str
    status: str
    disabled_reason: str | None
    client_id: int
    client_name: str
    failed: int
    pending: int
    newest_id: int
    last_error: str | None
    last_http_status: int | None


def names(row: type) -> tuple[str, ...]:
    """A row type's field names, in order (its statement's select list)."""
    return tuple(f.name for f in fields(row))
