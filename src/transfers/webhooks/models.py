"""The typed rows of ``webhooks/repository.py`` (docs/rules/webhooks.md): an endpoint, a client
event, and a delivery as each reader sees it (claimed by the engine, in a client's log, in the
operators' lists, locked for a retry). Built from the row in the repository, so the use cases read
attributes; ``dict[str, Any]`` is left for the JSON they render (``endpoints.view``, the CLI's
``--json``). Each field list is its statement's select list (``tests/unit/test_typed_rows.py``)."""

from __future__ import annotations

from dataclasses import MISSING, fields
from datetime import datetime
from typing import Any

from transfers.rows import row_type

CLIENT_WEBHOOK = "client.webhook"  # the delivery engine's kind of a client event's delivery


@row_type
class Endpoint:
    """One ``webhook_endpoints`` row (its secrets sealed with the deployment's key)."""

    id: int
    public_id: str  # "we_...", as the API names it
    client_id: int
    url: str
    events: list[str]  # JSON: ["*"] or event type names
    description: str | None
    status: str  # enabled | disabled
    secret_enc: str
    old_secret_enc: str | None
    old_secret_until: datetime | None
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


@row_type
class SigningTarget:
    """An enabled endpoint as a POST to it needs it: where, and the secrets that sign it."""

    id: int
    url: str
    events: list[str]
    secret_enc: str
    old_secret_enc: str | None
    old_secret_until: datetime | None


@row_type
class Subscriber:
    """An enabled endpoint as the fan-out reads it: whose, which events, since when."""

    id: int
    client_id: int
    events: list[str]
    created_at: datetime


@row_type
class ClientEvent:
    """One ``client_events`` row; ``booking`` and ``data`` are the JSON the event carries."""

    id: int
    event_id: str  # "evt_...": the webhook-id
    client_id: int
    booking_id: int | None  # None: a ping
    endpoint_id: int | None  # a ping's one endpoint
    type: str
    sequence: int | None
    status: str | None
    previous_status: str | None
    booking: dict[str, Any] | None
    body: str | None
    created_at: datetime
    fanned_out_at: datetime | None
    data: dict[str, Any] | None


@row_type
class WebhookDelivery:
    """A claimed ``webhook_deliveries`` row with its event (or its own id and body) and endpoint: a
    message of the engine's ``client.webhook`` kind, or of ``client.driver_position``
    (``webhooks/repository.claim_due``)."""

    id: int
    endpoint_id: int
    kind: str
    attempts: int
    lease_until: datetime | None
    deadline_at: datetime
    created_at: datetime
    event_id: str  # the webhook-id: the event's, or the delivery's own
    type: str  # the event's type; the kind's name for a delivery that is no event
    body: str
    url: str
    secret_enc: str
    old_secret_enc: str | None
    old_secret_until: datetime | None

    @property
    def recipient(self) -> str:
        return f"endpoint:{self.endpoint_id}"

    def log_fields(self) -> dict[str, object]:
        return {"delivery_id": self.id, "event_id": self.event_id, "type": self.type}


@row_type
class LoggedDelivery:
    """A line of an endpoint's delivery log (``GET /webhook-endpoints/{id}/deliveries``)."""

    id: int
    status: str
    attempts: int
    last_http_status: int | None
    next_attempt_at: datetime
    created_at: datetime
    event_id: str
    type: str
    last_error: str | None  # the last attempt's failure, in words (webhooks/wording.py)


@row_type
class OperatorDelivery:
    """A delivery in the operators' lists (``transfers outbox list``, the console's Deliveries) with
    its event, client, booking number (None: a ping) and the endpoint's URL and public id."""

    id: int
    status: str
    attempts: int
    next_attempt_at: datetime
    deadline_at: datetime
    lease_until: datetime | None
    last_error: str | None
    last_http_status: int | None
    created_at: datetime
    finished_at: datetime | None
    event_id: str
    type: str
    client_id: int
    reservation_no: str | None
    url: str
    endpoint_id: str

    def as_dict(self) -> dict[str, Any]:
        """Every field by name (``transfers outbox list --json``)."""
        return {name: getattr(self, name) for name in OPERATOR_DELIVERY_FIELDS}


@row_type
class RetryTarget:
    """A delivery an operator asks to retry, with its event, booking number and endpoint's state."""

    id: int
    status: str
    attempts: int
    last_error: str | None
    finished_at: datetime | None
    next_attempt_at: datetime
    event_id: str
    type: str
    client_id: int
    reservation_no: str | None
    endpoint_id: str  # the endpoint's public id
    endpoint_status: str
    endpoint_deleted_at: datetime | None


def names(row: type) -> tuple[str, ...]:
    """A row type's field names, in order (its statement's select list)."""
    return tuple(f.name for f in fields(row) if f.default is MISSING)


OPERATOR_DELIVERY_FIELDS = names(OperatorDelivery)
