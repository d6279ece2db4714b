"""The client's wallet as the API shows it (docs/rules/wallet.md): the balance and the statement.

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


async def summary(svc: Sources, client: ClientPrincipal) -> dict[str, Any]:
    """``{"pay_type", "currency", "balance"}``; a ``reverse_api`` client has no wallet to show."""
    if not client.pays_by_wallet:
        return {"pay_type": client.pay_type, "currency": None, "balance": None}
    async with svc.db.read() as conn:
        wallet = await repo.wallet_of_client(conn, client.client_id)
    if wallet is None:  # every wallet client has one; a missing row is a broken account, not "0.00"
        raise NotFound(ErrorCode.INTERNAL_ERROR, "This client has no wallet.")
    return {"pay_type": "wallet", "currency": wallet[1], "balance": money.text(wallet[2], wallet[1])}


async def entries(
    svc: Sources,
    client: ClientPrincipal,
    *,
    limit: str | None,
    cursor: str | None,
    created_from: str | None,
    created_to: str | None,
) -> dict[str, Any]:
    """One page of the statement: ``{"data": [entry, ...], "next_cursor"}``. Checks in the order
    the parameters are documented: the date range, ``limit``, then the cursor."""
    low, high = parse_instant("created_from", created_from), parse_instant("created_to", created_to)
    if low is not None and high is not None and low > high:
        raise paging.invalid_filter("created_from is later than created_to.")
    size = paging.parse_limit(limit)
    below = paging.decode(svc.box, CURSOR_PURPOSE, client.client_id, cursor)
    if not client.pays_by_wallet:
        return {"data": [], "next_cursor": None}
    async with svc.db.read() as conn:
        currency, rows = await repo.statement_page(
            conn, client.client_id, created_from=low, created_to=high, below_id=below, limit=size + 1
        )
    page = rows[:size]
    next_cursor = paging.encode(svc.box, CURSOR_PURPOSE, client.client_id, page[-1].id) if len(rows) > size else None
    return {"data": [_entry(row, currency) for row in page], "next_cursor": next_cursor}


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
