"""``transfers partners update --follow-flight-minutes --free-wait-minutes`` (``--cancellation-policy`` now
optional) and ``transfers flights check`` (docs/rules/flights.md): ranges refused with one clear line and
nothing written, the audit records the change, an unknown booking or partner named. Partners created here
serve only Nuuk (GOH) and are disabled again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from tests.integration.test_partner_policy_cli import SECRET_KEY, _create, _read
from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.tables import admin_audit, partners


@pytest.fixture
def run(plain_database_url: str) -> Any:
    env = {
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
            return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        finally:
            get_settings.cache_clear()

    return invoke


def _limits(database_url: str, partner_id: int) -> tuple[int, int]:
    follow = _read(database_url, select(partners.c.follow_flight_minutes).where(partners.c.id == partner_id))
    wait = _read(database_url, select(partners.c.free_wait_minutes).where(partners.c.id == partner_id))
    return int(follow), int(wait)


def test_the_flight_limits_default_then_change_one_at_a_time(run: Any, database_url: str) -> None:
    created = _create(run)
    assert created.exit_code == 0, created.stderr
    partner_id = json.loads(created.stdout)["partner_id"]
    try:
        assert _limits(database_url, partner_id) == (180, 60)
        updated = run("partners", "update", str(partner_id), "--follow-flight-minutes", "0")
        assert updated.exit_code == 0, updated.stderr
        assert json.loads(updated.stdout) == {
            "partner_id": partner_id,
            "follow_flight_minutes": 0,
            "free_wait_minutes": 60,
        }
        both = run(
            "partners", "update", str(partner_id), "--follow-flight-minutes", "1440", "--free-wait-minutes", "240"
        )
        assert both.exit_code == 0 and _limits(database_url, partner_id) == (1440, 240)
        with_policy = run(
            "partners", "update", str(partner_id), "--cancellation-policy", "none", "--free-wait-minutes", "0"
        )
        assert with_policy.exit_code == 0, with_policy.stderr
        assert json.loads(with_policy.stdout)["cancellation_policy"] is None
        assert _limits(database_url, partner_id) == (1440, 0)
        audit = _read(
            database_url,
            select(admin_audit.c.details)
            .where(admin_audit.c.action == "partner.flight_policy", admin_audit.c.subject == f"partner:{partner_id}")
            .order_by(admin_audit.c.id.desc())
            .limit(1),
        )
        assert audit == {
            "before": {"follow_flight_minutes": 1440, "free_wait_minutes": 240},
            "after": {"follow_flight_minutes": 1440, "free_wait_minutes": 0},
        }
    finally:
        run("partners", "disable", str(partner_id))


@pytest.mark.parametrize(
    "args",
    [
        ("--follow-flight-minutes", "1441"),
        ("--follow-flight-minutes", "-1"),
        ("--follow-flight-minutes", "true"),
        ("--follow-flight-minutes", "1.5"),
        ("--free-wait-minutes", "241"),
        ("--free-wait-minutes", "60 minutes"),
        ("--free-wait-minutes", "9" * 400),
    ],
)
def test_out_of_range_limits_are_refused_and_nothing_is_written(
    run: Any, database_url: str, args: tuple[str, str]
) -> None:
    created = _create(run)
    partner_id = json.loads(created.stdout)["partner_id"]
    try:
        result = run("partners", "update", str(partner_id), *args)
        assert result.exit_code == 2 and args[0] in result.stderr, result.stderr
        assert _limits(database_url, partner_id) == (180, 60)
    finally:
        run("partners", "disable", str(partner_id))


def test_update_needs_something_to_change_and_a_partner(run: Any) -> None:
    nothing = run("partners", "update", "1")
    assert nothing.exit_code == 2 and "nothing to change" in nothing.stderr
    unknown = run("partners", "update", "999999", "--follow-flight-minutes", "60")
    assert (unknown.exit_code, unknown.stderr.strip()) == (1, "error: no partner 999999")


def test_flights_check_of_an_unknown_booking(run: Any) -> None:
    result = run("flights", "check", "TB-NOSUCH000")
    assert result.exit_code != 0 and "TB-NOSUCH000" in result.stderr and result.stdout == ""
