"""Incidents (docs/rules/incidents.md; migration 0016): what went wrong on a ride and who
pays for it.

The database holds the rules that must survive any race: one incident per booking and type
(``UNIQUE (booking_id, type)``: two reports sent at once record one, the other answers
``INCIDENT_EXISTS``), the closed vocabularies (CHECKs), a refund that is never negative, and a
resolution written once (a compare-and-set on ``status = 'OPEN'``, ``incidents/repository.py``,
under the booking's row lock, so the refunds of a booking's incidents are decided one at a time).
Each refund's wallet entry is its own ledger kind per incident type, so ``UNIQUE (booking_id, kind)``
of ``ledger_entries`` also holds "at most one refund per incident" (``wallet/ledger.py``).
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, String, Table, Text, UniqueConstraint

from transfers.db.tables._base import PK, metadata
from transfers.db.tables.bookings import bookings
from transfers.db.types import Money, UTCDateTime

# The part of the price incidents have refunded so far (NULL: nothing): what is still refundable is
# ``total - incident_refunded`` (docs/rules/incidents.md#resolve), and entering REFUNDED gives back
# only the rest (``bookings/cancelling.refund_due``).
bookings.append_column(Column("incident_refunded", Money, nullable=True))

incidents = Table(
    "incidents",
    metadata,
    Column("id", PK, primary_key=True, autoincrement=True),
    Column("public_id", String(40), nullable=False, unique=True),  # "inc_" + 128 random bits, hex
    Column("booking_id", ForeignKey("bookings.id"), nullable=False),
    Column("type", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("reported_by", String(16), nullable=False),
    Column("description", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # The resolution: all NULL while OPEN.
    Column("responsible", String(16), nullable=True),
    Column("refund", Money, nullable=True),
    Column("note", Text, nullable=True),
    Column("resolved_at", UTCDateTime, nullable=True),
    Column("resolved_by", String(200), nullable=True),
    UniqueConstraint("booking_id", "type"),
    CheckConstraint(
        "type IN ('DRIVER_NO_SHOW', 'DRIVER_LATE', 'CUSTOMER_NO_SHOW', 'WRONG_VEHICLE', 'OTHER')", name="type"
    ),
    CheckConstraint("status IN ('OPEN', 'RESOLVED')", name="status"),
    CheckConstraint("reported_by IN ('client', 'partner', 'operator')", name="reported_by"),
    CheckConstraint("responsible IS NULL OR responsible IN ('partner', 'client', 'none')", name="responsible"),
    CheckConstraint("refund IS NULL OR refund >= 0", name="refund_not_negative"),
    CheckConstraint(
        "(status = 'OPEN' AND resolved_at IS NULL AND refund IS NULL AND responsible IS NULL)"
        " OR (status = 'RESOLVED' AND resolved_at IS NOT NULL AND refund IS NOT NULL AND responsible IS NOT NULL)",
        name="resolution_complete",
    ),
)
# The operators' list of open incidents, oldest first (``transfers incidents list --open``).
incidents_status_created = Index("ix_incidents_status_created", incidents.c.status, incidents.c.created_at)
