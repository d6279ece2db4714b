"""Start-up and infrastructure failures as an operator meets them: the installed ``transfers`` command,
real PostgreSQL/SQLite/Redis (or a port nobody listens on), one line naming what is wrong, the exit
code (2 settings, 69 unavailable), no traceback unless asked, never a password."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from tests.conftest import ON_POSTGRES, PG_URL
from tests.process.conftest import PG_BIN, FreshDatabase, PrivateCluster, Processes, _pg_admin, async_url, run_cmd
from tests.process.operator import Ran, assert_operator_error, operator_env, transfers
from tests.servers import free_port
from transfers.db.migrate import upgrade

pytestmark = pytest.mark.slow  # ~30 runs of the installed command, 1-3 s each
PASSWORD = "pw-never-shown-7f3a"
CLIENT = ("clients", "create", "--name", "Operator Test Agency")


def _server(database: str, *, user: str = "postgres", password: str | None = PASSWORD) -> str:
    """A URL on the test PostgreSQL server (TRANSFERS_TEST_DATABASE_URL's host and port)."""
    host = PG_URL.split("@", 1)[1].split("/", 1)[0]
    login = f"{user}:{password}" if password else user
    return f"postgresql://{login}@{host}/{database}"


def _commands(port: int) -> list[tuple[str, ...]]:
    """Every kind of command that needs the database: serve and worker wait (briefly here), the rest don't."""
    return [
        CLIENT,
        ("serve", "--port", str(port), "--wait-for-db", "1"),
        ("worker", "--once", "--wait-for-db", "0"),
        ("db", "upgrade"),
        ("bookings", "list"),
    ]


async def test_postgres_on_a_closed_port(tmp_path: Path) -> None:
    closed = free_port()
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{closed}/transfers"
    for args in _commands(free_port()):
        ran = await transfers(*args, env=operator_env(url), cwd=tmp_path)
        assert_operator_error(ran, 69, f"127.0.0.1:{closed}/transfers", "connection refused", hidden=(PASSWORD,))
    waited = await transfers(
        "serve", "--port", str(free_port()), "--wait-for-db", "2", env=operator_env(url), cwd=tmp_path
    )
    assert_operator_error(waited, 69, "gave up after", hidden=(PASSWORD,))
    attempts = [json.loads(line) for line in waited.stdout.splitlines() if '"database_unavailable"' in line]
    assert len(attempts) >= 2 and attempts[0]["attempt"] == 1, waited.show()
    assert all(PASSWORD not in json.dumps(a) for a in attempts)


@pytest.mark.pg_only
async def test_login_refused(tmp_path: Path) -> None:
    """The test server trusts every login from 127.0.0.1 (pg_hba.conf ``trust``), so a wrong password
    is accepted there; a role that does not exist is refused all the same (SQLSTATE 28000)."""
    url = _server("postgres", user=f"tx_nobody_{secrets.token_hex(3)}")
    for args in _commands(free_port()):
        ran = await transfers(*args, env=operator_env(url), cwd=tmp_path)
        assert_operator_error(ran, 69, "refused the login", "does not exist", hidden=(PASSWORD,))


@pytest.mark.pg_only
async def test_missing_database(tmp_path: Path) -> None:
    name = f"tx_missing_{secrets.token_hex(4)}"
    for args in _commands(free_port()):
        ran = await transfers(*args, env=operator_env(_server(name)), cwd=tmp_path)
        assert_operator_error(ran, 69, f'database "{name}" does not exist', hidden=(PASSWORD,))


async def _stamp(fresh: FreshDatabase, revision: str) -> None:
    async with fresh.db.write() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})


async def test_database_one_migration_ahead(fresh_db: FreshDatabase, tmp_path: Path) -> None:
    await _stamp(fresh_db, "0099")
    for args in _commands(free_port()):
        ran = await transfers(*args, env=operator_env(fresh_db.url), cwd=tmp_path)
        assert_operator_error(ran, 69, "0099", "does not know")


async def test_database_behind_the_code(tmp_path: Path) -> None:
    """Commands that do not migrate refuse a schema behind the code (and say what to run); ``db
    upgrade`` then brings it to the head and they work."""
    if ON_POSTGRES:
        name = f"tx_behind_{secrets.token_hex(4)}"
        await _pg_admin(PG_URL, f'CREATE DATABASE "{name}"')
        url = _server(name, password=None)
    else:
        url = f"sqlite:///{tmp_path / 'behind.sqlite3'}"
    try:
        env = operator_env(url)
        empty = await transfers(*CLIENT, env=env, cwd=tmp_path)
        assert_operator_error(empty, 69, "no schema yet", "transfers db upgrade")
        upgrade(async_url(url), "0004")
        for args in [CLIENT, ("worker", "--once", "--wait-for-db", "0")]:
            behind = await transfers(*args, env=env, cwd=tmp_path)
            assert_operator_error(behind, 69, "at migration 0004", "transfers db upgrade")
        assert (await transfers("db", "upgrade", env=env, cwd=tmp_path)).returncode == 0
        created = await transfers(*CLIENT, env=env, cwd=tmp_path)
        assert created.returncode == 0, created.show()
    finally:
        if ON_POSTGRES:
            await _pg_admin(PG_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def test_bad_settings_are_reported_together_before_anything_starts(tmp_path: Path) -> None:
    env = operator_env(
        f"mysql://root:{PASSWORD}@db.example.com/transfers", partner_timeout_seconds="abc", sandbox_partner="maybe"
    )
    for args in [("serve", "--port", str(free_port())), CLIENT, ("worker",)]:
        ran = await transfers(*args, env=env, cwd=tmp_path)
        stderr = assert_operator_error(
            ran,
            2,
            "TRANSFERS_DATABASE_URL='mysql://root:***@db.example.com/transfers'",
            "TRANSFERS_PARTNER_TIMEOUT_SECONDS='abc': expected a number",
            "TRANSFERS_SANDBOX_PARTNER='maybe'",
            hidden=(PASSWORD,),
        )
        assert len(stderr.splitlines()) == 3
    assert not (tmp_path / "var").exists()  # nothing started: no SQLite file, no generated key
    helped = await transfers("serve", "--help", env=env, cwd=tmp_path)  # help needs no settings
    assert helped.returncode == 0 and "--wait-for-db" in helped.stdout, helped.show()


async def test_live_refusals_say_what_to_set(tmp_path: Path) -> None:
    env = operator_env(
        f"sqlite:///{tmp_path / 'live.sqlite3'}",
        environment="live",
        secret_key="",
        allow_private_partner_urls="1",
        allow_private_webhook_urls="0",
        sandbox_partner="1",
    )
    ran = await transfers("serve", "--port", str(free_port()), env=env, cwd=tmp_path)
    stderr = assert_operator_error(
        ran,
        2,
        "TRANSFERS_SECRET_KEY is required",
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS=1",
        "TRANSFERS_SANDBOX_PARTNER=1",
    )
    assert len(ran.error_lines) == 3 and stderr.count("unset it") == 2
    # The webhooks' own guard (docs/rules/webhooks.md#private-addresses) cannot be lifted in live either.
    env.update(TRANSFERS_SECRET_KEY="k" * 32, TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS="0", TRANSFERS_SANDBOX_PARTNER="0")
    env["TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS"] = "1"
    ran = await transfers("serve", "--port", str(free_port()), env=env, cwd=tmp_path)
    assert_operator_error(ran, 2, "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS=1")
    assert len(ran.error_lines) == 1


async def test_redis_on_a_closed_port(fresh_db: FreshDatabase, tmp_path: Path) -> None:
    closed = free_port()
    env = operator_env(fresh_db.url, redis_url=f"redis://:{PASSWORD}@127.0.0.1:{closed}/0")
    ran = await transfers("serve", "--port", str(free_port()), "--wait-for-db", "0", env=env, cwd=tmp_path)
    assert_operator_error(ran, 69, f"Redis redis://:***@127.0.0.1:{closed}/0 unreachable", hidden=(PASSWORD,))


async def test_unknown_revision_is_one_line(fresh_db: FreshDatabase, tmp_path: Path) -> None:
    ran = await transfers("db", "upgrade", "--revision", "bogus", env=operator_env(fresh_db.url), cwd=tmp_path)
    assert_operator_error(ran, 2, "--revision bogus", "'bogus'")


async def test_unexpected_errors_are_one_line_with_an_id_and_the_traceback_in_the_log(tmp_path: Path) -> None:
    """A SQLite file that is not a database: nothing the service anticipates."""
    broken = tmp_path / "not-a-database.sqlite3"
    broken.write_bytes(b"this is not an SQLite file" * 200)
    env = operator_env(f"sqlite:///{broken}")
    ran = await transfers(*CLIENT, env=env, cwd=tmp_path)
    stderr = assert_operator_error_with_log(ran)
    error_id = stderr.split("error id ", 1)[1].split(":", 1)[0]
    logged = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    (entry,) = [e for e in logged if e.get("event") == "unexpected_error"]
    assert entry["error_id"] == error_id and "Traceback" in entry["exception"]
    for shown in [
        await transfers("--debug", *CLIENT, env=env, cwd=tmp_path),
        await transfers(*CLIENT, "--debug", env=env, cwd=tmp_path),
        await transfers(*CLIENT, env={**env, "TRANSFERS_LOG_LEVEL": "DEBUG"}, cwd=tmp_path),
    ]:
        assert shown.returncode == 1 and "Traceback" in shown.stderr, shown.show()
        assert "file is not a database" in shown.stderr


def assert_operator_error_with_log(ran: Ran) -> str:
    """Like ``assert_operator_error`` (exit 1), except that stdout, the log, holds the traceback."""
    assert ran.returncode == 1, ran.show()
    assert len(ran.error_lines) == 1 and "Traceback" not in ran.stderr, ran.show()
    assert ran.error_lines[0].startswith("error: unexpected DatabaseError (error id "), ran.show()
    return ran.stderr


async def test_debug_shows_the_traceback_of_an_infrastructure_error(tmp_path: Path) -> None:
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{free_port()}/transfers"
    ran = await transfers("--debug", *CLIENT, env=operator_env(url), cwd=tmp_path)
    assert ran.returncode == 69 and "Traceback" in ran.stderr, ran.show()
    assert ran.error_lines[-1].startswith("error: database postgresql://postgres:***@127.0.0.1:")


@pytest.fixture
async def password_cluster() -> AsyncIterator[PrivateCluster]:
    """A PostgreSQL cluster of the test's own whose TCP logins need a password (scram-sha-256;
    the shared server trusts every login from 127.0.0.1, where a wrong password would be accepted)."""
    if os.geteuid() != 0 or not (PG_BIN / "initdb").exists() or shutil.which("runuser") is None:
        pytest.skip("needs root, runuser and PostgreSQL 15 server binaries for a private cluster")
    port = free_port()
    root = Path(tempfile.mkdtemp(prefix="transfers-pgpw-", dir="/tmp"))
    owner = pwd.getpwnam("postgres")
    os.chown(root, owner.pw_uid, owner.pw_gid)
    cluster = PrivateCluster(root, port)
    try:
        rc, output = await run_cmd(
            "runuser",
            "-u",
            "postgres",
            "--",
            str(PG_BIN / "initdb"),
            "-D",
            str(cluster.data),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-U",
            "postgres",
            "--no-sync",
            "--no-instructions",
            "-E",
            "UTF8",
            "--locale=C",
        )
        assert rc == 0, output
        await cluster.start()
        rc, output = await run_cmd(
            str(PG_BIN.parent / "bin" / "psql"),
            "-h",
            str(root),
            "-p",
            str(port),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            "ALTER ROLE postgres PASSWORD 'right-pw'",
        )
        assert rc == 0, output
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            await cluster.stop_immediate()
        shutil.rmtree(root, ignore_errors=True)


async def test_wrong_password(password_cluster: PrivateCluster, tmp_path: Path) -> None:
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{password_cluster.port}/postgres"
    for args in _commands(free_port()):
        ran = await transfers(*args, env=operator_env(url), cwd=tmp_path)
        assert_operator_error(ran, 69, "refused the login", "password authentication failed", hidden=(PASSWORD,))
    right = f"postgresql://postgres:right-pw@127.0.0.1:{password_cluster.port}/postgres"
    ran = await transfers(*CLIENT, env=operator_env(right), cwd=tmp_path)
    assert_operator_error(ran, 69, "no schema yet", hidden=("right-pw",))  # the login itself was accepted


async def test_a_busy_port_is_one_line_before_anything_starts(
    fresh_db: FreshDatabase, procs: Processes, tmp_path: Path
) -> None:
    """A second ``transfers serve`` (``make run``) on the port the first one serves
    says so in one line, exit 69, before it migrates, starts a worker or reports a startup; an
    address this machine does not have is a usage error (exit 2)."""
    first = await procs.serve("first", operator_env(fresh_db.url))
    assert first.port is not None
    untouched = tmp_path / "second.sqlite3"
    env = operator_env(f"sqlite:///{untouched}")
    second = await transfers("serve", "--port", str(first.port), env=env, cwd=tmp_path)
    assert_operator_error(second, 69, f"127.0.0.1:{first.port} is already in use", "--port")
    assert "startup" not in second.stdout.lower() and "worker" not in second.stdout.lower(), second.show()
    assert not untouched.exists()  # no migration ran
    foreign = await transfers("serve", "--host", "192.0.2.1", "--port", str(free_port()), env=env, cwd=tmp_path)
    assert_operator_error(foreign, 2, "cannot listen on 192.0.2.1", "--host")
    assert not untouched.exists()
    async with httpx.AsyncClient() as client:  # the first one is still serving
        assert (await client.get(f"http://127.0.0.1:{first.port}/healthz")).status_code == 200
