"""The wallet and webhook-endpoint methods of ``TransfersClient`` / ``AsyncTransfersClient``
(docs/rules/wallet.md, docs/rules/webhooks.md), kept apart so each client module stays readable."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any, TypeVar

from transfers_sdk import accounts, incidents, messages, ratings
from transfers_sdk._calls import Call, Instant
from transfers_sdk.accounts import (
    Wallet,
    WalletBalance,
    WalletEntry,
    WalletEntryPage,
    WebhookDeliveryPage,
    WebhookEndpoint,
)
from transfers_sdk.incidents import Incident
from transfers_sdk.messages import TravellerMessage
from transfers_sdk.ratings import Rating

T = TypeVar("T")


class AccountMethods:
    def _run(self, call: Call[T]) -> T:  # the client's own
        raise NotImplementedError

    # ---- wallet and webhook endpoints (docs/rules/wallet.md, docs/rules/webhooks.md)
    # -------------------------------------------

    def report_incident(self, reservation_no: str, incident_type: str, description: str) -> Incident:
        """POST /booking/incidents (docs/rules/incidents.md): from the pickup until 72 h after it, one per type."""
        return self._run(incidents.report_incident(reservation_no, incident_type, description))

    def list_incidents(self, reservation_no: str) -> list[Incident]:
        """GET /booking/incidents: the booking's incidents, oldest first, with their resolutions."""
        return self._run(incidents.list_incidents(reservation_no))

    def rate_ride(self, reservation_no: str, stars: int, comment: str | None = None) -> Rating:
        """POST /booking/rating (docs/rules/ratings.md#api): 1..5 stars and an optional comment, once per
        booking, from the drop-off until 7 days after it."""
        return self._run(ratings.rate_ride(reservation_no, stars, comment))

    def list_messages(self, reservation_no: str) -> list[TravellerMessage]:
        """GET /booking/messages (docs/rules/messages.md#seen): what the service wrote to the booking's
        traveller in your brand's name, in the order due, each with its status; addresses masked."""
        return self._run(messages.list_messages(reservation_no))

    def get_wallet(self, currency: str | None = None) -> Wallet:
        """GET /booking-api/wallet: pay type, currency and balance of the default wallet, or of the one in
        ``currency`` (``InvalidRequest`` ``WALLET_NOT_FOUND`` when you hold none); None for reverse_api clients."""
        return self._run(accounts.get_wallet(currency))

    def list_wallets(self) -> list[WalletBalance]:
        """GET /booking-api/wallets: every wallet you hold, one per currency, the default marked."""
        return self._run(accounts.list_wallets())

    def list_wallet_entries(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        currency: str | None = None,
    ) -> WalletEntryPage:
        """GET /booking-api/wallet/entries: one page of a wallet's statement (the default, or ``currency``'s),
        newest first."""
        return self._run(
            accounts.list_wallet_entries(
                limit=limit, cursor=cursor, created_from=created_from, created_to=created_to, currency=currency
            )
        )

    def iter_wallet_entries(
        self,
        *,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        page_size: int = 100,
        currency: str | None = None,
    ) -> Iterator[WalletEntry]:
        cursor: str | None = None
        while True:
            page = self.list_wallet_entries(
                limit=page_size, cursor=cursor, created_from=created_from, created_to=created_to, currency=currency
            )
            yield from page.entries
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def create_webhook_endpoint(
        self, url: str, events: Iterable[str] = ("*",), description: str | None = None
    ) -> WebhookEndpoint:
        """POST /webhook-endpoints; ``.secret`` is shown only in this answer: store it."""
        return self._run(accounts.create_webhook_endpoint(url, events, description))

    def list_webhook_endpoints(self) -> list[WebhookEndpoint]:
        return self._run(accounts.list_webhook_endpoints())

    def get_webhook_endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        return self._run(accounts.get_webhook_endpoint(endpoint_id))

    def update_webhook_endpoint(self, endpoint_id: str, **changes: Any) -> WebhookEndpoint:
        """PATCH: any of ``url``, ``events``, ``description``, ``status`` ("enabled"/"disabled")."""
        return self._run(accounts.update_webhook_endpoint(endpoint_id, changes))

    def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        self._run(accounts.delete_webhook_endpoint(endpoint_id))

    def test_webhook_endpoint(self, endpoint_id: str) -> str:
        """Send a ``ping`` event now; answers its event id."""
        return self._run(accounts.test_webhook_endpoint(endpoint_id))

    def rotate_webhook_secret(self, endpoint_id: str) -> str:
        """A new secret; the old one keeps signing beside it for 24 h."""
        return self._run(accounts.rotate_webhook_secret(endpoint_id))

    def list_webhook_deliveries(
        self, endpoint_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> WebhookDeliveryPage:
        return self._run(accounts.list_webhook_deliveries(endpoint_id, limit=limit, cursor=cursor))


class AsyncAccountMethods:
    async def _run(self, call: Call[T]) -> T:  # the client's own
        raise NotImplementedError

    # ---- wallet and webhook endpoints (docs/rules/wallet.md, docs/rules/webhooks.md)
    # -------------------------------------------

    async def report_incident(self, reservation_no: str, incident_type: str, description: str) -> Incident:
        """POST /booking/incidents (docs/rules/incidents.md): from the pickup until 72 h after it, one per type."""
        return await self._run(incidents.report_incident(reservation_no, incident_type, description))

    async def list_incidents(self, reservation_no: str) -> list[Incident]:
        """GET /booking/incidents: the booking's incidents, oldest first, with their resolutions."""
        return await self._run(incidents.list_incidents(reservation_no))

    async def rate_ride(self, reservation_no: str, stars: int, comment: str | None = None) -> Rating:
        """POST /booking/rating (docs/rules/ratings.md#api): 1..5 stars and an optional comment, once per
        booking, from the drop-off until 7 days after it."""
        return await self._run(ratings.rate_ride(reservation_no, stars, comment))

    async def list_messages(self, reservation_no: str) -> list[TravellerMessage]:
        """GET /booking/messages (docs/rules/messages.md#seen): what the service wrote to the booking's
        traveller in your brand's name, in the order due, each with its status; addresses masked."""
        return await self._run(messages.list_messages(reservation_no))

    async def get_wallet(self, currency: str | None = None) -> Wallet:
        """GET /booking-api/wallet: pay type, currency and balance of the default wallet, or of the one in
        ``currency`` (``InvalidRequest`` ``WALLET_NOT_FOUND`` when you hold none); None for reverse_api clients."""
        return await self._run(accounts.get_wallet(currency))

    async def list_wallets(self) -> list[WalletBalance]:
        """GET /booking-api/wallets: every wallet you hold, one per currency, the default marked."""
        return await self._run(accounts.list_wallets())

    async def list_wallet_entries(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        currency: str | None = None,
    ) -> WalletEntryPage:
        """GET /booking-api/wallet/entries: one page of a wallet's statement (the default, or ``currency``'s),
        newest first."""
        return await self._run(
            accounts.list_wallet_entries(
                limit=limit, cursor=cursor, created_from=created_from, created_to=created_to, currency=currency
            )
        )

    async def iter_wallet_entries(
        self,
        *,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        page_size: int = 100,
        currency: str | None = None,
    ) -> AsyncIterator[WalletEntry]:
        cursor: str | None = None
        while True:
            page = await self.list_wallet_entries(
                limit=page_size, cursor=cursor, created_from=created_from, created_to=created_to, currency=currency
            )
            for entry in page.entries:
                yield entry
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def create_webhook_endpoint(
        self, url: str, events: Iterable[str] = ("*",), description: str | None = None
    ) -> WebhookEndpoint:
        """POST /webhook-endpoints; ``.secret`` is shown only in this answer: store it."""
        return await self._run(accounts.create_webhook_endpoint(url, events, description))

    async def list_webhook_endpoints(self) -> list[WebhookEndpoint]:
        return await self._run(accounts.list_webhook_endpoints())

    async def get_webhook_endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        return await self._run(accounts.get_webhook_endpoint(endpoint_id))

    async def update_webhook_endpoint(self, endpoint_id: str, **changes: Any) -> WebhookEndpoint:
        """PATCH: any of ``url``, ``events``, ``description``, ``status`` ("enabled"/"disabled")."""
        return await self._run(accounts.update_webhook_endpoint(endpoint_id, changes))

    async def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        await self._run(accounts.delete_webhook_endpoint(endpoint_id))

    async def test_webhook_endpoint(self, endpoint_id: str) -> str:
        """Send a ``ping`` event now; answers its event id."""
        return await self._run(accounts.test_webhook_endpoint(endpoint_id))

    async def rotate_webhook_secret(self, endpoint_id: str) -> str:
        """A new secret; the old one keeps signing beside it for 24 h."""
        return await self._run(accounts.rotate_webhook_secret(endpoint_id))

    async def list_webhook_deliveries(
        self, endpoint_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> WebhookDeliveryPage:
        return await self._run(accounts.list_webhook_deliveries(endpoint_id, limit=limit, cursor=cursor))
