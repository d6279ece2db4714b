"""Which exceptions mean "the database cannot be reached" (answered 503, never 500)."""

from __future__ import annotations

from sqlalchemy import exc as sa_exc

# SQLSTATEs of a server that is there but will not serve us right now. Class 08 (connection
# exception) is matched as a whole.
UNAVAILABLE_SQLSTATES = frozenset(
    {
        "57P01",  # admin_shutdown: terminating connection due to administrator command
        "57P02",  # crash_shutdown
        "57P03",  # cannot_connect_now: the database system is starting up / shutting down / in recovery
        "53300",  # too_many_connections
    }
)
UNAVAILABLE_DRIVER_ERRORS = frozenset(
    {
        "CannotConnectNowError",
        "ConnectionDoesNotExistError",
        "AdminShutdownError",
        "CrashShutdownError",
        "ConnectionFailureError",
        "TooManyConnectionsError",
    }
)
_MAX_CAUSES = 5


def is_database_unavailable(error: BaseException) -> bool:
    if isinstance(error, sa_exc.TimeoutError):  # connection pool exhausted for pool_timeout
        return True
    if isinstance(error, sa_exc.DBAPIError):
        if error.connection_invalidated:
            return True
        if isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError):
            return True
        return _driver_says_unavailable(error.orig)
    # The direct path (db/direct.py) meets asyncpg's own exceptions, not SQLAlchemy's wrappers.
    return isinstance(error, ConnectionError | TimeoutError | OSError) or _driver_says_unavailable(error)


def _driver_says_unavailable(orig: BaseException | None) -> bool:
    """SQLAlchemy's asyncpg adapter re-raises driver errors as its own generic ``Error`` (a plain
    DBAPIError, not an OperationalError) that keeps the SQLSTATE and chains the asyncpg exception
    as ``__cause__``: e.g. "the database system is starting up" while PostgreSQL restarts. Look at
    both, so those are 503 and not 500."""
    current = orig
    for _ in range(_MAX_CAUSES):
        if current is None:
            return False
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str) and (state.startswith("08") or state in UNAVAILABLE_SQLSTATES):
            return True
        if type(current).__name__ in UNAVAILABLE_DRIVER_ERRORS:
            return True
        if type(current).__name__ == "InterfaceError" and "connection is closed" in str(current):
            return True  # asyncpg, on a connection the server closed under it (the direct path)
        current = current.__cause__
    return False
