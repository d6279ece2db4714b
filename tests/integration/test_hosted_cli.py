"""``transfers partners create --hosted`` and ``transfers partners rate-card set/get`` (docs/rules/hosted-partners.md),
run as an operator runs them. Hosted partners made here serve only Nuuk (GOH) and are disabled again."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.ratecards import repository as cards_repo

SECRET_KEY = "test-secret-key-not-for-production"
EXAMPLE = Path(__file__).parents[2] / "examples" / "rate-card.json"


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


def _hosted(run: Any) -> int:
    result = run("partners", "create", "--name", "Nuuk Taxi ApS", "--hosted", "--airports", "GOH", "--markup", "10")
    assert result.exit_code == 0, result.stderr
    created = json.loads(result.stdout)
    assert set(created) == {"partner_id", "api_key"}  # no outbound token, no signing secret
    assert created["api_key"].startswith("pk_")
    return int(created["partner_id"])


def test_create_hosted_set_and_get_the_example_card(run: Any, tmp_path: Path, database_url: str) -> None:
    partner_id = _hosted(run)
    try:
        listed = {row["id"]: row for row in json.loads(run("partners", "list", "--json").stdout)}
        assert listed[partner_id]["hosted"] is True and listed[partner_id]["base_url"] == ""
        assert "(hosted)" in run("partners", "list").stdout
        missing = run("partners", "rate-card", "get", str(partner_id))
        assert missing.exit_code == 1 and "has no rate card yet" in missing.stderr
        done = run("partners", "rate-card", "set", str(partner_id), "--file", str(EXAMPLE))
        assert done.exit_code == 0, done.stderr
        assert json.loads(done.stdout) == {
            "partner_id": partner_id,
            "currency": "EUR",
            "vehicles": ["sedan", "van"],
            "extras": ["child-seat", "meet-greet"],
        }
        got = run("partners", "rate-card", "get", str(partner_id))
        assert got.exit_code == 0 and json.loads(got.stdout) == json.loads(EXAMPLE.read_text())
    finally:
        run("partners", "disable", str(partner_id))


def test_a_bad_card_lists_every_error_and_stores_nothing(run: Any, tmp_path: Path, database_url: str) -> None:
    partner_id = _hosted(run)
    try:
        card = json.loads(EXAMPLE.read_text())
        assert run("partners", "rate-card", "set", str(partner_id), "--file", str(EXAMPLE)).exit_code == 0
        bad = copy.deepcopy(card)
        bad["currency"] = "euro"
        bad["vehicles"][0]["type"] = "SPACESHIP"  # the reference data has no such type
        bad["vehicles"][1]["prices"]["minimum"] = 60
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        result = run("partners", "rate-card", "set", str(partner_id), "--file", str(path))
        assert result.exit_code == 1 and result.stdout == ""
        lines = result.stderr.splitlines()
        assert lines[0].startswith("error: $.currency: ")
        assert lines[1].startswith("error: $.vehicles[1].prices.minimum:")
        assert len(lines) == 2  # the type is checked once the schema passes
        bad["currency"] = "EUR"
        bad["vehicles"][1]["prices"]["minimum"] = "60.00"
        path.write_text(json.dumps(bad))
        typed = run("partners", "rate-card", "set", str(partner_id), "--file", str(path))
        assert typed.exit_code == 1 and typed.stderr.startswith("error: $.vehicles[0].type: 'SPACESHIP'")

        async def stored() -> dict[str, Any] | None:
            db = Database(database_url)
            try:
                async with db.read() as conn:
                    return await cards_repo.get_card(conn, partner_id)
            finally:
                await db.dispose()

        assert asyncio.run(stored()) == card  # the good card is still the one stored
        path.write_text("{not json")
        assert run("partners", "rate-card", "set", str(partner_id), "--file", str(path)).stderr.startswith(
            f"error: {path}: not JSON"
        )
    finally:
        run("partners", "disable", str(partner_id))


def test_refusals(run: Any) -> None:
    both = run("partners", "create", "--name", "X", "--hosted", "--base-url", "https://x.example", "--airports", "GOH")
    assert both.exit_code == 1 and "--base-url: a --hosted partner has no server" in both.stderr
    neither = run("partners", "create", "--name", "X", "--airports", "GOH")
    assert neither.exit_code == 1 and "--base-url is required" in neither.stderr
    assert run("partners", "rate-card", "get", "999999").stderr == "error: no hosted partner 999999\n"
    server = run("partners", "create", "--name", "Srv", "--base-url", "https://srv.example", "--airports", "GOH")
    server_id = json.loads(server.stdout)["partner_id"]
    try:
        refused = run("partners", "rate-card", "set", str(server_id), "--file", str(EXAMPLE))
        assert refused.exit_code == 1 and "is not hosted" in refused.stderr
    finally:
        run("partners", "disable", str(server_id))


def test_partner_users_create(run: Any) -> None:
    partner_id = _hosted(run)
    try:
        made = run("partners", "users", "create", "--partner", str(partner_id), "--email", "Dispatch@Nuuk-Taxi.example")
        assert made.exit_code == 0, made.stderr
        user = json.loads(made.stdout)
        assert set(user) == {"user_id", "partner_id", "email", "password"}
        assert user["partner_id"] == partner_id and user["email"] == "dispatch@nuuk-taxi.example"
        assert len(user["password"]) >= 20
        again = run(
            "partners", "users", "create", "--partner", str(partner_id), "--email", "dispatch@nuuk-taxi.example"
        )
        assert again.exit_code == 1 and "already has an account" in again.stderr
        bad = run("partners", "users", "create", "--partner", str(partner_id), "--email", "not an address")
        assert bad.exit_code == 1 and bad.stderr.startswith("error: --email:")
        nobody = run("partners", "users", "create", "--partner", "999999", "--email", "x@nuuk-taxi.example")
        assert nobody.exit_code == 1 and nobody.stderr == "error: no partner 999999\n"
    finally:
        run("partners", "disable", str(partner_id))
