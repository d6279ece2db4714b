"""``bookings.status`` is written under ``src/transfers/bookings/`` only (issue 12: lifecycle is the
only status writer, in fact). A scan of the source, not of behaviour: it fails on

* ``insert(bookings)`` anywhere else (a new row has a status);
* ``update(bookings)`` whose statement chain sets ``status`` (``.values(status=...)`` or a dict
  with a ``"status"`` key), or sets values from a dict/variable it cannot see into;
* SQL text (``text(...)``, ``exec_driver_sql``) that inserts into ``bookings`` or updates its status.

The migrations are left out: they create and seed the schema, not bookings.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "transfers"
ALLOWED = SRC / "bookings"
SKIPPED = (SRC / "migrations",)
_RAW = re.compile(r"\binsert\s+into\s+bookings\b|\bupdate\s+bookings\b[^;]*\bset\b[^;]*\bstatus\b",
                  re.IGNORECASE | re.DOTALL)


def _is_bookings(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "bookings") or (
        isinstance(node, ast.Attribute) and node.attr == "bookings")


def _dml_on_bookings(node: ast.AST) -> str | None:
    """"insert"/"update" when ``node`` is ``insert(bookings)`` / ``update(bookings)`` (any spelling)."""
    if isinstance(node, ast.Call) and node.args and _is_bookings(node.args[0]):
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in ("insert", "update"):
            return name
    return None


def _sets_status(values: ast.Call) -> bool:
    if any(k.arg == "status" or k.arg is None for k in values.keywords):  # status=..., **spread
        return True
    for arg in values.args:
        if isinstance(arg, ast.Dict):
            if any(k is None or (isinstance(k, ast.Constant) and k.value == "status") for k in arg.keys):
                return True
        else:
            return True  # a mapping built elsewhere: it may hold "status"
    return False


def status_writes(tree: ast.AST) -> list[int]:
    """Line numbers of the status writes in one module."""
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _RAW.search(node.value):
            found.append(node.lineno)
        kind = _dml_on_bookings(node)
        if kind == "insert":
            found.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "values":
            # walk down the chain ``update(bookings).where(...).values(...)`` to its root call
            root: ast.AST = node.func.value
            while (isinstance(root, ast.Call) and _dml_on_bookings(root) is None
                   and isinstance(root.func, ast.Attribute)):
                root = root.func.value
            if _dml_on_bookings(root) == "update" and _sets_status(node):
                found.append(node.lineno)
    return sorted(set(found))


def scan(root: Path) -> list[str]:
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.is_relative_to(ALLOWED) or any(path.is_relative_to(s) for s in SKIPPED):
            continue
        for line in status_writes(ast.parse(path.read_text(), str(path))):
            offenders.append(f"{path.relative_to(root)}:{line}")
    return offenders


def test_only_bookings_package_writes_booking_status() -> None:
    # In a process of its own: after the API tests have run in this process, CPython 3.11.7's
    # ast.parse raised "SystemError: AST constructor recursion depth mismatch" on db/tables.py
    # (seen on PostgreSQL runs after tests/api/test_booking_validation.py); a fresh process does not.
    done = subprocess.run([sys.executable, __file__],  # noqa: S603 (our own interpreter and file)
                          capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout) == [], \
        "bookings.status is written outside src/transfers/bookings/ (go through lifecycle)"


@pytest.mark.parametrize("source", [
    "update(bookings).where(bookings.c.id == 1).values(status='CANCELLED')",
    "sa.update(tables.bookings).values({'status': 'CANCELLED', 'updated_at': now})",
    "update(bookings).where(x).values(values)",
    "insert(bookings).values(row)",
    "insert(bookings).from_select(cols, q)",
    "conn.exec_driver_sql('UPDATE bookings SET status = $1 WHERE id = $2')",
    "text('insert into bookings (status) values (:s)')",
])
def test_the_scan_sees_a_status_write(source: str) -> None:
    assert status_writes(ast.parse(source)) == [1]


@pytest.mark.parametrize("source", [
    "update(bookings).where(bookings.c.id.in_(q)).values(synced_at=now)",
    "update(outbox).values(status='delivered')",
    "select(bookings).where(bookings.c.status == 'APPROVED')",
    "text('UPDATE bookings SET synced_at = now()')",
])
def test_the_scan_leaves_other_writes_alone(source: str) -> None:
    assert status_writes(ast.parse(source)) == []


if __name__ == "__main__":
    print(json.dumps(scan(SRC)))
