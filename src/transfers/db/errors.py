"""Which exceptions mean "the database cannot be reached" (answered 503, never 500)."""

from __future__ import annotations

from sqlalchemy import exc as sa_exc


def is_database_unavailable(error: BaseException) -> bool:
    if isinstance(error, sa_exc.TimeoutError):  # connection pool exhausted for pool_timeout
        return True
    if isinstance(error, sa_exc.DBAPIError):
        if error.connection_invalidated:
            return True
        if isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError):
            return True
        orig = getattr(error, "orig", None)
        name = type(orig).__name__ if orig is not None else ""
        return name in {"CannotConnectNowError", "ConnectionDoesNotExistError", "AdminShutdownError",
                        "ConnectionFailureError", "TooManyConnectionsError"}
    return isinstance(error, ConnectionError | TimeoutError | OSError)
