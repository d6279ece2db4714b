"""Messages to travellers (docs/rules/messages.md#seen): what the service sent your traveller about a
booking, in your brand's name, typed, and the call that lists them.

The address is masked as the API shows it (``+44 7*** ***456``, ``a***@example.com``); the text of a
message is not part of the API (an operator reads it for 30 days with ``transfers messages show``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from transfers_sdk._calls import API, Call
from transfers_sdk.models import _instant as _when

MESSAGES = f"{API}/booking/messages"
TEMPLATES = ("confirmed", "reminder", "driver_changed", "pickup_moved", "driver_arrived", "cancelled", "feedback")
STATUSES = ("scheduled", "sent", "delivered", "failed", "suppressed", "skipped", "expired")


def _maybe_when(value: Any) -> datetime | None:
    return None if value is None else _when(value)


@dataclass(frozen=True)
class TravellerMessage:
    id: int
    template: str  # one of TEMPLATES
    channel: str  # email | sms
    to: str  # masked
    language: str  # en | de | fr | es | it | pt | nl
    status: str  # one of STATUSES
    reason: str | None  # why skipped, suppressed or failed (e.g. sms_limit, not_mobile, ambiguous)
    scheduled_for: datetime | None  # when it is (or was) due
    sent_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TravellerMessage:
        reason = data.get("reason")
        return cls(
            int(data["id"]),
            str(data["template"]),
            str(data["channel"]),
            str(data["to"]),
            str(data["language"]),
            str(data["status"]),
            None if reason is None else str(reason),
            _maybe_when(data.get("scheduled_for")),
            _maybe_when(data.get("sent_at")),
        )


def list_messages(reservation_no: str) -> Call[list[TravellerMessage]]:
    return Call(
        "GET",
        MESSAGES,
        lambda data: [TravellerMessage.from_json(m) for m in data["data"]],
        params=(("reservation_no", reservation_no),),
    )
