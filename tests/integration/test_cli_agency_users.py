"""``transfers clients users create`` (docs/rules/agency-portal.md#users) against the session
database: the JSON with the password shown once (stored only as an argon2id hash), the role,
``--password-stdin``, and the refusals (unknown client, taken e-mail, bad role, bad e-mail) as one
line and exit 1 with nothing written; the user then signs in at /agency/login."""

from __future__ import annotations

import json
import os

import httpx
from sqlalchemy import func, select

from tests.agency.conftest import AgencyBrowser, sign_in
from tests.conftest import ClientFactory
from tests.integration.test_cli_clients import cli_env  # noqa: F401  (the fixture)
from tests.integration.test_cli_operators import run_cli
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import agency_users
from transfers.webauth.passwords import verify_password


async def test_create_prints_the_user_with_its_password_once(
    cli_env: dict[str, str],  # noqa: F811
    db: Database,
    make_client: ClientFactory,
    service: LiveServer,
) -> None:
    client_id, _ = await make_client()
    email = f"Desk-{os.getpid()}-{client_id}@Agency.Example"
    result = await run_cli(
        cli_env, "clients", "users", "create", "--client", str(client_id), "--email", email, "--role", "admin"
    )
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    assert set(created) == {"user_id", "client_id", "email", "role", "password"}
    assert created["client_id"] == client_id and created["role"] == "admin" and created["email"] == email.lower()
    async with db.read() as conn:
        row = (await conn.execute(select(agency_users).where(agency_users.c.email == email.lower()))).mappings().one()
    assert str(row["password_hash"]).startswith("$argon2id$")
    assert verify_password(str(row["password_hash"]), created["password"])
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        assert (await sign_in(AgencyBrowser(http), email, created["password"])).status_code == 303
    agent = await run_cli(
        cli_env,
        "clients",
        "users",
        "create",
        "--client",
        str(client_id),
        "--email",
        f"agent-{email}",
        "--password-stdin",
        stdin="a long enough password 123\n",
    )
    assert agent.exit_code == 0, agent.output
    assert json.loads(agent.stdout)["role"] == "agent"
    assert json.loads(agent.stdout)["password"] == "a long enough password 123"


async def test_refusals_are_one_line_and_write_nothing(
    cli_env: dict[str, str],  # noqa: F811
    db: Database,
    make_client: ClientFactory,
) -> None:
    client_id, _ = await make_client()
    email = f"taken-{os.getpid()}-{client_id}@agency.example"
    first = await run_cli(cli_env, "clients", "users", "create", "--client", str(client_id), "--email", email)
    assert first.exit_code == 0, first.output
    async with db.read() as conn:
        before = (await conn.execute(select(func.count()).select_from(agency_users))).scalar_one()
    for args, words in (
        (["--client", "999999999", "--email", "x@agency.example"], "There is no client 999999999."),
        (["--client", str(client_id), "--email", email.upper()], "already has an account"),
        (["--client", str(client_id), "--email", "not an address"], "Not an e-mail address"),
        (["--client", str(client_id), "--email", "y@agency.example", "--role", "owner"], "owner"),
    ):
        result = await run_cli(cli_env, "clients", "users", "create", *args)
        assert result.exit_code in (1, 2), (args, result.output)
        assert words in result.output, (args, result.output)
        assert "Traceback" not in result.output
    async with db.read() as conn:
        after = (await conn.execute(select(func.count()).select_from(agency_users))).scalar_one()
    assert after == before
