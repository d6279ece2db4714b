"""Migrations: the session database is at head, its schema is exactly the SQLAlchemy metadata,
upgrading again changes nothing, and ``transfers db upgrade`` builds a fresh SQLite file."""

from __future__ import annotations

import asyncio
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
    kinds = {(d[0], getattr(d[1], "name", None) if d[0] == "add_table" else d[3].name) for d in differences
             if isinstance(d, tuple)}
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


async def test_cli_db_upgrade_on_the_session_database_is_a_no_op(plain_database_url: str, database_url: str,
                                                                 db: Database) -> None:
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
            "SEDAN", "ESTATE", "MINIVAN", "MINIBUS", "BUS", "LUXURY", "ELECTRIC"]
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
        invoke, ["db", "upgrade", "--revision", "no-such-revision"], {"TRANSFERS_DATABASE_URL": f"sqlite:///{path}"})
    assert result.exit_code != 0
    fresh = Database(f"sqlite+aiosqlite:///{path}", pool_size=1)
    try:
        assert await current_revision(fresh) is None
    finally:
        await fresh.dispose()
