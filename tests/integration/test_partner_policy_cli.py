"""``transfers partners create|update --cancellation-policy`` (docs/rules/cancellation.md): the partner's default
policy, refused with one clear line when malformed, recorded in the admin audit. Partners created
here serve only Nuuk (GOH) and are disabled again."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, partners

SECRET_KEY = "test-secret-key-not-for-production"


@pytest.fixture
def run(plain_database_url: str) -> Any:
    base_env = {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": SECRET_KEY,
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_LOG_LEVEL": "WARNING",
    }

    def invoke(*args: str) -> Result:
        get_settings.cache_clear()
        try:
            return CliRunner().invoke(cli, list(args), env=base_env, catch_exceptions=False)
        finally:
            get_settings.cache_clear()

    return invoke


def _create(run: Any, *extra: str) -> Result:
    return run(
        "partners",
        "create",
        "--name",
        "Nuuk Taxis",
        "--base-url",
        "https://nuuk.example.com",
        "--airports",
        "GOH",
        *extra,
    )


def _read(database_url: str, statement: Any) -> Any:
    """One value read by a Database of its own (the CLI runs its own event loop, so this test is sync)."""

    async def read() -> Any:
        db = Database(database_url, pool_size=1)
        try:
            async with db.read() as conn:
                return (await conn.execute(statement)).scalar_one()
        finally:
            await db.dispose()

    return asyncio.run(read())


def _stored(database_url: str, partner_id: int) -> Any:
    return _read(database_url, select(partners.c.cancellation_policy).where(partners.c.id == partner_id))


def test_create_and_update_set_the_default_policy(run: Any, database_url: str) -> None:
    created = _create(run, "--cancellation-policy", "0:100, 48:0,24:50")
    assert created.exit_code == 0, created.stderr
    partner_id = json.loads(created.stdout)["partner_id"]
    try:
        assert _stored(database_url, partner_id) == [
            {"hours_before_pickup": 48, "fee_percent": 0},
            {"hours_before_pickup": 24, "fee_percent": 50},
            {"hours_before_pickup": 0, "fee_percent": 100},
        ]
        listed = {row["id"]: row for row in json.loads(run("partners", "list", "--json").stdout)}
        assert listed[partner_id]["cancellation_policy"] == "48:0,24:50,0:100"
        updated = run("partners", "update", str(partner_id), "--cancellation-policy", "24:0,0:12.5")
        assert updated.exit_code == 0, updated.stderr
        assert json.loads(updated.stdout) == {
            "partner_id": partner_id,
            "cancellation_policy": [
                {"hours_before_pickup": 24, "fee_percent": 0},
                {"hours_before_pickup": 0, "fee_percent": 12.5},
            ],
        }
        assert _stored(database_url, partner_id) == json.loads(updated.stdout)["cancellation_policy"]
        audit = _read(
            database_url,
            select(admin_audit.c.details).where(
                admin_audit.c.subject == f"partner:{partner_id}", admin_audit.c.action == "partner.cancellation_policy"
            ),
        )
        assert audit == {"before": "48:0,24:50,0:100", "after": "24:0,0:12.5"}
        cleared = run("partners", "update", str(partner_id), "--cancellation-policy", "none")
        assert cleared.exit_code == 0 and _stored(database_url, partner_id) is None
    finally:
        run("partners", "disable", str(partner_id))


@pytest.mark.parametrize(
    ("policy", "problem"),
    [
        ("24:0", "a tier at 0 hours"),
        ("1.5:0,0:100", "whole number"),
        ("-24:0,0:100", "whole number"),
        ("24:0,0:100.5", "between 0 and 100"),
        ("0:12.345", "two decimals"),
        ("24:50,0:10", "may not fall"),
        ("24:0,24:10,0:100", "same hours"),
        ("abc", "HOURS:PERCENT"),
        (",".join(f"{h}:0" for h in range(11)), "at most 10 tiers"),
    ],
)
def test_a_malformed_policy_is_refused_and_nothing_is_written(run: Any, policy: str, problem: str) -> None:
    before = json.loads(run("partners", "list", "--json").stdout)
    result = _create(run, "--cancellation-policy", policy)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --cancellation-policy") and problem in result.stderr, result.stderr
    assert result.stdout == ""
    assert json.loads(run("partners", "list", "--json").stdout) == before
    updated = run("partners", "update", "999999", "--cancellation-policy", policy)
    assert updated.exit_code == 1 and problem in updated.stderr


def test_update_of_an_unknown_partner(run: Any) -> None:
    result = run("partners", "update", "999999", "--cancellation-policy", "24:0,0:100")
    assert (result.exit_code, result.stderr.strip()) == (1, "error: no partner 999999")
