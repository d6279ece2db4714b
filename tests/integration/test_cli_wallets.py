"""``transfers wallet add|list|top-up --currency`` through the real CLI entry point
(docs/rules/wallet.md#currencies): one wallet per client and currency, top-ups in the wallet's own
decimals (JPY with decimals refused, never rounded), and each refusal a clear line with nothing written."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.integration.test_cli_clients import cli_env, create, ok_json, run_cli  # noqa: F401 (cli_env: a fixture)
from transfers.clients import service
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, ledger_entries, wallets
from transfers.money import MoneyError


def refused(result: object, code: int, words: str) -> None:
    exit_code, stderr, stdout = result.exit_code, result.stderr, result.stdout  # type: ignore[attr-defined]
    assert exit_code == code, (exit_code, stdout, stderr)
    assert stdout == "" and words in stderr, stderr


async def counts(db: Database, client_id: int) -> tuple[int, int]:
    async with db.read() as conn:
        held = (await conn.execute(select(func.count()).where(wallets.c.client_id == client_id))).scalar_one()
        moved = (
            await conn.execute(
                select(func.count())
                .select_from(ledger_entries.join(wallets, wallets.c.id == ledger_entries.c.wallet_id))
                .where(wallets.c.client_id == client_id)
            )
        ).scalar_one()
    return int(held), int(moved)


async def test_add_list_and_top_up_wallets_per_currency(cli_env: dict[str, str], db: Database) -> None:  # noqa: F811
    client_id = (await create(cli_env, "--balance", "10.00"))["client_id"]
    cid = str(client_id)
    added = ok_json(await run_cli(cli_env, "wallet", "add", "--client", cid, "--currency", "JPY"))
    assert added == {"client_id": client_id, "currency": "JPY", "balance": "0", "default": False}
    topped = ok_json(
        await run_cli(cli_env, "wallet", "top-up", "--client", cid, "--amount", "10010", "--currency", "JPY")
    )
    assert topped == {"client_id": client_id, "currency": "JPY", "amount": "10010", "balance": "10010"}
    default = ok_json(await run_cli(cli_env, "wallet", "top-up", "--client", cid, "--amount", "5"))
    assert default == {"client_id": client_id, "currency": "EUR", "amount": "5.00", "balance": "15.00"}
    made_default = ok_json(await run_cli(cli_env, "wallet", "add", "--client", cid, "--currency", "KWD", "--default"))
    assert made_default["default"] is True and made_default["balance"] == "0.000"
    ok_json(await run_cli(cli_env, "wallet", "top-up", "--client", cid, "--amount", "20.475", "--currency", "KWD"))
    listed = ok_json(await run_cli(cli_env, "wallet", "list", "--client", cid))
    assert listed == {
        "data": [
            {"currency": "EUR", "balance": "15.00", "default": False},
            {"currency": "JPY", "balance": "10010", "default": False},
            {"currency": "KWD", "balance": "20.475", "default": True},
        ]
    }
    now_default = ok_json(await run_cli(cli_env, "wallet", "top-up", "--client", cid, "--amount", "0.005"))
    assert now_default["currency"] == "KWD" and now_default["balance"] == "20.480"
    async with db.read() as conn:
        actions = {
            r[0]
            for r in await conn.execute(select(admin_audit.c.action).where(admin_audit.c.subject == f"client:{cid}"))
        }
    assert {"wallet.add", "wallet.top_up"} <= actions


async def test_bad_wallet_commands_write_nothing(cli_env: dict[str, str], db: Database) -> None:  # noqa: F811
    client_id = (await create(cli_env))["client_id"]
    cid = str(client_id)
    ok_json(await run_cli(cli_env, "wallet", "add", "--client", cid, "--currency", "JPY"))
    before = await counts(db, client_id)
    top_up = ("wallet", "top-up", "--client", cid)
    refused(await run_cli(cli_env, *top_up, "--amount", "100.5", "--currency", "JPY"), 2, "no decimals")
    refused(await run_cli(cli_env, *top_up, "--amount", "1.005"), 2, "two decimals")
    refused(await run_cli(cli_env, *top_up, "--amount", "10", "--currency", "GBP"), 1, "holds no GBP wallet")
    refused(await run_cli(cli_env, *top_up, "--amount", "10", "--currency", "gbp"), 2, "not an ISO 4217")
    add = ("wallet", "add", "--client", cid, "--currency")
    refused(await run_cli(cli_env, *add, "JPY"), 1, "already holds a JPY wallet")
    refused(await run_cli(cli_env, *add, "EUR"), 1, "already holds a EUR wallet")
    refused(await run_cli(cli_env, *add, "ZZZ"), 2, "not an ISO 4217")
    refused(await run_cli(cli_env, *add, "XAU"), 2, "not an ISO 4217")  # gold: no amounts are paid in it
    refused(await run_cli({**cli_env, "TRANSFERS_CURRENCIES": "EUR,JPY"}, *add, "GBP"), 2, "TRANSFERS_CURRENCIES")
    # a wallet held from before its currency was left out takes no more money, named or the default
    for args in (("--currency", "JPY"), ()):
        limited = {**cli_env, "TRANSFERS_CURRENCIES": "GBP" if args else "JPY"}
        refused(await run_cli(limited, *top_up, "--amount", "10", *args), 2, "TRANSFERS_CURRENCIES")
    refused(await run_cli(cli_env, "wallet", "add", "--client", "999999", "--currency", "GBP"), 1, "no client 999999")
    refused(await run_cli(cli_env, "wallet", "list", "--client", "999999"), 1, "no client 999999")
    assert await counts(db, client_id) == before
    reverse = (await create(cli_env, "--pay-type", "reverse_api"))["client_id"]
    refused(await run_cli(cli_env, "wallet", "add", "--client", str(reverse), "--currency", "GBP"), 1, "reverse_api")


async def test_the_service_refuses_a_top_up_its_wallet_cannot_hold(cli_env: dict[str, str], db: Database) -> None:  # noqa: F811
    """A caller that skipped the CLI's and the console's parsing (JPY 100.5) is refused by the service
    itself, with nothing written: neither the entry nor its audit row."""
    client_id = (await create(cli_env, "--balance", "10.00"))["client_id"]
    ok_json(await run_cli(cli_env, "wallet", "add", "--client", str(client_id), "--currency", "JPY"))
    before = await counts(db, client_id)
    with pytest.raises(MoneyError, match="JPY amounts have no decimals"):
        await service.top_up(db, SystemClock(), client_id, Decimal("100.5"), actor="test", currency="JPY")
    assert await counts(db, client_id) == before
    async with db.read() as conn:
        audited = (
            await conn.execute(
                select(func.count()).where(
                    admin_audit.c.subject == f"client:{client_id}", admin_audit.c.action == "wallet.top_up"
                )
            )
        ).scalar_one()
    assert audited == 0
