"""``transfers operators create|list|disable`` (docs/rules/console.md) against the session database: the
password shown once and stored only as an argon2id hash, ``--password-stdin``, refusals, and a
disable that ends the operator's sessions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from tests.integration.test_cli_clients import cli_env  # noqa: F401  (the fixture)
from tests.servers import LiveServer
from transfers.cli.main import cli
from transfers.clock import ShiftedClock
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, operators, web_sessions
from transfers.webauth.passwords import verify_password
from transfers.webauth.realm import Realm
from transfers.webauth.sessions import open_session, token_hash


def _invoke(args: Sequence[str], env: dict[str, str], stdin: str | None) -> Result:
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, list(args), env=env, input=stdin)
    finally:
        get_settings.cache_clear()


async def run_cli(env: dict[str, str], *args: str, stdin: str | None = None) -> Result:
    return await asyncio.to_thread(_invoke, args, env, stdin)


async def operator_row(db: Database, email: str) -> dict[str, object]:
    async with db.read() as conn:
        row = (await conn.execute(select(operators).where(operators.c.email == email))).mappings().one()
    return dict(row)


async def test_create_prints_a_generated_password_once_and_stores_only_its_hash(
    cli_env: dict[str, str],  # noqa: F811
    db: Database,
) -> None:
    result = await run_cli(cli_env, "operators", "create", "--email", "  Cli.Admin@Example.COM ", "--role", "admin")
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    assert set(created) == {"operator_id", "email", "role", "password"}
    assert created["email"] == "cli.admin@example.com" and created["role"] == "admin"
    assert len(created["password"]) >= 20
    row = await operator_row(db, "cli.admin@example.com")
    assert str(row["password_hash"]).startswith("$argon2id$") and created["password"] not in str(row["password_hash"])
    assert verify_password(str(row["password_hash"]), created["password"])
    listed = await run_cli(cli_env, "operators", "list", "--json")
    assert listed.exit_code == 0
    mine = [r for r in json.loads(listed.stdout) if r["email"] == "cli.admin@example.com"]
    assert mine and mine[0]["role"] == "admin" and "password_hash" not in mine[0] and "password" not in mine[0]
    async with db.read() as conn:
        audited = (
            await conn.execute(
                select(func.count())
                .select_from(admin_audit)
                .where(
                    admin_audit.c.action == "operator.create",
                    admin_audit.c.subject == f"operator:{created['operator_id']}",
                )
            )
        ).scalar_one()
    assert audited == 1


async def test_password_stdin_and_refusals(cli_env: dict[str, str], db: Database) -> None:  # noqa: F811
    result = await run_cli(
        cli_env,
        "operators",
        "create",
        "--email",
        "stdin@example.com",
        "--password-stdin",
        stdin="a long enough secret\n",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["role"] == "support"
    assert json.loads(result.stdout)["password"] == "a long enough secret"
    for args, stdin, message in (
        (("--email", "stdin@example.com"), None, "exists already"),
        (("--email", "STDIN@example.com"), None, "exists already"),
        (("--email", "not-an-email"), None, "not an e-mail address"),
        (("--email", "x" * 400 + "@example.com"), None, "at most 320"),
        (("--email", "short@example.com", "--password-stdin"), "short\n", "at least 12 characters"),
    ):
        refused = await run_cli(cli_env, "operators", "create", *args, stdin=stdin)
        assert refused.exit_code == 1, refused.output
        assert message in refused.stderr
    bad_role = await run_cli(cli_env, "operators", "create", "--email", "r@example.com", "--role", "root")
    assert bad_role.exit_code == 2
    async with db.read() as conn:
        assert (
            await conn.execute(
                select(func.count())
                .select_from(operators)
                .where(operators.c.email.in_(["not-an-email", "short@example.com", "r@example.com"]))
            )
        ).scalar_one() == 0


async def test_disable_ends_every_session(
    cli_env: dict[str, str],  # noqa: F811
    db: Database,
    clock: ShiftedClock,
) -> None:
    created = json.loads((await run_cli(cli_env, "operators", "create", "--email", "gone@example.com")).stdout)
    realm = Realm(name="console", cookie_name="c", path="/console", login_path="/console/login", secure_cookie=False)
    async with db.write() as conn:
        for _ in range(3):
            await open_session(conn, realm, created["operator_id"], clock.now())
    result = await run_cli(cli_env, "operators", "disable", str(created["operator_id"]))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "operator_id": created["operator_id"],
        "status": "disabled",
        "sessions_ended": 3,
    }
    async with db.read() as conn:
        left = (
            await conn.execute(
                select(func.count())
                .select_from(web_sessions)
                .where(web_sessions.c.realm == "console", web_sessions.c.user_id == created["operator_id"])
            )
        ).scalar_one()
    assert left == 0
    assert (await operator_row(db, "gone@example.com"))["status"] == "disabled"
    missing = await run_cli(cli_env, "operators", "disable", "999999")
    assert missing.exit_code == 1 and "no operator 999999" in missing.stderr


@pytest.mark.parametrize("args", [("operators", "--help"), ("operators", "create", "--help")])
async def test_help(cli_env: dict[str, str], args: tuple[str, ...]) -> None:  # noqa: F811
    result = await run_cli(cli_env, *args)
    assert result.exit_code == 0 and "Usage" in result.output


async def test_the_jobs_prune_ended_sessions_and_old_sign_in_failures(
    db: Database, clock: ShiftedClock, service: LiveServer
) -> None:
    from datetime import timedelta

    from transfers.jobs import scheduled
    from transfers.webauth import repository as web_repo

    realm = Realm(name="console", cookie_name="c", path="/console", login_path="/console/login", secure_cookie=False)
    now = clock.now()
    host = "192.0.2.99"
    async with db.write() as conn:
        old = await open_session(conn, realm, 424242, now - timedelta(hours=13))  # past its 12 h
        fresh = await open_session(conn, realm, 424242, now)
        for when in (now - timedelta(days=2), now):
            await web_repo.record_failure(conn, realm="console", email="pruned@example.com", address=host, now=when)
            await web_repo.record_attempt(conn, host, when)
    counts = await scheduled.run_all(service.app.state.services)
    assert counts["sessions_pruned"] >= 2
    async with db.read() as conn:
        assert await web_repo.session_by_token(conn, "console", token_hash(old.token)) is None
        assert await web_repo.session_by_token(conn, "console", token_hash(fresh.token)) is not None
        assert (
            len(await web_repo.failures_since(conn, "console", "pruned@example.com", host, now - timedelta(days=3)))
            == 1
        )
        assert len(await web_repo.attempts_since(conn, host, now - timedelta(days=3))) == 1
