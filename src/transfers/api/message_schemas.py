"""OpenAPI shapes of docs/rules/messages.md#seen: a booking's messages to its traveller (strict: the API
tests validate the real answers against them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from transfers.api.schemas import WITH_VALIDATION


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TravellerMessage(_Strict):
    id: int
    template: Literal[
        "confirmed", "reminder", "driver_changed", "pickup_moved", "driver_arrived", "cancelled", "feedback"
    ]
    channel: Literal["email", "sms"]
    to: str | None = Field(
        description="masked: +44 7*** ***456, a***@example.com; null when the booking had no address on the channel"
    )
    language: str = Field(description="en, de, fr, es, it, pt or nl")
    status: Literal["scheduled", "sent", "delivered", "failed", "suppressed", "skipped", "expired"]
    reason: str | None = Field(
        description="why it was skipped, suppressed, expired or failed (e.g. sms_limit, not_mobile, no_address, "
        "channel_off, ambiguous); null otherwise"
    )
    scheduled_for: datetime | None = Field(description="when it is (or was) due, UTC")
    sent_at: datetime | None = Field(description="when it was handed to SMTP or the SMS provider, UTC")


class TravellerMessageList(_Strict):
    data: list[TravellerMessage]


LIST_ERRORS: dict[int | str, dict[str, Any]] = WITH_VALIDATION
