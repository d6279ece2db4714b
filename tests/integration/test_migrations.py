"""Migrations: the session database is at head, its schema is exactly the SQLAlchemy metadata,
upgrading again changes nothing, and ``transfers db upgrade`` builds a fresh SQLite file."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from click.testing import CliRunner, Result
from sqlalchemy import Column, Integer, MetaData, String, Table, func, inspect, select
from sqlalchemy.engine import Connection

from tests.invariants import check_wallet_invariants
from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.migrate import alembic_config, upgrade
from transfers.db.tables import (
    cancellation_reasons,
    car_services,
    metadata,
    vehicle_segments,
    vehicle_types,
)

SEEDED_TABLES = (vehicle_types, vehicle_segments, car_services, cancellation_reasons)


def head_revision(database_url: str) -> str:
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    assert head is not None
    return head


async def current_revision(database: Database) -> str | None:
    async with database.engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


async def schema_differences(database: Database, target: MetaData = metadata) -> list[Any]:
    def compare(c: Connection) -> list[Any]:
        context = MigrationContext.configure(c, opts={"compare_type": True, "compare_server_default": False})
        return list(compare_metadata(context, target))

    async with database.engine.connect() as conn:
        return await conn.run_sync(compare)


async def snapshot(database: Database) -> dict[str, Any]:
    """Everything an accidental re-run of a migration would change: tables, columns, seeded rows."""
    async with database.engine.connect() as conn:

        def structure(c: Connection) -> dict[str, list[str]]:
            inspector = inspect(c)
            return {t: sorted(col["name"] for col in inspector.get_columns(t)) for t in inspector.get_table_names()}

        tables = await conn.run_sync(structure)
        seeded = {}
        for table in SEEDED_TABLES:
            seeded[table.name] = [tuple(r) for r in await conn.execute(select(table).order_by(table.c.id))]
        return {"tables": tables, "seeded": seeded}


def invoke(args: list[str], env: dict[str, str]) -> Result:
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, args, env=env)
    finally:
        get_settings.cache_clear()


async def test_session_database_is_at_head(database_url: str, db: Database) -> None:
    head = head_revision(database_url)
    assert await current_revision(db) == head
    # One linear history: every revision reachable from head, no branches.
    script = ScriptDirectory.from_config(alembic_config(database_url))
    assert script.get_heads() == [head]
    assert len(list(script.walk_revisions())) >= 2


async def test_schema_matches_the_metadata(db: Database) -> None:
    assert await schema_differences(db) == []


async def test_the_schema_comparison_would_notice_a_difference(db: Database) -> None:
    """Control case: the comparison above is not vacuous."""
    changed = MetaData()
    for table in metadata.sorted_tables:
        table.to_metadata(changed)
    Table("not_migrated", changed, Column("id", Integer, primary_key=True))
    changed.tables["clients"].append_column(Column("nickname", String(20)))
    differences = await schema_differences(db, changed)
    kinds = {
        (d[0], getattr(d[1], "name", None) if d[0] == "add_table" else d[3].name)
        for d in differences
        if isinstance(d, tuple)
    }
    assert ("add_table", "not_migrated") in kinds
    assert ("add_column", "nickname") in kinds


async def test_upgrading_again_is_a_no_op(database_url: str, db: Database) -> None:
    before = await snapshot(db)
    await asyncio.to_thread(upgrade, database_url)
    await asyncio.to_thread(upgrade, database_url)
    assert await current_revision(db) == head_revision(database_url)
    assert await snapshot(db) == before
    assert await schema_differences(db) == []
    await check_wallet_invariants(db)


async def test_cli_db_upgrade_on_the_session_database_is_a_no_op(
    plain_database_url: str, database_url: str, db: Database
) -> None:
    before = await snapshot(db)
    result = await asyncio.to_thread(invoke, ["db", "upgrade"], {"TRANSFERS_DATABASE_URL": plain_database_url})
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert await snapshot(db) == before
    assert await current_revision(db) == head_revision(database_url)


async def test_cli_db_upgrade_builds_a_fresh_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet" / "there" / "fresh.sqlite3"  # parent directories are created too
    env = {"TRANSFERS_DATABASE_URL": f"sqlite:///{path}"}
    result = await asyncio.to_thread(invoke, ["db", "upgrade"], env)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert result.stdout.strip() == "database at head"
    assert path.is_file()

    fresh = Database(f"sqlite+aiosqlite:///{path}", pool_size=1)
    try:
        assert await current_revision(fresh) == head_revision(str(path))
        assert await schema_differences(fresh) == []
        first = await snapshot(fresh)
        assert set(first["tables"]) == {t.name for t in metadata.sorted_tables} | {"alembic_version"}
        assert [name for _, name, _ in first["seeded"]["vehicle_types"]] == [
            "SEDAN",
            "ESTATE",
            "MINIVAN",
            "MINIBUS",
            "BUS",
            "LUXURY",
            "ELECTRIC",
        ]
        async with fresh.read() as conn:
            reasons = (await conn.execute(select(func.count()).select_from(cancellation_reasons))).scalar_one()
        assert reasons >= 5

        again = await asyncio.to_thread(invoke, ["db", "upgrade"], env)
        assert again.exit_code == 0, (again.stdout, again.stderr, again.exception)
        assert await snapshot(fresh) == first
    finally:
        await fresh.dispose()


async def test_cli_db_upgrade_to_an_unknown_revision_fails(tmp_path: Path) -> None:
    """An unknown revision is refused with a non-zero exit and migrates nothing."""
    path = tmp_path / "other.sqlite3"
    result = await asyncio.to_thread(
        invoke, ["db", "upgrade", "--revision", "no-such-revision"], {"TRANSFERS_DATABASE_URL": f"sqlite:///{path}"}
    )
    assert result.exit_code != 0
    fresh = Database(f"sqlite+aiosqlite:///{path}", pool_size=1)
    try:
        assert await current_revision(fresh) is None
    finally:
        await fresh.dispose()


def _booking_with_history(path: Path) -> None:
    """One booking (every NOT NULL column filled by type) with an audit row pointing at it."""
    from datetime import UTC, datetime
    from decimal import Decimal

    from sqlalchemy import JSON, Boolean, DateTime, Numeric, create_engine, insert

    from transfers.db.tables import booking_transitions, bookings

    def value(column: Column[Any]) -> Any:
        kind = column.type
        if isinstance(kind, JSON):
            return []
        if isinstance(kind, Boolean):
            return False
        if isinstance(kind, DateTime) or getattr(kind, "impl", None).__class__.__name__ == "DateTime":
            return datetime(2026, 11, 22, tzinfo=UTC)
        if isinstance(kind, Numeric) or getattr(kind, "impl", None).__class__.__name__ == "Numeric":
            return Decimal("10.00")
        return 1 if kind.python_type is int else "x"

    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("PRAGMA foreign_keys=ON")
            row = {c.name: value(c) for c in bookings.c if not c.nullable and c.name != "id"}
            row.update(client_id=1, partner_id=1, search_vehicle_id=1, vehicle_make="Ž" * 150)
            booking_id = conn.execute(insert(bookings).values(row).returning(bookings.c.id)).scalar_one()
            conn.execute(
                insert(booking_transitions).values(
                    booking_id=booking_id,
                    to_status="PENDING",
                    actor="test",
                    created_at=datetime(2026, 11, 22, tzinfo=UTC),
                )
            )
    finally:
        engine.dispose()


async def test_0005_widens_vehicle_make_and_model_and_its_downgrade_cuts_long_values(tmp_path: Path) -> None:
    import sqlite3

    from alembic import command

    path = tmp_path / "widen.sqlite3"
    url = f"sqlite+aiosqlite:///{path}"

    def lengths() -> dict[str, int]:
        conn = sqlite3.connect(path)
        try:
            found = {}
            for table in ("search_vehicles", "bookings"):
                for _, name, kind, *_ in conn.execute(f"PRAGMA table_info({table})"):
                    if name in ("make", "model", "vehicle_make", "vehicle_model"):
                        found[name] = int(kind.split("(")[1].rstrip(")"))
            return found
        finally:
            conn.close()

    await asyncio.to_thread(upgrade, url, "0004")
    assert lengths() == {"make": 100, "model": 100, "vehicle_make": 100, "vehicle_model": 100}
    await asyncio.to_thread(upgrade, url)
    assert lengths() == {"make": 200, "model": 200, "vehicle_make": 200, "vehicle_model": 200}
    conn = sqlite3.connect(path)  # a long make stored under 0005, in a search of a real client and partner
    conn.execute("PRAGMA foreign_keys=ON")
    now = "2026-11-22 10:00:00.000000"
    conn.execute("INSERT INTO clients (id, name, pay_type, created_at) VALUES (1, 'c', 'PREPAID', ?)", (now,))
    conn.execute(
        "INSERT INTO partners (id, name, base_url, airports, outbound_token_enc, signing_secret_enc,"
        " created_at) VALUES (1, 'p', 'http://127.0.0.1:1', 'LHR', 'x', 'y', ?)",
        (now,),
    )
    conn.execute(
        "INSERT INTO searches (id, search_id, client_id, request, airport_iata, pickup_at, pickup_location,"
        " dropoff_location, adult, children, infant, created_at, expires_at)"
        " VALUES (1, 's_1', 1, '{}', 'LHR', ?, '{}', '{}', 1, 0, 0, ?, ?)",
        (now, now, now),
    )
    conn.execute(
        "INSERT INTO search_vehicles (search_pk, vehicle_no, partner_id, partner_vehicle_id, make, model,"
        " type, max_passengers, suitcases, small_bags, net_price, sell_price, currency, extras)"
        " VALUES (1, 1, 1, 'v', ?, 'm', 'SEDAN', 1, 0, 0, 100, 100, 'EUR', '[]')",
        ("Ž" * 150,),
    )
    conn.commit()
    conn.close()
    _booking_with_history(path)  # bookings is copied too: rows elsewhere reference it
    await asyncio.to_thread(command.downgrade, alembic_config(url), "0004")
    assert lengths() == {"make": 100, "model": 100, "vehicle_make": 100, "vehicle_model": 100}
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT make FROM search_vehicles").fetchone() == ("Ž" * 100,)
    assert conn.execute("SELECT vehicle_make FROM bookings").fetchone() == ("Ž" * 100,)
    assert conn.execute("SELECT count(*) FROM booking_transitions").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM searches").fetchone() == (1,)  # the copy kept its parents
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


async def test_0022_keys_the_outbox_by_recipient_and_keeps_its_rows(tmp_path: Path) -> None:
    """Migration 0022 on a database with a partner call and an old driver-position push in the outbox
    (both databases): the partner call gets ``partner:<id>`` as its recipient and keeps everything
    else, the position goes (with its attempt), booking and partner become optional, and client
    webhook deliveries become ``client.webhook``; its downgrade takes the schema back."""
    import secrets as random_names
    from datetime import timedelta

    import asyncpg
    from alembic import command
    from sqlalchemy import text

    from tests import ledger_world as world
    from tests.conftest import ON_POSTGRES, PG_URL, ClientFactory
    from transfers.clock import ShiftedClock
    from transfers.config import Settings
    from transfers.partners.secrets_box import SecretBox
    from transfers.partners.service import register_partner

    name = f"tx_0022_{random_names.token_hex(4)}"
    if ON_POSTGRES:
        admin = await asyncpg.connect(PG_URL, timeout=10)
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()
        url = Settings(database_url=PG_URL.rsplit("/", 1)[0] + "/" + name).resolved_database_url
    else:
        url = f"sqlite+aiosqlite:///{tmp_path / 'recipient.sqlite3'}"
    await asyncio.to_thread(upgrade, url)
    database = Database(url)
    try:
        clock = ShiftedClock()
        box = SecretBox(Settings(database_url="sqlite+aiosqlite:///x").secret_key)
        partner = await register_partner(
            database,
            clock,
            box,
            name="Recipient partner",
            base_url="http://127.0.0.1:9",
            airports=("LHR",),
            markup_percent=Decimal("0"),
            allow_private=True,
            actor="tests",
        )
        client_id, _ = await ClientFactory(database, clock)(balance="100.00")
        now = clock.now()
        booking_id = await world.book(
            database, world.values(client_id, partner.partner_id, now, total="10.00", net="9.00"), now
        )
        await database.dispose()
        await asyncio.to_thread(command.downgrade, alembic_config(url), "0021")
        database = Database(url)
        async with database.write() as conn:
            position = (
                await conn.execute(
                    text(
                        "INSERT INTO outbox (booking_id, partner_id, kind, webhook_id, payload, status, attempts,"
                        " next_attempt_at, deadline_at, created_at) VALUES (:b, :p, 'client.driver_position',"
                        " 'msg_old_position', '{}', 'delivered', 1, :now, :later, :now) RETURNING id"
                    ),
                    {"b": booking_id, "p": partner.partner_id, "now": now, "later": now + timedelta(seconds=15)},
                )
            ).scalar_one()
            await conn.execute(
                text(
                    "INSERT INTO delivery_attempts (outbox_id, attempt_no, started_at, duration_ms, outcome)"
                    " VALUES (:o, 1, :now, 3, 'done:ok')"
                ),
                {"o": position, "now": now},
            )
        await database.dispose()
        await asyncio.to_thread(upgrade, url)
        database = Database(url)
        async with database.read() as conn:
            rows = [
                tuple(r)
                for r in await conn.execute(text("SELECT booking_id, partner_id, recipient, kind, status FROM outbox"))
            ]
            attempts = (await conn.execute(text("SELECT count(*) FROM delivery_attempts"))).scalar_one()
        assert rows == [
            (booking_id, partner.partner_id, f"partner:{partner.partner_id}", "booking.create", "delivered")
        ]
        assert attempts == 0  # the position's attempt went with it; the create's was never recorded
        async with database.write() as conn:  # a message about no booking, to no partner
            await conn.execute(
                text(
                    "INSERT INTO outbox (recipient, kind, webhook_id, payload, status, attempts, next_attempt_at,"
                    " deadline_at, created_at) VALUES ('traveller:1:email', 'test.kind', 'msg_t', '{}', 'pending',"
                    " 0, :now, :now, :now)"
                ),
                {"now": now},
            )
        assert await schema_differences(database) == []
        await database.dispose()
        await asyncio.to_thread(command.downgrade, alembic_config(url), "0021")
        database = Database(url)
        async with database.read() as conn:
            kept = [tuple(r) for r in await conn.execute(text("SELECT booking_id, kind FROM outbox"))]
        assert kept == [(booking_id, "booking.create")]  # the message to no partner could not stay
    finally:
        await database.dispose()
        if ON_POSTGRES:
            admin = await asyncpg.connect(PG_URL, timeout=10)
            try:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            finally:
                await admin.close()
