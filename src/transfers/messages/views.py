"""A message as every surface shows it (docs/rules/messages.md#seen): the API's
``GET /booking-api/booking/messages``, the console's and the agency portal's booking pages, and
``transfers messages list/show``. The address is always masked; the subject and body only in the detail."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from transfers.messages.addresses import mask
from transfers.messages.models import TravellerMessage


def message_resource(message: TravellerMessage, *, detail: bool = False) -> dict[str, Any]:
    """``{"id", "template", "channel", "to", "language", "status", "reason", "scheduled_for", "sent_at"}``;
    ``detail`` adds the rendered ``subject`` (None for an SMS) and ``body`` (None before the send and
    after 30 days)."""
    shown: dict[str, Any] = {
        "id": message.id,
        "template": message.template,
        "channel": message.channel,
        "to": mask(message.channel, message.to_address),
        "language": message.language,
        "status": message.status,
        "reason": message.reason,
        "scheduled_for": _iso(message.scheduled_for),
        "sent_at": _iso(message.sent_at),
    }
    if detail:
        shown["subject"] = message.subject
        shown["body"] = message.body
    return shown


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
