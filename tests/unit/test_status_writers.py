"""``bookings.status`` is written under ``src/transfers/bookings/`` only (lifecycle is the
only status writer, in fact). A scan of the source, not of behaviour: it fails on

* ``insert(bookings)`` anywhere else (a new row has a status);
* ``update(bookings)`` whose statement chain sets ``status`` (``.values(status=...)`` or a dict
  with a ``"status"`` key), or sets values from a dict/variable it cannot see into;
* SQL text (``text(...)``, ``exec_driver_sql``) that inserts into ``bookings`` or updates its status.

The migrations are left out: they create and seed the schema, not bookings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.source_facts import files_under, snippet_facts

SRC = Path(__file__).resolve().parents[2] / "src" / "transfers"
ALLOWED = "bookings"  # the one package that writes it (its lifecycle, in fact)
SKIPPED = ("migrations",)  # the schema's history: creates and seeds tables, never a booking


def scan(root: Path) -> list[str]:
    """``path:line`` of every status write under ``root`` outside ``bookings/``: every package, found
    by walking the source (the scan: tests/source_facts.py)."""
    return [
        f"{path.relative_to(root)}:{line}"
        for path, facts in files_under(root)
        if path.relative_to(root).parts[0] not in (ALLOWED, *SKIPPED)
        for line in facts.status_writes
    ]


def test_only_bookings_package_writes_booking_status() -> None:
    assert scan(SRC) == [], "bookings.status is written outside src/transfers/bookings/ (go through lifecycle)"


def test_a_package_added_tomorrow_is_scanned(tmp_path: Path) -> None:
    """A source tree built here, with a package no list names: its status write is found."""
    for relative, source in {
        "bookings/lifecycle.py": "update(bookings).values(status='CANCELLED')\n",  # at home
        "feature/__init__.py": "",
        "feature/service.py": "x = 1\nsa.update(tables.bookings).values({'status': 'CANCELLED'})\n",
    }.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(source, encoding="utf-8")
    assert scan(tmp_path) == ["feature/service.py:2"]


SEEN = [
    "update(bookings).where(bookings.c.id == 1).values(status='CANCELLED')",
    "sa.update(tables.bookings).values({'status': 'CANCELLED', 'updated_at': now})",
    "update(bookings).where(x).values(values)",
    "insert(bookings).values(row)",
    "insert(bookings).from_select(cols, q)",
    "conn.exec_driver_sql('UPDATE bookings SET status = $1 WHERE id = $2')",
    "text('insert into bookings (status) values (:s)')",
]
LEFT_ALONE = [
    "update(bookings).where(bookings.c.id.in_(q)).values(synced_at=now)",
    "update(outbox).values(status='delivered')",
    "select(bookings).where(bookings.c.status == 'APPROVED')",
    "text('UPDATE bookings SET synced_at = now()')",
]


@pytest.fixture(scope="module")
def scanned() -> dict[str, tuple[int, ...]]:
    """Every snippet's status writes, from one subprocess."""
    snippets = SEEN + LEFT_ALONE
    return {source: facts.status_writes for source, facts in zip(snippets, snippet_facts(snippets), strict=True)}


@pytest.mark.parametrize("source", SEEN)
def test_the_scan_sees_a_status_write(source: str, scanned: dict[str, tuple[int, ...]]) -> None:
    assert scanned[source] == (1,)


@pytest.mark.parametrize("source", LEFT_ALONE)
def test_the_scan_leaves_other_writes_alone(source: str, scanned: dict[str, tuple[int, ...]]) -> None:
    assert scanned[source] == ()
