"""Operator use cases on clients, keys and wallets (driven by the CLI and by tests).

Each function is one transaction and writes an ``admin_audit`` row beside its change.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.auth.keys import issue_key
from transfers.clients import repository as repo
from transfers.clients.models import REVERSE_API_PAY_TYPE, ClientStatus, NewClient
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.errors import Conflict, NotFound, Refused
from transfers.reference.phones import e164
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import LedgerKind


class ClientNotFound(NotFound):
    """The named client, key or wallet does not exist."""


class WalletExists(Conflict):
    """The client already holds a wallet in that currency (one per client and currency)."""


@dataclass(frozen=True)
class CreatedClient:
    client_id: int
    api_key: str
    key_prefix: str


async def create_client(db: Database, clock: Clock, new: NewClient, *, actor: str) -> CreatedClient:
    now = clock.now()
    issued = issue_key("tk")
    async with db.write() as conn:
        client_id, wallet_id = await repo.insert_client(conn, new, now)
        await repo.insert_api_key(conn, issued, now, client_id=client_id)
        if new.opening_balance > 0:
            await wallet_repo.post_entry(
                conn,
                wallet_id=wallet_id,
                kind=LedgerKind.CREDIT_TOPUP,
                amount=new.opening_balance,
                now=now,
                note="opening balance",
            )
        await repo.record_admin_action(
            conn,
            actor=actor,
            action="client.create",
            subject=f"client:{client_id}",
            details={
                "name": new.name,
                "pay_type": new.pay_type,
                "currency": new.currency,
                "opening_balance": money.text(new.opening_balance, new.currency),
                "key_prefix": issued.prefix,
                "can_create": new.can_create,
                "can_cancel": new.can_cancel,
            },
            now=now,
        )
    return CreatedClient(client_id=client_id, api_key=issued.key, key_prefix=issued.prefix)


async def issue_client_key(db: Database, clock: Clock, client_id: int, *, actor: str) -> CreatedClient:
    now = clock.now()
    issued = issue_key("tk")
    async with db.write() as conn:
        if not await repo.client_exists(conn, client_id):
            raise ClientNotFound(f"no client {client_id}")
        await repo.insert_api_key(conn, issued, now, client_id=client_id)
        await repo.record_admin_action(
            conn,
            actor=actor,
            action="key.issue",
            subject=f"client:{client_id}",
            details={"key_prefix": issued.prefix},
            now=now,
        )
    return CreatedClient(client_id=client_id, api_key=issued.key, key_prefix=issued.prefix)


async def _missing_wallet(conn: AsyncConnection, client_id: int, currency: str | None) -> str:
    """What is missing, in words: the client itself, or its wallet in ``currency``."""
    if currency is None or not await repo.client_exists(conn, client_id):
        return f"no client {client_id}"
    return f"client {client_id} holds no {currency[:10]} wallet (transfers wallet add)"


async def wallet_currency(db: Database, client_id: int, currency: str | None = None) -> str:
    """The currency of the client's wallet in ``currency`` (None: its default wallet), checked to exist:
    what a typed top-up is parsed in (``wallet.amounts``)."""
    async with db.read() as conn:
        wallet = await wallet_repo.wallet_of_client(conn, client_id, currency)
        if wallet is None:
            raise ClientNotFound(await _missing_wallet(conn, client_id, currency))
    return str(wallet[1])


async def add_wallet(
    db: Database, clock: Clock, client_id: int, currency: str, *, default: bool, actor: str
) -> wallet_repo.WalletRow:
    """A new wallet at zero for the client in ``currency`` (docs/rules/wallet.md#currencies); with
    ``default`` it becomes the wallet requests without a currency use. One wallet per client and
    currency (``WalletExists``); a ``reverse_api`` client pays no wallet and gets none (``Refused``).
    The caller checked the currency is one the service accepts."""
    now = clock.now()
    async with db.write() as conn:
        pay_type = await repo.client_pay_type(conn, client_id)
        if pay_type is None:
            raise ClientNotFound(f"no client {client_id}")
        if pay_type == REVERSE_API_PAY_TYPE:
            raise Refused(f"client {client_id} pays by reverse_api: it holds no wallets")
        if await wallet_repo.wallet_of_client(conn, client_id, currency) is not None:
            raise WalletExists(f"client {client_id} already holds a {currency} wallet")
        wallet_id = await wallet_repo.add_wallet(conn, client_id, currency, default=default, now=now)
        await repo.record_admin_action(
            conn,
            actor=actor,
            action="wallet.add",
            subject=f"client:{client_id}",
            details={"currency": currency, "default": default},
            now=now,
        )
    return wallet_repo.WalletRow(wallet_id, currency, Decimal(0), default)


async def wallets(db: Database, client_id: int) -> list[wallet_repo.WalletRow]:
    """Every wallet of the client, in the order they were added."""
    async with db.read() as conn:
        found = await wallet_repo.wallets_of_client(conn, client_id)
    if not found:
        raise ClientNotFound(f"no client {client_id}")
    return found


async def top_up(
    db: Database, clock: Clock, client_id: int, amount: Decimal, *, actor: str, currency: str | None = None
) -> Decimal:
    """A credit of the client's wallet in ``currency`` (None: the default one), with its audit row."""
    now = clock.now()
    async with db.write() as conn:
        wallet = await wallet_repo.wallet_of_client(conn, client_id, currency)
        if wallet is None:
            raise ClientNotFound(await _missing_wallet(conn, client_id, currency))
        # The callers parse in the wallet's decimals first; the service holds the rule too, so a caller
        # that skipped it (a JPY 100.5) is refused before anything is written (docs/rules/wallet.md#currencies).
        amount = money.exact(amount, wallet[1])
        balance = await wallet_repo.post_entry(
            conn,
            wallet_id=wallet[0],
            kind=LedgerKind.CREDIT_TOPUP,
            amount=amount,
            now=now,
            note=f"top-up by {actor}",
        )
        await repo.record_admin_action(
            conn,
            actor=actor,
            action="wallet.top_up",
            subject=f"client:{client_id}",
            details={
                "currency": wallet[1],
                "amount": money.text(amount, wallet[1]),
                "balance": money.text(balance, wallet[1]),
            },
            now=now,
        )
    return balance


async def set_status(db: Database, clock: Clock, client_id: int, status: ClientStatus, *, actor: str) -> None:
    now = clock.now()
    async with db.write() as conn:
        if not await repo.set_client_status(conn, client_id, status):
            raise ClientNotFound(f"no client {client_id}")
        await repo.record_admin_action(
            conn,
            actor=actor,
            action=f"client.{status.value}",
            subject=f"client:{client_id}",
            details={},
            now=now,
        )


async def set_support_phone(db: Database, clock: Clock, client_id: int, typed: str | None, *, actor: str) -> str | None:
    """The agency's support phone, which its travellers' ride page offers to call when the driver's phone is not
    shown (docs/rules/ride.md#tracking-page); None clears it. Stored as E.164 with its country code (the
    traveller calls it from abroad): ``reference.phones.PhoneUnreadable`` (an ``Invalid``) says why one is
    refused."""
    phone = None if typed is None else e164(typed)
    now = clock.now()
    async with db.write() as conn:
        if not await repo.set_support_phone(conn, client_id, phone):
            raise ClientNotFound(f"no client {client_id}")
        await repo.record_admin_action(
            conn,
            actor=actor,
            action="client.support_phone",
            subject=f"client:{client_id}",
            details={"support_phone": phone},
            now=now,
        )
    return phone


async def revoke_client_key(db: Database, clock: Clock, client_id: int, prefix: str, *, actor: str) -> None:
    """``revoke_key`` for a client's own people (the agency portal, docs/rules/agency-portal.md#pages):
    another client's key is answered exactly like a missing one (``ClientNotFound``), and revoking
    a revoked key changes nothing. Same audit row as ``transfers clients keys revoke``."""
    now = clock.now()
    async with db.write() as conn:
        if not await repo.key_belongs_to(conn, prefix, client_id):
            raise ClientNotFound("There is no such API key.")
        await repo.revoke_key(conn, prefix, now)
        await repo.record_admin_action(
            conn, actor=actor, action="key.revoke", subject=f"key:{prefix}", details={}, now=now
        )


async def revoke_key(db: Database, clock: Clock, prefix: str, *, actor: str) -> None:
    now = clock.now()
    async with db.write() as conn:
        if not await repo.revoke_key(conn, prefix, now):
            raise ClientNotFound(f"no key {prefix}")
        await repo.record_admin_action(
            conn, actor=actor, action="key.revoke", subject=f"key:{prefix}", details={}, now=now
        )
