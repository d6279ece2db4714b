"""The last resort: an error nobody anticipated is one line for the operator and a full record in
the log, tied together by a short error id."""

from __future__ import annotations

import secrets

from transfers.logging import standalone_logger


def new_error_id() -> str:
    return secrets.token_hex(4)


def log_unexpected(exc: BaseException, *, command: str, log_format: str = "json") -> str:
    """Log ``exc`` with its traceback (structlog, stdout like every other log line); returns the error id."""
    error_id = new_error_id()
    standalone_logger(log_format, "transfers.cli").error(
        "unexpected_error", error_id=error_id, command=command, error_type=type(exc).__name__, exc_info=exc
    )
    return error_id


def one_line(exc: BaseException, error_id: str) -> str:
    return (
        f"unexpected {type(exc).__name__} (error id {error_id}: the log has the details; "
        "rerun with --debug to see the traceback here)"
    )
