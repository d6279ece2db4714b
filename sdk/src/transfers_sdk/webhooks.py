"""Receiving the service's webhooks: ``verify_webhook`` checks the Standard Webhooks signature and
the timestamp and answers the typed event; ``parse_event`` types an already-verified body.

    from transfers_sdk import BookingEvent, WebhookVerificationError, verify_webhook

    try:
        event = verify_webhook(raw_body, request_headers, secret)  # the endpoint's "whsec_..."
    except WebhookVerificationError:
        return 400
    if already_seen(event.id):  # at least once: the same event may come again (same webhook-id)
        return 200
    if isinstance(event, BookingEvent) and event.sequence > last_sequence(event.booking.reservation_no):
        store(event.booking)  # sequence orders a booking's events; drop older ones
    return 200

During the 24 h after a secret rotation the service signs with both secrets; pass both
(``secret=[new, old]``) while you switch. Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from transfers_sdk.errors import TransfersError
from transfers_sdk.incidents import Incident
from transfers_sdk.models import Booking, BookingStatus, RideEvent, RidePosition
from transfers_sdk.models import _instant as _when

BOOKING_CREATED = "booking.created"
BOOKING_STATUS_CHANGED = "booking.status_changed"
BOOKING_DRIVER_UPDATED = "booking.driver_updated"
BOOKING_AMENDMENT_APPLIED = "booking.amendment_applied"
BOOKING_AMENDMENT_REJECTED = "booking.amendment_rejected"
BOOKING_INCIDENT_OPENED = "booking.incident_opened"  # data.incident: docs/rules/incidents.md
BOOKING_INCIDENT_RESOLVED = "booking.incident_resolved"
BOOKING_DRIVER_EVENT = "booking.driver_event"
BOOKING_DRIVER_POSITION = "booking.driver_position"  # only to endpoints that name it ("*" does not)
BOOKING_PICKUP_TIME_CHANGED = "booking.pickup_time_changed"
BOOKING_FLIGHT_DISRUPTED = "booking.flight_disrupted"
BOOKING_MESSAGE_FAILED = "booking.message_failed"  # data.message: docs/rules/messages.md#sending
PING = "ping"
EVENT_TYPES = (
    BOOKING_CREATED,
    BOOKING_STATUS_CHANGED,
    BOOKING_DRIVER_UPDATED,
    BOOKING_AMENDMENT_APPLIED,
    BOOKING_AMENDMENT_REJECTED,
    BOOKING_INCIDENT_OPENED,
    BOOKING_INCIDENT_RESOLVED,
    BOOKING_DRIVER_EVENT,
    BOOKING_DRIVER_POSITION,
    BOOKING_PICKUP_TIME_CHANGED,
    BOOKING_FLIGHT_DISRUPTED,
    BOOKING_MESSAGE_FAILED,
    PING,
)
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(TransfersError):
    """The body was not signed by the endpoint's secret, or its timestamp is too old or too new."""


@dataclass(frozen=True)
class WebhookEvent:
    """Any event: ``id`` (``evt_...``, the ``webhook-id``; dedupe on it), ``type``, ``created_at``
    and the raw ``data``. Events of a type this SDK does not know yet come as this class."""

    id: str
    type: str
    created_at: datetime
    data: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class BookingEvent(WebhookEvent):
    """``booking.*``: the booking as of the event, its ``sequence`` (one more with every event of
    that booking), for ``booking.status_changed`` the status it left, for
    ``booking.pickup_time_changed`` the pickup before the flight moved it and why (``FLIGHT_DELAY`` or
    ``FLIGHT_EARLY``), for ``booking.incident_*`` the ``incident``, and for ``booking.message_failed`` the
    ``message`` to the traveller that failed (``{"id", "template", "channel", "to" (masked), "language",
    "status", "reason", "scheduled_for", "sent_at"}``)."""

    booking: Booking = field(default=None, repr=True)  # type: ignore[assignment]
    sequence: int = 0
    previous_status: BookingStatus | None = None
    incident: Incident | None = None
    previous_pickup_datetime: datetime | None = None
    reason: str | None = None
    ride_event: RideEvent | None = None  # ``booking.driver_event``: the event recorded
    message: Mapping[str, Any] | None = None  # ``booking.message_failed``: the message, as the service shows it


@dataclass(frozen=True)
class DriverPositionEvent(WebhookEvent):
    """``booking.driver_position`` (only for endpoints that name it): the booking's latest position,
    at most every 15 s, no ``sequence``; a stale one is never sent."""

    reservation_no: str = ""
    position: RidePosition = field(default=None, repr=True)  # type: ignore[assignment]


@dataclass(frozen=True)
class PingEvent(WebhookEvent):
    endpoint_id: str = ""


def parse_event(body: bytes | str | Mapping[str, Any]) -> WebhookEvent:
    """The typed event of a (verified) body."""
    data = json.loads(body) if isinstance(body, bytes | str) else dict(body)
    if not isinstance(data, dict):
        raise ValueError("a webhook body is a JSON object")
    common = {
        "id": str(data["id"]),
        "type": str(data["type"]),
        "created_at": _when(data["created_at"]),
        "data": data["data"],
    }
    if common["type"] == BOOKING_DRIVER_POSITION:
        inner = data["data"]
        return DriverPositionEvent(
            **common, reservation_no=str(inner["reservation_no"]), position=RidePosition.from_json(inner["position"])
        )
    if common["type"].startswith("booking."):
        inner = data["data"]
        previous = inner.get("previous_status")
        previous_pickup = inner.get("previous_pickup_datetime")
        return BookingEvent(
            **common,
            booking=Booking.from_json(inner["booking"]),
            sequence=int(inner["sequence"]),
            previous_status=None if previous is None else BookingStatus(previous),
            incident=Incident.from_json(inner["incident"]) if inner.get("incident") else None,
            ride_event=None if inner.get("event") is None else RideEvent.from_json(inner["event"]),
            previous_pickup_datetime=None if previous_pickup is None else _when(previous_pickup),
            reason=inner.get("reason"),
            message=inner.get("message") if isinstance(inner.get("message"), dict) else None,
        )
    if common["type"] == PING:
        return PingEvent(**common, endpoint_id=str(data["data"].get("endpoint_id", "")))
    return WebhookEvent(**common)


def _expected(secret: str, webhook_id: str, timestamp: str, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    return base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    secret: str | Sequence[str],
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> WebhookEvent:
    """Check ``webhook-signature`` (any ``v1`` signature by any of ``secret``) over
    ``webhook-id.webhook-timestamp.body`` and a timestamp within ``tolerance_seconds``; answer the
    typed event. ``body``: the raw bytes received (not re-serialised JSON). Raises
    ``WebhookVerificationError``."""
    raw = body.encode() if isinstance(body, str) else body
    lower = {k.lower(): v for k, v in headers.items()}
    webhook_id, timestamp, signatures = (
        lower.get("webhook-id"),
        lower.get("webhook-timestamp"),
        lower.get("webhook-signature"),
    )
    if not webhook_id or not timestamp or not signatures or not timestamp.isdigit():
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance (replayed or clock skew)")
    secrets = [secret] if isinstance(secret, str) else list(secret)
    offered = [value for version, _, value in (s.partition(",") for s in signatures.split()) if version == "v1"]
    for candidate in secrets:
        expected = _expected(candidate, webhook_id, timestamp, raw)
        if any(hmac.compare_digest(expected, value) for value in offered):
            event = parse_event(raw)
            if event.id != webhook_id:
                raise WebhookVerificationError("the body's id is not the signed webhook-id")
            return event
    raise WebhookVerificationError("no valid signature for this secret")
