"""SQL lives in repositories (docs/architecture/index.md#source-scans): in every package of
``src/transfers`` (found by walking the source: a package added tomorrow is scanned without
editing this file), a module that builds a statement is a repository, named so a reader finds it:
``repository.py``, ``*_repository.py``, ``queries.py`` or ``*_queries.py``. A column change is then
made in one place, and a use case, a route, a job or a CLI command reads as what it decides.

Building a statement means importing SQLAlchemy's SQL (``import sqlalchemy``, ``from sqlalchemy
import ...``, ``sqlalchemy.sql``, a dialect), importing a table of ``transfers.db.tables``, or writing
SQL text (a string that starts ``SELECT``/``INSERT INTO``/``UPDATE ... SET``/``DELETE FROM``/``WITH``).
Taking a connection, catching ``IntegrityError`` or parsing a database URL is not
(``sqlalchemy.ext.asyncio``, ``sqlalchemy.exc``, ``sqlalchemy.engine``), nor is a column's size
constant from ``transfers.db.tables``. The exemptions are listed below, each with its reason; one
that no longer holds fails too.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table

from tests.source_facts import Facts, files_under, snippet_facts

SOURCE = Path(__file__).resolve().parents[2] / "src" / "transfers"
HOME = re.compile(r"(^|_)(repository|queries)\.py$")
NOT_SQL = ("sqlalchemy.ext.asyncio", "sqlalchemy.exc", "sqlalchemy.engine")
# Packages (below transfers) where SQL is at home, and why.
SQL_PACKAGES = {
    "db": "the database layer itself: the tables, their types, the engine and the direct statements",
    "migrations": "Alembic's scripts: the schema's history",
}
# Modules (paths below src/transfers, or a glob of them) that build statements outside a repository.
EXEMPT = {
    # The frozen PostgreSQL fast statements (docs/architecture/reliability.md): the booking row's
    # INSERT or UPDATE, and the side effects' rows (computed in Python, bookings/effect_rows.py) bound
    # as parameters of the same statement.
    "bookings/fast_paths.py": "the frozen fast statements: the booking row's INSERT or UPDATE and its gating",
    "bookings/fast_rows.py": "the side effects' rows as CTEs of the frozen fast statements, bound as parameters",
    "delivery/statement_pieces.py": "the outbox's fragments of the frozen fast statements",
    # Larger moves, left for now (each is a module of queries by another name):
    "delivery/operators.py": "the operators' queries and retries of the delivery queue",
    "webhooks/operators.py": "the operators' queries and retries of the webhook deliveries",
    "accounting/check.py": "`transfers ledger check`: each of the books' invariants is one aggregate query",
    # The doctor's probes of the database server itself: no table of ours.
    "ops/doctor.py": "the doctor's probes of the server (its clock, its connections)",
    "ops/database.py": "Alembic's version table, read to say whether migrations are due",
}


def _is_table(module: str, name: str) -> bool:
    value: Any = getattr(importlib.import_module(module), name, None)
    return isinstance(value, Table) or (module == "transfers.db" and name == "tables")


def sql_lines(facts: Facts) -> list[str]:
    """``line what`` for each statement-building import and each SQL text of one module."""
    found = []
    for imp in facts.imports:
        if imp.type_checking or imp.level:
            continue
        if imp.top == "sqlalchemy" and not imp.module.startswith(NOT_SQL):
            found.append(f"{imp.line} {'from ' + imp.module if imp.from_import else 'import ' + imp.module}")
        elif imp.module.startswith("transfers.db.tables") or (imp.module == "transfers.db" and "tables" in imp.names):
            tables = [n for n in imp.names if _is_table(imp.module, n)] if imp.from_import else ["*"]
            if tables:
                found.append(f"{imp.line} {imp.module} {', '.join(tables)}")
    found += [f"{line} SQL text" for line in facts.sql_texts]
    return found


def offenders(root: Path) -> tuple[dict[str, list[str]], set[str]]:
    """Every module under ``root`` that builds a statement outside a repository (``path: [line what]``),
    and the ``EXEMPT`` entries that were used."""
    found: dict[str, list[str]] = {}
    used: set[str] = set()
    for path, facts in files_under(root):
        relative = path.relative_to(root)
        if relative.parts[0] in SQL_PACKAGES or HOME.search(relative.name):
            continue
        lines = sql_lines(facts)
        if not lines:
            continue
        exempt = [pattern for pattern in EXEMPT if relative.match(pattern)]
        if exempt:
            used.update(exempt)
        else:
            found[str(relative)] = lines
    return found, used


def test_sql_lives_in_repositories() -> None:
    found, used = offenders(SOURCE)
    assert found == {}, (
        "SQL outside a repository: move the statement into the package's repository.py (or "
        "*_repository.py / *queries.py) and call it from here"
    )
    assert set(EXEMPT) - used == set(), "no SQL left there: take it out of EXEMPT in tests/unit/test_sql_homes.py"


TOMORROW = {
    "db/tables.py": "from sqlalchemy import Table\n",  # the database layer: at home
    "feature/__init__.py": "",
    "feature/repository.py": "from sqlalchemy import select\nfrom transfers.db.tables import bookings\n",
    "feature/service.py": (
        "from sqlalchemy.ext.asyncio import AsyncConnection\n"  # a connection is no SQL
        "from transfers.db.tables import bookings\n"
        "async def count(conn: AsyncConnection) -> int:\n"
        "    return await conn.scalar('SELECT count(*) FROM x')\n"
    ),
    "feature/rules.py": "from transfers.db.tables.requestlog import MAX_PATH_CHARS\n",  # a size, no table
}


def test_a_package_added_tomorrow_is_scanned(tmp_path: Path) -> None:
    """A source tree built here, with a package no list names: its service's SQL is found."""
    for relative, source in TOMORROW.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(source, encoding="utf-8")
    found, _ = offenders(tmp_path)
    assert found == {"feature/service.py": ["2 transfers.db.tables bookings", "4 SQL text"]}


@pytest.mark.parametrize(
    ("source", "seen"),
    [
        ("import sqlalchemy as sa", True),
        ("from sqlalchemy.sql import expression", True),
        ("from sqlalchemy.dialects.postgresql import insert", True),
        ("from transfers.db import tables", True),
        ("x = '''\n  UPDATE bookings SET status = 1'''", True),
        ("x = 'WITH moved AS (SELECT 1) SELECT 1'", True),
        ("from sqlalchemy.exc import IntegrityError", False),
        ("from sqlalchemy.engine import make_url", False),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sqlalchemy import Select", False),
        ("x = 'Select a partner'", False),
        ("x = 'select * from bookings'", False),  # our SQL is written in capitals; prose is not
    ],
)
def test_the_scan_sees_sql(source: str, seen: bool) -> None:
    assert bool(sql_lines(snippet_facts([source])[0])) is seen
