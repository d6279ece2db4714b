"""``transfers partners ...`` as an operator runs it: real settings from the environment, the
session database, JSON on stdout, ``error: ...`` on stderr with exit code 1.

Partners created here serve only Nuuk (GOH) and are disabled again, so no other test's search
ever reaches their (unreachable) URLs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import endpoint_for

SECRET_KEY = "test-secret-key-not-for-production"
AREA = "GOH"


@pytest.fixture
def run(plain_database_url: str) -> Any:
    base_env = {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": SECRET_KEY,
        "TRANSFERS_ENVIRONMENT": "sandbox",
        "TRANSFERS_LOG_LEVEL": "WARNING",
    }

    def invoke(*args: str, **env: str) -> Result:
        get_settings.cache_clear()  # settings are read once per process; each invocation is a new "process"
        try:
            return CliRunner().invoke(cli, list(args), env={**base_env, **env}, catch_exceptions=False)
        finally:
            get_settings.cache_clear()

    return invoke


def _create(run: Any, name: str, *extra: str) -> dict[str, Any]:
    result = run(
        "partners",
        "create",
        "--name",
        name,
        "--base-url",
        "https://transfers.example.com/api/",
        "--airports",
        f"{AREA.lower()}, {AREA}",
        *extra,
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return dict(json.loads(result.stdout))


def _listed(run: Any) -> dict[int, dict[str, Any]]:
    result = run("partners", "list", "--json")
    assert result.exit_code == 0, result.stderr
    return {row["id"]: row for row in json.loads(result.stdout)}


def test_create_prints_credentials_once_and_stores_them_encrypted(run: Any, database_url: str) -> None:
    created = _create(run, "Heathrow Cars Ltd", "--markup", "12.5")
    assert set(created) == {"partner_id", "api_key", "outbound_token", "signing_secret"}
    assert isinstance(created["partner_id"], int)
    assert created["api_key"].startswith("pk_") and created["outbound_token"].startswith("ot_")
    assert created["signing_secret"].startswith("whsec_")
    row = _listed(run)[created["partner_id"]]
    assert row == {
        "id": created["partner_id"],
        "name": "Heathrow Cars Ltd",
        "status": "enabled",
        "base_url": "https://transfers.example.com/api",
        "airports": AREA,
        "markup": "12.5%",
        "sandbox": False,
        "hosted": False,
        "cancellation_policy": None,
    }

    async def stored() -> Any:
        db = Database(database_url, pool_size=1)
        try:
            return await endpoint_for(db, SecretBox(SECRET_KEY), created["partner_id"])
        finally:
            await db.dispose()

    endpoint = asyncio.run(stored())
    assert endpoint.outbound_token == created["outbound_token"]
    assert endpoint.signing_secret == created["signing_secret"]
    assert run("partners", "disable", str(created["partner_id"])).exit_code == 0


def test_list_disable_and_enable(run: Any) -> None:
    partner_id = _create(run, "Nuuk Taxi")["partner_id"]
    table = run("partners", "list")
    assert table.exit_code == 0
    header, *lines = table.stdout.splitlines()
    assert header.split() == ["ID", "NAME", "STATUS", "BASE_URL", "AIRPORTS", "MARKUP"]
    ours = next(line for line in lines if line.startswith(f"{partner_id} "))
    assert "Nuuk Taxi" in ours and "enabled" in ours and AREA in ours and "0%" in ours
    for command, status in (("disable", "disabled"), ("enable", "enabled"), ("disable", "disabled")):
        result = run("partners", command, str(partner_id))
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout) == {"partner_id": partner_id, "status": status}
        assert _listed(run)[partner_id]["status"] == status
    missing = run("partners", "disable", "987654321")
    assert missing.exit_code == 1 and missing.stderr == "error: no partner 987654321\n"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--airports", "LHR,QQQ", "unknown IATA airport code(s): QQQ"),
        ("--airports", "LH", "unknown IATA airport code(s): LH"),
        ("--airports", "LHRX", "unknown IATA airport code(s): LHRX"),
        ("--airports", "1HR", "unknown IATA airport code(s): 1HR"),
        ("--airports", " , ", "at least one IATA code"),
        ("--airports", "*,LHR", "do not combine it with codes"),
        ("--markup", "-1", "between 0 and 100"),
        ("--markup", "100.5", "between 0 and 100"),
        ("--markup", "ten", "is not a number"),
        ("--markup", "NaN", "between 0 and 100"),
        ("--markup", "1.2345", "at most three decimals"),
        ("--base-url", "ftp://partner.example.com", "must be http or https"),
        ("--base-url", "https://user:pw@partner.example.com", "may not carry credentials"),
        ("--base-url", "partner.example.com", "must be http or https"),
        ("--name", "  ", "--name must be 1..200 characters"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(run: Any, option: str, value: str, message: str) -> None:
    before = len(_listed(run))
    args = {"--name": "Bad Input Cars", "--base-url": "https://cars.example.com", "--airports": AREA}
    args[option] = value
    result = run("partners", "create", *[item for pair in args.items() for item in pair])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
    assert len(_listed(run)) == before


def test_private_urls_follow_the_deployment_setting(run: Any) -> None:
    args = ("partners", "create", "--name", "Loopback Cars", "--base-url", "http://127.0.0.1:8100", "--airports", AREA)
    refused = run(*args)  # the guard is on in sandbox too (the built-in partner is trusted by its URL)
    assert refused.exit_code == 1 and "private, loopback and link-local" in refused.stderr
    live = run(*args, TRANSFERS_ENVIRONMENT="live")
    assert live.exit_code == 1 and "private, loopback and link-local" in live.stderr
    lifted_in_live = run(*args, TRANSFERS_ENVIRONMENT="live", TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS="1")
    assert lifted_in_live.exit_code == 2 and "ALLOW_PRIVATE_PARTNER_URLS=1" in lifted_in_live.stderr
    allowed = run(*args, TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS="1")
    assert allowed.exit_code == 0, allowed.stderr
    assert run("partners", "disable", str(json.loads(allowed.stdout)["partner_id"])).exit_code == 0


def test_every_airport_wildcard(run: Any) -> None:
    created = _create(run, "Anywhere Cars")
    result = run(
        "partners", "create", "--name", "Global Cars", "--base-url", "https://global.example.com", "--airports", "*"
    )
    assert result.exit_code == 0, result.stderr
    partner_id = json.loads(result.stdout)["partner_id"]
    # Disable first: while enabled it would be asked by every search of the session.
    assert run("partners", "disable", str(partner_id)).exit_code == 0
    assert _listed(run)[partner_id]["airports"] == "*"
    assert run("partners", "disable", str(created["partner_id"])).exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--service-url", "ftp://127.0.0.1:8000"), "service_url must be an http(s) URL"),
        (("--approve-after", "-1"), "approve_after_seconds must be zero or more"),
        (("--signing-secret", "not-a-secret", "--outbound-token", "ot_x"), "--signing-secret must be the whsec_"),
        (("--currency", "euro"), "currency must be a three-letter"),
    ],
)
def test_sandbox_partner_refuses_bad_options(run: Any, args: tuple[str, ...], message: str) -> None:
    base = {"--service-url": "http://127.0.0.1:8000", "--api-key": "pk_x"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    result = run("sandbox-partner", *[item for pair in base.items() for item in pair])
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and message in result.stderr, result.stderr


def test_sandbox_partner_serves_with_the_built_in_credentials_by_default(
    run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transfers.cli import sandbox
    from transfers.partners.service import sandbox_credentials

    served: dict[str, Any] = {}
    monkeypatch.setattr(sandbox.uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    monkeypatch.setattr(sandbox, "configure_logging", lambda *_: None)  # keep the test session's logging
    result = run(
        "sandbox-partner",
        "--port",
        "8123",
        "--service-url",
        "http://127.0.0.1:8000/",
        "--api-key",
        "pk_x",
        "--approve-after",
        "2.5",
    )
    assert result.exit_code == 0, result.stderr
    assert served["port"] == 8123 and served["host"] == "127.0.0.1"
    config = served["app"].state.partner.config
    expected = sandbox_credentials(SecretBox(SECRET_KEY))
    assert (config.signing_secret, config.outbound_token) == (expected.signing_secret, expected.outbound_token)
    assert config.service_url == "http://127.0.0.1:8000" and config.approve_after_seconds == 2.5
