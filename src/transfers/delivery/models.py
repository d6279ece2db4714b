"""The outbox's rows as typed values: ``NewMessage`` (about to be written) and ``OutboxMessage``
(a stored row, as the repository returns it to the dispatcher, the jobs and the CLI).

Every field is the ``outbox`` column of that name (tests/unit/test_typed_rows.py pins them).
``from_row`` takes a row mapping by a fixed field list and validates nothing: the service wrote
the row, and the worker reads many of them.

A message is for its ``recipient`` (``partner:12``; a kind names its own, docs/architecture/deliveries.md);
its booking and partner are optional: a partner call names both, a message to someone else may name
neither (``OutboxMessage.booking`` and ``.partner`` answer them where a kind needs them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from transfers.rows import row_type

PENDING, DELIVERED, FAILED, EXPIRED = "pending", "delivered", "failed", "expired"


def partner_recipient(partner_id: int) -> str:
    """The recipient of a partner's messages (its calls)."""
    return f"partner:{partner_id}"


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to write with a booking change (``outbox.repository.new_message``): every column
    but the ones the write supplies (``id``; ``booking_id``, which on the create's one statement
    comes from the booking's own INSERT) and the ones only delivery sets (``last_error``,
    ``finished_at``)."""

    partner_id: int | None
    recipient: str  # who it is for: ``partner:12``, or what its kind names
    kind: str  # a registered kind's name (a ``MessageKind`` value for a partner call)
    webhook_id: str  # sent on every attempt: partners dedupe on it
    payload: dict[str, Any]
    status: str
    attempts: int
    next_attempt_at: datetime
    deadline_at: datetime
    lease_until: datetime | None  # set: written already leased to the writer (the create's own attempt)
    created_at: datetime

    def values(self) -> dict[str, Any]:
        """The columns it sets, by name."""
        return {name: getattr(self, name) for name in NEW_MESSAGE_FIELDS}

    def stored(self, message_id: int, booking_id: int | None) -> OutboxMessage:
        """The row as written under ``message_id`` for ``booking_id``."""
        return OutboxMessage(
            message_id,
            booking_id,
            self.partner_id,
            self.recipient,
            self.kind,
            self.webhook_id,
            self.payload,
            self.status,
            self.attempts,
            self.next_attempt_at,
            self.deadline_at,
            self.lease_until,
            None,
            self.created_at,
            None,
        )


@row_type
class OutboxMessage:
    """One message to deliver at least once (``outbox`` row): a partner call, or a registered kind's."""

    id: int
    booking_id: int | None  # None: a message about no booking
    partner_id: int | None  # None: a message to no partner
    recipient: str
    kind: str  # a registered kind's name (``MessageKind.of`` for a partner call)
    webhook_id: str
    payload: dict[str, Any]
    status: str  # pending | delivered | failed | expired
    attempts: int
    next_attempt_at: datetime
    deadline_at: datetime
    lease_until: datetime | None
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> OutboxMessage:  # a dict or a SQLAlchemy RowMapping
        return cls(
            row["id"],
            row["booking_id"],
            row["partner_id"],
            row["recipient"],
            row["kind"],
            row["webhook_id"],
            row["payload"],
            row["status"],
            row["attempts"],
            row["next_attempt_at"],
            row["deadline_at"],
            row["lease_until"],
            row["last_error"],
            row["created_at"],
            row["finished_at"],
        )

    def as_dict(self) -> dict[str, Any]:
        """Every column by name (the CLI's JSON)."""
        return {name: getattr(self, name) for name in OUTBOX_MESSAGE_FIELDS}

    def log_fields(self) -> dict[str, object]:
        """What a delivery's log line carries."""
        return {
            "outbox_id": self.id,
            "reservation_no": self.reservation_no,
            "partner_id": self.partner_id,
            "recipient": self.recipient,
        }

    @property
    def booking(self) -> int:
        """The booking it is about, for a kind whose messages always name one (a partner call)."""
        if self.booking_id is None:
            raise ValueError(f"outbox message {self.id} ({self.kind}) names no booking")
        return self.booking_id

    @property
    def partner(self) -> int:
        """The partner it goes to, for a kind whose messages always name one (a partner call)."""
        if self.partner_id is None:
            raise ValueError(f"outbox message {self.id} ({self.kind}) names no partner")
        return self.partner_id

    @property
    def reservation_no(self) -> str | None:
        """The booking's number as the payload carries it (every kind sends it), for logs."""
        value = self.payload.get("reservation_no")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class ListedMessage:
    """A message as the operator's list shows it: with its booking's number and its partner's name."""

    message: OutboxMessage
    reservation_no: str | None  # None: a message about no booking
    partner_name: str | None  # None: a message to no partner

    def as_dict(self) -> dict[str, Any]:
        """The list's JSON: every column but the payload (``bookings show --json`` has it)."""
        m = self.message
        return {
            "id": m.id,
            "booking_id": m.booking_id,
            "reservation_no": self.reservation_no,
            "partner_id": m.partner_id,
            "partner_name": self.partner_name,
            "recipient": m.recipient,
            "kind": m.kind,
            "webhook_id": m.webhook_id,
            "status": m.status,
            "attempts": m.attempts,
            "next_attempt_at": m.next_attempt_at,
            "deadline_at": m.deadline_at,
            "lease_until": m.lease_until,
            "last_error": m.last_error,
            "created_at": m.created_at,
            "finished_at": m.finished_at,
        }


@row_type
class DeliveryAttempt:
    """One ``delivery_attempts`` row: an attempt's outcome in the message's log."""

    id: int
    outbox_id: int
    attempt_no: int
    started_at: datetime
    duration_ms: int
    outcome: str  # e.g. ``done:ok``, ``retry:timeout``, ``permanent:http_error``
    http_status: int | None
    error: str | None
    answer_excerpt: str | None  # the answer's first 500 characters, cleaned; None without an answer

    def as_dict(self) -> dict[str, Any]:
        """Every column by name (``transfers bookings show --json``, the console's story)."""
        return {name: getattr(self, name) for name in DELIVERY_ATTEMPT_FIELDS}


NEW_MESSAGE_FIELDS = tuple(f.name for f in fields(NewMessage))
DELIVERY_ATTEMPT_FIELDS = tuple(f.name for f in fields(DeliveryAttempt))
OUTBOX_MESSAGE_FIELDS = tuple(f.name for f in fields(OutboxMessage))
