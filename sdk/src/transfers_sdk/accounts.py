"""The wallet (docs/rules/wallet.md) and webhook endpoints (docs/rules/webhooks.md): typed answers and the calls.

Money is ``Decimal``, date-times aware ``datetime``; fields the service adds later are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from transfers_sdk._calls import API, Call, Instant, _instant
from transfers_sdk.models import _instant as _when
from transfers_sdk.models import _money

ENDPOINTS = f"{API}/webhook-endpoints"


@dataclass(frozen=True)
class Wallet:
    pay_type: str
    currency: str | None  # None for reverse_api clients
    balance: Decimal | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Wallet:
        balance = data["balance"]
        return cls(str(data["pay_type"]), data["currency"], None if balance is None else _money(balance))


@dataclass(frozen=True)
class WalletBalance:
    """One of the client's wallets (one per currency); ``default``: the one used when no currency is named."""

    currency: str
    balance: Decimal
    default: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WalletBalance:
        return cls(str(data["currency"]), _money(data["balance"]), bool(data["default"]))


def _wallets(data: Mapping[str, Any]) -> list[WalletBalance]:
    return [WalletBalance.from_json(item) for item in data["data"]]


@dataclass(frozen=True)
class WalletEntry:
    id: str
    kind: str  # top_up | debit | refund | cancellation_fee | adjustment
    amount: Decimal  # signed: debits are negative
    balance_after: Decimal
    currency: str
    reservation_no: str | None
    note: str | None
    created_at: datetime

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WalletEntry:
        return cls(
            str(data["id"]),
            str(data["kind"]),
            _money(data["amount"]),
            _money(data["balance_after"]),
            str(data["currency"]),
            data["reservation_no"],
            data["note"],
            _when(data["created_at"]),
        )


@dataclass(frozen=True)
class WalletEntryPage:
    entries: list[WalletEntry]
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WalletEntryPage:
        return cls([WalletEntry.from_json(e) for e in data["data"]], data["next_cursor"])


@dataclass(frozen=True)
class WebhookEndpoint:
    id: str
    url: str
    events: list[str]
    description: str | None
    status: str  # enabled | disabled
    created_at: datetime
    secret: str | None = None  # only in the answer of create

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WebhookEndpoint:
        return cls(
            str(data["id"]),
            str(data["url"]),
            [str(e) for e in data["events"]],
            data["description"],
            str(data["status"]),
            _when(data["created_at"]),
            data.get("secret"),
        )


@dataclass(frozen=True)
class WebhookDelivery:
    event_id: str
    type: str
    status: str  # pending | delivered | failed
    attempts: int
    last_http_status: int | None
    next_attempt_at: datetime | None
    created_at: datetime
    last_outcome: str | None = None  # in words: "delivered", "HTTP 503", "refused: private address", ...

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WebhookDelivery:
        nxt = data["next_attempt_at"]
        return cls(
            str(data["event_id"]),
            str(data["type"]),
            str(data["status"]),
            int(data["attempts"]),
            data["last_http_status"],
            None if nxt is None else _when(nxt),
            _when(data["created_at"]),
            data.get("last_outcome"),
        )


@dataclass(frozen=True)
class WebhookDeliveryPage:
    deliveries: list[WebhookDelivery]
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WebhookDeliveryPage:
        return cls([WebhookDelivery.from_json(d) for d in data["data"]], data["next_cursor"])


def _body(value: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(value), separators=(",", ":"), ensure_ascii=False).encode()


def _paging(limit: int | None, cursor: str | None) -> list[tuple[str, str]]:
    params = [] if limit is None else [("limit", str(limit))]
    return params + ([] if cursor is None else [("cursor", cursor)])


def get_wallet(currency: str | None = None) -> Call[Wallet]:
    params = () if currency is None else (("currency", currency),)
    return Call("GET", f"{API}/wallet", Wallet.from_json, params=params)


def list_wallets() -> Call[list[WalletBalance]]:
    return Call("GET", f"{API}/wallets", _wallets)


def list_wallet_entries(
    *,
    limit: int | None,
    cursor: str | None,
    created_from: Instant | None,
    created_to: Instant | None,
    currency: str | None = None,
) -> Call[WalletEntryPage]:
    params = _paging(limit, cursor)
    if currency is not None:
        params.append(("currency", currency))
    for name, value in (("created_from", created_from), ("created_to", created_to)):
        if value is not None:
            params.append((name, _instant(name, value)))
    return Call("GET", f"{API}/wallet/entries", WalletEntryPage.from_json, params=tuple(params))


def create_webhook_endpoint(url: str, events: Iterable[str], description: str | None) -> Call[WebhookEndpoint]:
    body: dict[str, Any] = {"url": url, "events": list(events)}
    if description is not None:
        body["description"] = description
    return Call("POST", ENDPOINTS, WebhookEndpoint.from_json, body=_body(body))


def list_webhook_endpoints() -> Call[list[WebhookEndpoint]]:
    return Call("GET", ENDPOINTS, lambda data: [WebhookEndpoint.from_json(e) for e in data["data"]])


def get_webhook_endpoint(endpoint_id: str) -> Call[WebhookEndpoint]:
    return Call("GET", f"{ENDPOINTS}/{endpoint_id}", WebhookEndpoint.from_json)


def update_webhook_endpoint(endpoint_id: str, changes: Mapping[str, Any]) -> Call[WebhookEndpoint]:
    return Call("PATCH", f"{ENDPOINTS}/{endpoint_id}", WebhookEndpoint.from_json, body=_body(changes))


def delete_webhook_endpoint(endpoint_id: str) -> Call[None]:
    return Call("DELETE", f"{ENDPOINTS}/{endpoint_id}", lambda data: None)


def test_webhook_endpoint(endpoint_id: str) -> Call[str]:
    return Call("POST", f"{ENDPOINTS}/{endpoint_id}/test", lambda data: str(data["event_id"]))


def rotate_webhook_secret(endpoint_id: str) -> Call[str]:
    return Call("POST", f"{ENDPOINTS}/{endpoint_id}/rotate-secret", lambda data: str(data["secret"]))


def list_webhook_deliveries(endpoint_id: str, *, limit: int | None, cursor: str | None) -> Call[WebhookDeliveryPage]:
    return Call(
        "GET",
        f"{ENDPOINTS}/{endpoint_id}/deliveries",
        WebhookDeliveryPage.from_json,
        params=tuple(_paging(limit, cursor)),
    )
