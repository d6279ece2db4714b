"""Published shapes of the wallet and webhook-endpoint APIs (docs/rules/wallet.md, docs/rules/webhooks.md).

Kept apart from ``api/schemas.py`` (the original booking API's shapes); the tests check real answers against
these models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from transfers.api.schemas import AUTH_ERRORS, BookingResource, service_errors
from transfers.errors import ErrorCode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- wallet (docs/rules/wallet.md) -------------------------------------------------------------------
class Wallet(_Strict):
    pay_type: str = Field(description='"wallet", or "reverse_api" (then currency and balance are null)')
    currency: str | None = Field(examples=["EUR"])
    balance: str | None = Field(description="with exactly the currency's decimals", examples=["412.50"])


class WalletBalance(_Strict):
    currency: str = Field(examples=["GBP"])
    balance: str = Field(description="with exactly the currency's decimals", examples=["250.00"])
    default: bool = Field(description="the wallet a request without `currency` uses")


class WalletList(_Strict):
    """Every wallet of the client (one per currency), in the order they were added."""

    data: list[WalletBalance]


class WalletEntry(_Strict):
    id: str
    kind: Literal["top_up", "debit", "refund", "cancellation_fee", "adjustment"]
    amount: str = Field(description="signed, with exactly the currency's decimals", examples=["-56.05"])
    balance_after: str = Field(examples=["443.95"])
    currency: str
    reservation_no: str | None
    note: str | None
    created_at: str = Field(description="ISO 8601, UTC")


class WalletEntryPage(_Strict):
    data: list[WalletEntry]
    next_cursor: str | None


# ---- webhook endpoints (docs/rules/webhooks.md) --------------------------------------------------------
class WebhookEndpointIn(_Strict):
    url: str = Field(max_length=2000, examples=["https://agency.example/hooks/transfers"])
    events: list[str] = Field(description='["*"] or event types', examples=[["*"]])
    description: str | None = Field(default=None, max_length=500)


class WebhookEndpointPatch(_Strict):
    url: str | None = Field(default=None, max_length=2000)
    events: list[str] | None = None
    description: str | None = Field(default=None, max_length=500)
    status: Literal["enabled", "disabled"] | None = None


class WebhookEndpoint(_Strict):
    id: str = Field(examples=["we_3k9..."])
    url: str
    events: list[str]
    description: str | None
    status: Literal["enabled", "disabled"]
    created_at: str


class WebhookEndpointCreated(WebhookEndpoint):
    secret: str = Field(description="shown only here and by rotate-secret", examples=["whsec_..."])


class WebhookEndpointList(_Strict):
    data: list[WebhookEndpoint]


class WebhookSecret(_Strict):
    secret: str


class WebhookPing(_Strict):
    event_id: str = Field(examples=["evt_..."])


class WebhookDelivery(_Strict):
    event_id: str
    type: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    last_http_status: int | None
    last_outcome: str = Field(
        description="how the delivery went, in words: delivered, HTTP 503, no answer within 5 s, "
        "refused: private address, not sent yet, ... (docs/rules/webhooks.md#delivery-log)",
        examples=["delivered"],
    )
    next_attempt_at: str | None
    created_at: str


class WebhookDeliveryPage(_Strict):
    data: list[WebhookDelivery]
    next_cursor: str | None


class EventData(_Strict):
    booking: BookingResource
    previous_status: str | None = Field(default=None, description="booking.status_changed only")
    sequence: int


class WebhookEvent(_Strict):
    """The body every delivery POSTs (signed with Standard Webhooks headers)."""

    id: str = Field(examples=["evt_..."])
    type: str
    created_at: str
    data: EventData | dict[str, Any]


WALLET_ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    **service_errors(ErrorCode.WALLET_NOT_FOUND, ErrorCode.INVALID_FILTER, ErrorCode.INVALID_CURSOR),
}
ONE_WALLET_ERRORS: dict[int | str, dict[str, Any]] = {**AUTH_ERRORS, **service_errors(ErrorCode.WALLET_NOT_FOUND)}
