"""The client's wallets as the API shows them (docs/rules/wallet.md): the balances and the statements.

A client holds one wallet per currency, one of them the default (docs/rules/wallet.md#currencies):
``GET /wallet`` and ``/wallet/entries`` answer the default wallet, or the one of ``?currency=``; a
currency the client holds no wallet in is 404 ``WALLET_NOT_FOUND``. A statement's cursors are bound to
its wallet, so a cursor of one wallet's statement is refused by another's.

Every entry carries ``balance_after``, written by the statement that moved the balance (under the
wallet's row lock), so the statement is consistent at every moment: ``balance`` equals the sum of
the entries and the newest entry's ``balance_after`` equals ``balance``. Entries are listed in the
order the balance moved (ledger id, newest first); ``created_at`` filters are ``from`` inclusive,
``to`` exclusive, as on the booking list.
"""

from __future__ import annotations

from typing import Any, Protocol

from transfers import money, paging
from transfers.auth.principals import ClientPrincipal
from transfers.db.engine import Database
from transfers.errors import ErrorCode, NotFound
from transfers.paging import parse_instant
from transfers.wallet import repository as repo
from transfers.wallet.ledger import API_KINDS, StatementLine

CURSOR_PURPOSE = "wallet-entries"


class Sources(Protocol):
    """What the statement reads of the application's ``services.Services`` (the API and the agency
    portal pass theirs): the database, and the secret its cursors are sealed with."""

    @property
    def db(self) -> Database: ...
    @property
    def box(self) -> paging.KeySource: ...


def wallet_not_found(currency: str) -> NotFound:
    return NotFound(ErrorCode.WALLET_NOT_FOUND, f"You hold no wallet in {currency[:10]!r}.")


async def _wallet(conn: Any, client: ClientPrincipal, currency: str | None) -> tuple[int, str, Any]:
    wallet = await repo.wallet_of_client(conn, client.client_id, currency)
    if wallet is not None:
        return wallet
    if currency is not None:
        raise wallet_not_found(currency)
    # every wallet client has a default wallet; a missing row is a broken account, not "0.00"
    raise NotFound(ErrorCode.INTERNAL_ERROR, "This client has no wallet.")


async def summary(svc: Sources, client: ClientPrincipal, currency: str | None = None) -> dict[str, Any]:
    """``{"pay_type", "currency", "balance"}`` of the default wallet or the one in ``currency``; a
    ``reverse_api`` client has no wallet to show."""
    if not client.pays_by_wallet:
        return {"pay_type": client.pay_type, "currency": None, "balance": None}
    async with svc.db.read() as conn:
        _, code, balance = await _wallet(conn, client, currency)
    return {"pay_type": "wallet", "currency": code, "balance": money.text(balance, code)}


async def every_wallet(svc: Sources, client: ClientPrincipal) -> dict[str, Any]:
    """``{"data": [{"currency", "balance", "default"}]}``, in the order the wallets were added; a
    ``reverse_api`` client holds none."""
    if not client.pays_by_wallet:
        return {"data": []}
    async with svc.db.read() as conn:
        rows = await repo.wallets_of_client(conn, client.client_id)
    return {
        "data": [
            {"currency": w.currency, "balance": money.text(w.balance, w.currency), "default": w.is_default}
            for w in rows
        ]
    }


async def entries(
    svc: Sources,
    client: ClientPrincipal,
    *,
    limit: str | None,
    cursor: str | None,
    created_from: str | None,
    created_to: str | None,
    currency: str | None = None,
) -> dict[str, Any]:
    """One page of the statement of the default wallet or the one in ``currency``: ``{"data": [entry,
    ...], "next_cursor"}``. Checks in the order the parameters are documented: the date range,
    ``limit``, the wallet (``WALLET_NOT_FOUND``), then the cursor (bound to that wallet)."""
    low, high = parse_instant("created_from", created_from), parse_instant("created_to", created_to)
    if low is not None and high is not None and low > high:
        raise paging.invalid_filter("created_from is later than created_to.")
    size = paging.parse_limit(limit)
    if not client.pays_by_wallet:
        paging.decode(svc.box, CURSOR_PURPOSE, client.client_id, cursor)
        return {"data": [], "next_cursor": None}
    async with svc.db.read() as conn:
        wallet_id, code, _ = await _wallet(conn, client, currency)
        below = paging.decode(svc.box, CURSOR_PURPOSE, wallet_id, cursor)
        _, rows = await repo.statement_page(
            conn, client.client_id, currency=code, created_from=low, created_to=high, below_id=below, limit=size + 1
        )
    page = rows[:size]
    next_cursor = paging.encode(svc.box, CURSOR_PURPOSE, wallet_id, page[-1].id) if len(rows) > size else None
    return {"data": [_entry(row, code) for row in page], "next_cursor": next_cursor}


def _entry(row: StatementLine, currency: str | None) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "kind": API_KINDS.get(row.kind, "adjustment"),
        "amount": money.text(row.amount, currency or ""),
        "balance_after": money.text(row.balance_after, currency or ""),
        "currency": currency,
        "reservation_no": row.reservation_no,
        "note": row.note,
        "created_at": row.created_at.isoformat(),
    }
