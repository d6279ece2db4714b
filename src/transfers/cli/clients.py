"""``transfers clients ...``, ``transfers wallet ...``, ``transfers keys ...``."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from decimal import Decimal, InvalidOperation

import click

from transfers import money
from transfers.cli.common import T, actor, fail, print_json, settings, with_db
from transfers.clients import service
from transfers.clients.models import ClientStatus, NewClient, Permission
from transfers.clock import SystemClock
from transfers.db.engine import Database

# The largest amount an operator credits at once (wallet.amounts).
MAX_AMOUNT = Decimal("999999999999.99")


def _money(value: str, currency: str) -> Decimal:
    """A non-negative amount with at most the currency's decimals, written back with exactly them."""
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise click.BadParameter(f"{value!r} is not an amount like {money.text(Decimal(100), currency)}") from None
    if not amount.is_finite() or amount < 0:
        raise click.BadParameter(f"{value!r}: a non-negative amount with {money.decimals_in_words(currency)}")
    if amount > MAX_AMOUNT:
        raise click.BadParameter(f"{value!r}: at most {MAX_AMOUNT}")
    try:
        return money.exact(amount, currency)  # "0.1" and "1E+1" print as 0.10 and 10.00 in EUR
    except money.MoneyError:
        raise click.BadParameter(f"{value!r}: a non-negative amount with {money.decimals_in_words(currency)}") from None


def _found(work: Callable[[Database, SystemClock], Awaitable[T]]) -> T:
    """``with_db(work)``; a missing client or key (``ClientNotFound``) ends the command with
    ``error: no ...`` (exit 1) in ``cli/errors.py``, like every domain error."""
    return with_db(work)


@click.group("clients")
def clients_group() -> None:
    """Client accounts (travel professionals)."""


@clients_group.command("create")
@click.option("--name", required=True)
@click.option(
    "--pay-type",
    default="wallet",
    show_default=True,
    help="'reverse_api' (third-party payment) or any other value (wallet payment)",
)
@click.option("--balance", default="0.00", show_default=True, help="opening wallet balance")
@click.option("--currency", default=None, help="wallet currency [default: TRANSFERS_DEFAULT_CURRENCY]")
@click.option(
    "--deny", "denied", multiple=True, type=click.Choice([p.value for p in Permission]), help="withhold a permission"
)
def clients_create(name: str, pay_type: str, balance: str, currency: str | None, denied: tuple[str, ...]) -> None:
    """Create a client with a wallet and one API key (printed once)."""
    name = name.strip()
    if not name or len(name) > 200:
        fail("--name must be 1..200 characters")
    cur = (settings().default_currency if currency is None else currency).upper()
    if not re.fullmatch(r"[A-Z]{3}", cur) or not money.is_currency(cur):
        fail("--currency must be a three-letter ISO 4217 code")
    _accepted_currency(cur)
    new = NewClient(
        name=name,
        pay_type=pay_type,
        currency=cur,
        opening_balance=_money(balance, cur),
        can_create=Permission.BOOKING_CREATE.value not in denied,
        can_cancel=Permission.BOOKING_CANCEL.value not in denied,
    )
    created = with_db(lambda db, clock: service.create_client(db, clock, new, actor=actor()))
    print_json({"client_id": created.client_id, "api_key": created.api_key, "key_prefix": created.key_prefix})


def _set_status(client_id: int, status: ClientStatus) -> None:
    _found(lambda db, clock: service.set_status(db, clock, client_id, status, actor=actor()))
    print_json({"client_id": client_id, "status": status.value})


@clients_group.command("suspend")
@click.argument("client_id", type=int)
def clients_suspend(client_id: int) -> None:
    """Suspend a client: its keys answer 403 CLIENT_SUSPENDED."""
    _set_status(client_id, ClientStatus.SUSPENDED)


@clients_group.command("support-phone")
@click.argument("client_id", type=int)
@click.argument("phone", required=False)
@click.option("--clear", is_flag=True, help="remove it")
def clients_support_phone(client_id: int, phone: str | None, clear: bool) -> None:
    """Set the agency's support phone (with its country code, e.g. "+44 20 7946 0123"): its travellers' ride
    page offers it to call when the driver's phone is not shown."""
    if (phone is None) == (not clear):
        raise click.UsageError("give a PHONE, or --clear")
    stored = _found(lambda db, clock: service.set_support_phone(db, clock, client_id, phone, actor=actor()))
    print_json({"client_id": client_id, "support_phone": stored})


@clients_group.command("activate")
@click.argument("client_id", type=int)
def clients_activate(client_id: int) -> None:
    """Lift a suspension."""
    _set_status(client_id, ClientStatus.ACTIVE)


@click.group("keys")
def keys_group() -> None:
    """API keys."""


@keys_group.command("create")
@click.option("--client", "client_id", type=int, required=True)
def keys_create(client_id: int) -> None:
    """Issue another key for a client (printed once)."""
    created = _found(lambda db, clock: service.issue_client_key(db, clock, client_id, actor=actor()))
    print_json({"client_id": created.client_id, "api_key": created.api_key, "key_prefix": created.key_prefix})


@keys_group.command("revoke")
@click.argument("prefix")
def keys_revoke(prefix: str) -> None:
    """Revoke a key by its prefix (e.g. tk_3f9a2c7b01de)."""
    _found(lambda db, clock: service.revoke_key(db, clock, prefix, actor=actor()))
    print_json({"key_prefix": prefix, "revoked": True})


@click.group("wallet")
def wallet_group() -> None:
    """Wallets."""


def _accepted_currency(code: str) -> str:
    """``code`` if amounts may be in it (an active ISO 4217 code in capitals, among TRANSFERS_CURRENCIES
    when that is set), else exit 2 naming what is wrong."""
    if not money.is_currency(code):
        fail(f"--currency {code[:10]!r} is not an ISO 4217 currency code (three capitals, like GBP)", 2)
    enabled = settings().enabled_currencies
    if enabled is not None and code not in enabled:
        fail(f"--currency {code} is not one of the currencies this service accepts (TRANSFERS_CURRENCIES)", 2)
    return code


@wallet_group.command("add")
@click.option("--client", "client_id", type=int, required=True)
@click.option("--currency", required=True, help="ISO 4217 code, like GBP: one wallet per client and currency")
@click.option("--default", "make_default", is_flag=True, help="make it the wallet requests without a currency use")
def wallet_add(client_id: int, currency: str, make_default: bool) -> None:
    """Give a client a wallet in another currency (at zero); its first wallet stays the default unless --default."""
    code = _accepted_currency(currency)
    added = _found(
        lambda db, clock: service.add_wallet(db, clock, client_id, code, default=make_default, actor=actor())
    )
    print_json({"client_id": client_id, "currency": added.currency, "balance": money.text(added.balance, code),
                "default": added.is_default})  # fmt: skip


@wallet_group.command("list")
@click.option("--client", "client_id", type=int, required=True)
def wallet_list(client_id: int) -> None:
    """Every wallet of a client: {"data": [{"currency", "balance", "default"}]}, as GET /wallets shows it."""
    found = _found(lambda db, _clock: service.wallets(db, client_id))
    print_json(
        {"data": [{"currency": w.currency, "balance": money.text(w.balance, w.currency), "default": w.is_default}
                  for w in found]}
    )  # fmt: skip


@wallet_group.command("top-up")
@click.option("--client", "client_id", type=int, required=True)
@click.option("--amount", required=True)
@click.option("--currency", default=None, help="the wallet's currency [default: the client's default wallet]")
def wallet_top_up(client_id: int, amount: str, currency: str | None) -> None:
    """Credit a client's wallet (a ledger entry)."""
    if currency is not None:
        _accepted_currency(currency)
    code = _found(lambda db, _clock: service.wallet_currency(db, client_id, currency))
    _accepted_currency(code)  # the default wallet's, when no --currency: no money moves in a currency left out
    value = _money(amount, code)
    if value <= 0:
        fail("--amount must be positive")
    balance = _found(lambda db, clock: service.top_up(db, clock, client_id, value, actor=actor(), currency=code))
    print_json(
        {
            "client_id": client_id,
            "currency": code,
            "amount": money.text(value, code),
            "balance": money.text(balance, code),
        }
    )
