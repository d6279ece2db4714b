"""Which failures are "the database is unreachable" (503 UNAVAILABLE), including the raw asyncpg
exceptions the direct path (db/direct.py) sees without SQLAlchemy's wrappers."""

from __future__ import annotations

import asyncpg
import pytest

from transfers.db.errors import is_database_unavailable


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.exceptions.TooManyConnectionsError("sorry, too many clients already"),
        ConnectionRefusedError(111, "Connection refused"),
        TimeoutError(),
        asyncpg.exceptions.InterfaceError("cannot call Connection.fetchrow(): connection is closed"),
    ],
)
def test_unreachable(error: BaseException) -> None:
    assert is_database_unavailable(error)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.UniqueViolationError("duplicate key value"),
        asyncpg.exceptions.UndefinedColumnError("column does not exist"),
        ValueError("not a database error"),
        asyncpg.exceptions.InterfaceError("cannot perform operation: another operation is in progress"),
    ],
)
def test_not_unreachable(error: BaseException) -> None:
    assert not is_database_unavailable(error)
