"""The operator CLI for clients, keys and wallets (docs/rules/operations.md), against the session database and
checked through the database and the live service.

The CLI runs ``asyncio.run`` itself, so it is invoked through ``asyncio.to_thread``: the test's own
event loop (which also serves the live service) keeps running meanwhile. ``get_settings`` is
cached per process; the cache is cleared around every invocation so each one reads its own
environment, as a fresh ``transfers`` process would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from tests.conftest import bearer
from tests.invariants import check_wallet_invariants
from transfers.auth.keys import hash_key, parse_key
from transfers.cli.main import cli
from transfers.config import Settings, get_settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, api_keys, clients, ledger_entries, wallets

REASONS = "/api/v1/booking-api/cancellation-reasons"


def _invoke(args: Sequence[str], env: dict[str, str]) -> Result:
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, list(args), env=env)
    finally:
        get_settings.cache_clear()


async def run_cli(env: dict[str, str], *args: str) -> Result:
    return await asyncio.to_thread(_invoke, args, env)


@pytest.fixture(scope="session")
def cli_env(plain_database_url: str) -> dict[str, str]:
    return {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": "test-secret-key-not-for-production",
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_SANDBOX_PARTNER": "0",
        "TRANSFERS_LOG_LEVEL": "WARNING",
    }


def ok_json(result: Result) -> dict[str, Any]:
    """A successful command: exit 0, exactly one JSON object on one line of stdout, nothing on stderr."""
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


async def create(env: dict[str, str], *extra: str, name: str = "CLI agency") -> dict[str, Any]:
    created = ok_json(await run_cli(env, "clients", "create", "--name", name, *extra))
    assert set(created) == {"client_id", "api_key", "key_prefix"}
    assert type(created["client_id"]) is int
    return created


async def client_row(db: Database, client_id: int) -> dict[str, Any]:
    async with db.read() as conn:
        row = (
            (
                await conn.execute(
                    select(clients, wallets.c.id.label("wallet_id"), wallets.c.currency, wallets.c.balance)
                    .join(wallets, wallets.c.client_id == clients.c.id)
                    .where(clients.c.id == client_id)
                )
            )
            .mappings()
            .one()
        )
    return dict(row)


async def ledger_of(db: Database, wallet_id: int) -> list[tuple[str, Decimal]]:
    async with db.read() as conn:
        return [
            (r.kind, r.amount)
            for r in await conn.execute(
                select(ledger_entries.c.kind, ledger_entries.c.amount)
                .where(ledger_entries.c.wallet_id == wallet_id)
                .order_by(ledger_entries.c.id)
            )
        ]


async def audit_rows(db: Database, subject: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        return [
            dict(r)
            for r in (
                await conn.execute(
                    select(admin_audit).where(admin_audit.c.subject == subject).order_by(admin_audit.c.id)
                )
            ).mappings()
        ]


async def counts(db: Database) -> tuple[int, ...]:
    async with db.read() as conn:
        return tuple(
            [
                (await conn.execute(select(func.count()).select_from(table))).scalar_one()
                for table in (clients, api_keys, ledger_entries, admin_audit)
            ]
            + [
                (
                    await conn.execute(
                        select(func.count()).select_from(api_keys).where(api_keys.c.revoked_at.is_not(None))
                    )
                ).scalar_one()
            ]
        )


async def wait_out_the_cache(settings: Settings) -> None:
    await asyncio.sleep(settings.auth_cache_seconds + 0.2)


# ---- clients create -------------------------------------------------------------------------------


async def test_clients_create_prints_the_key_once_and_it_works(
    cli_env: dict[str, str], db: Database, http: httpx.AsyncClient
) -> None:
    created = await create(cli_env, name="  Agency One  ")
    key, prefix, client_id = created["api_key"], created["key_prefix"], created["client_id"]
    assert parse_key(key) == ("tk", prefix)

    row = await client_row(db, client_id)
    assert (row["name"], row["pay_type"], row["status"]) == ("Agency One", "wallet", "active")
    assert (bool(row["can_create"]), bool(row["can_cancel"])) == (True, True)
    assert (row["currency"], row["balance"]) == (get_settings().default_currency, Decimal("0.00"))
    assert await ledger_of(db, row["wallet_id"]) == []  # a zero opening balance posts nothing

    async with db.read() as conn:
        key_row = (await conn.execute(select(api_keys).where(api_keys.c.prefix == prefix))).mappings().one()
    assert key_row["client_id"] == client_id and key_row["partner_id"] is None and key_row["revoked_at"] is None
    assert key_row["key_hash"] == hash_key(key)
    assert key not in json.dumps({k: str(v) for k, v in key_row.items()})  # only the hash is stored

    [audit] = await audit_rows(db, f"client:{client_id}")
    assert audit["action"] == "client.create" and audit["actor"].startswith("cli:")
    assert audit["details"]["key_prefix"] == prefix and audit["details"]["name"] == "Agency One"
    assert key not in json.dumps(audit["details"])  # the secret is not in the audit trail either

    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 200 and isinstance(response.json(), list)


async def test_clients_create_options_reach_the_database(cli_env: dict[str, str], db: Database) -> None:
    created = await create(
        cli_env, "--pay-type", "reverse_api", "--balance", "250.50", "--currency", "usd", "--deny", "booking.create"
    )
    row = await client_row(db, created["client_id"])
    assert (row["pay_type"], row["currency"], row["balance"]) == ("reverse_api", "USD", Decimal("250.50"))
    assert (bool(row["can_create"]), bool(row["can_cancel"])) == (False, True)
    assert await ledger_of(db, row["wallet_id"]) == [("credit_topup", Decimal("250.50"))]

    both = await create(cli_env, "--deny", "booking.create", "--deny", "booking.cancel", "--balance", "0.01")
    row = await client_row(db, both["client_id"])
    assert (bool(row["can_create"]), bool(row["can_cancel"])) == (False, False)
    assert (row["pay_type"], row["balance"]) == ("wallet", Decimal("0.01"))

    cancel_only = await create(cli_env, "--deny", "booking.cancel", "--currency", "GBP")
    row = await client_row(db, cancel_only["client_id"])
    assert (bool(row["can_create"]), bool(row["can_cancel"]), row["currency"]) == (True, False, "GBP")
    await check_wallet_invariants(db)


async def test_each_create_issues_a_distinct_key(cli_env: dict[str, str]) -> None:
    first, second = await create(cli_env), await create(cli_env)
    assert first["client_id"] != second["client_id"]
    assert first["api_key"] != second["api_key"] and first["key_prefix"] != second["key_prefix"]


# ---- wallet top-up --------------------------------------------------------------------------------


async def test_wallet_top_up_updates_balance_and_ledger(cli_env: dict[str, str], db: Database) -> None:
    created = await create(cli_env, "--balance", "10.00")
    client_id = created["client_id"]
    topped = ok_json(await run_cli(cli_env, "wallet", "top-up", "--client", str(client_id), "--amount", "50.05"))
    assert topped == {"client_id": client_id, "currency": "EUR", "amount": "50.05", "balance": "60.05"}
    ok_json(await run_cli(cli_env, "wallet", "top-up", "--client", str(client_id), "--amount", "0.1"))
    row = await client_row(db, client_id)
    assert row["balance"] == Decimal("60.15")
    assert await ledger_of(db, row["wallet_id"]) == [
        ("credit_topup", Decimal("10.00")),
        ("credit_topup", Decimal("50.05")),
        ("credit_topup", Decimal("0.10")),
    ]
    audits = [a for a in await audit_rows(db, f"client:{client_id}") if a["action"] == "wallet.top_up"]
    assert [(a["details"]["amount"], a["details"]["balance"]) for a in audits] == [
        ("50.05", "60.05"),
        ("0.10", "60.15"),
    ]
    assert all(a["actor"].startswith("cli:") for a in audits)
    await check_wallet_invariants(db)


# ---- suspend, activate, revoke --------------------------------------------------------------------


async def test_suspend_and_activate_take_effect_on_the_service(
    cli_env: dict[str, str], db: Database, http: httpx.AsyncClient, settings: Settings
) -> None:
    created = await create(cli_env)
    client_id, key = created["client_id"], created["api_key"]
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200
    assert ok_json(await run_cli(cli_env, "clients", "suspend", str(client_id))) == {
        "client_id": client_id,
        "status": "suspended",
    }
    assert (await client_row(db, client_id))["status"] == "suspended"
    await wait_out_the_cache(settings)
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 403
    assert response.json() == {
        "status": "Error",
        "code": "CLIENT_SUSPENDED",
        "message": "This client account is suspended.",
    }

    assert ok_json(await run_cli(cli_env, "clients", "activate", str(client_id))) == {
        "client_id": client_id,
        "status": "active",
    }
    await wait_out_the_cache(settings)
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200
    actions = [a["action"] for a in await audit_rows(db, f"client:{client_id}")]
    assert actions == ["client.create", "client.suspended", "client.active"]


async def test_keys_revoke_takes_effect_on_the_service(
    cli_env: dict[str, str], db: Database, http: httpx.AsyncClient, settings: Settings
) -> None:
    created = await create(cli_env)
    key, prefix = created["api_key"], created["key_prefix"]
    other = await create(cli_env)
    assert (await http.get(REASONS, headers=bearer(key))).status_code == 200
    assert ok_json(await run_cli(cli_env, "keys", "revoke", prefix)) == {"key_prefix": prefix, "revoked": True}
    async with db.read() as conn:
        revoked_at = (await conn.execute(select(api_keys.c.revoked_at).where(api_keys.c.prefix == prefix))).scalar_one()
    assert revoked_at is not None
    await wait_out_the_cache(settings)
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 401 and response.json()["code"] == "UNAUTHENTICATED"
    assert (await http.get(REASONS, headers=bearer(other["api_key"]))).status_code == 200
    [audit] = await audit_rows(db, f"key:{prefix}")
    assert audit["action"] == "key.revoke" and audit["actor"].startswith("cli:")
    # Revoking an already revoked key is a harmless no-op that keeps the first revocation time.
    ok_json(await run_cli(cli_env, "keys", "revoke", prefix))
    async with db.read() as conn:
        again = (await conn.execute(select(api_keys.c.revoked_at).where(api_keys.c.prefix == prefix))).scalar_one()
    assert again == revoked_at


# ---- bad input ------------------------------------------------------------------------------------


@pytest.fixture
async def existing_client(cli_env: dict[str, str]) -> int:
    created = await create(cli_env, "--balance", "5.00")
    return int(created["client_id"])


BAD_INVOCATIONS: dict[str, list[str]] = {
    "negative balance": ["clients", "create", "--name", "X", "--balance", "-5.00"],
    "3-decimal balance": ["clients", "create", "--name", "X", "--balance", "1.005"],
    "text balance": ["clients", "create", "--name", "X", "--balance", "lots"],
    "NaN balance": ["clients", "create", "--name", "X", "--balance", "NaN"],
    "infinite balance": ["clients", "create", "--name", "X", "--balance", "Infinity"],
    "balance beyond NUMERIC(14,2)": ["clients", "create", "--name", "X", "--balance", "1000000000000.00"],
    "4-letter currency": ["clients", "create", "--name", "X", "--currency", "EURO"],
    "digit in currency": ["clients", "create", "--name", "X", "--currency", "E1R"],
    "empty currency": ["clients", "create", "--name", "X", "--currency", ""],
    "non-ascii currency": ["clients", "create", "--name", "X", "--currency", "ÉUR"],
    "blank name": ["clients", "create", "--name", "   "],
    "long name": ["clients", "create", "--name", "N" * 201],
    "missing name": ["clients", "create"],
    "unknown permission": ["clients", "create", "--name", "X", "--deny", "booking.delete"],
    "negative top-up": ["wallet", "top-up", "--client", "{client}", "--amount", "-1.00"],
    "3-decimal top-up": ["wallet", "top-up", "--client", "{client}", "--amount", "1.001"],
    "zero top-up": ["wallet", "top-up", "--client", "{client}", "--amount", "0.00"],
    "top-up beyond NUMERIC(14,2)": ["wallet", "top-up", "--client", "{client}", "--amount", "1000000000000"],
    "top-up of unknown client": ["wallet", "top-up", "--client", "987654321", "--amount", "1.00"],
    "top-up of non-numeric client": ["wallet", "top-up", "--client", "abc", "--amount", "1.00"],
    "top-up without amount": ["wallet", "top-up", "--client", "{client}"],
    "suspend unknown client": ["clients", "suspend", "987654321"],
    "activate unknown client": ["clients", "activate", "987654321"],
    "revoke unknown prefix": ["keys", "revoke", "tk_000000000000"],
    "revoke garbage prefix": ["keys", "revoke", "'; DROP TABLE api_keys; --"],
    "revoke empty prefix": ["keys", "revoke", ""],
}


@pytest.mark.parametrize("args", list(BAD_INVOCATIONS.values()), ids=list(BAD_INVOCATIONS))
async def test_bad_input_fails_cleanly_and_changes_nothing(
    cli_env: dict[str, str], db: Database, existing_client: int, args: list[str]
) -> None:
    before = await counts(db)
    wallet_before = (await client_row(db, existing_client))["balance"]
    result = await run_cli(cli_env, *[a.replace("{client}", str(existing_client)) for a in args])
    assert result.exit_code != 0
    # A clean refusal: an exit status, not an exception escaping with a traceback.
    assert isinstance(result.exception, SystemExit), result.exception
    assert "error:" in result.stderr.lower(), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # nothing that could be mistaken for a JSON answer
    assert await counts(db) == before
    assert (await client_row(db, existing_client))["balance"] == wallet_before


async def test_the_agencys_support_phone_is_set_read_as_e164_and_cleared(db: Database, cli_env: dict[str, str]) -> None:
    created = await create(cli_env, name="Phone agency")
    client_id = created["client_id"]
    typed = "0044 (0)20 7946-0555"
    assert ok_json(await run_cli(cli_env, "clients", "support-phone", str(client_id), typed)) == {
        "client_id": client_id,
        "support_phone": "+442079460555",
    }
    refused = await run_cli(cli_env, "clients", "support-phone", str(client_id), "020 7946 0555")
    assert refused.exit_code == 1 and "country code" in refused.stderr
    neither = await run_cli(cli_env, "clients", "support-phone", str(client_id))
    assert neither.exit_code == 2
    assert (await client_row(db, client_id))["support_phone"] == "+442079460555"
    cleared = ok_json(await run_cli(cli_env, "clients", "support-phone", str(client_id), "--clear"))
    assert cleared == {"client_id": client_id, "support_phone": None}
    assert [r["action"] for r in await audit_rows(db, f"client:{client_id}")][-2:] == [
        "client.support_phone",
        "client.support_phone",
    ]
