"""Errors of starting and running the service itself, on the domain error tree (``transfers.errors``):
printed by the CLI as ``error: ...`` lines with their exit code (``cli/errors.py``).

Exit codes follow sysexits(3) where one fits: 2 for bad settings (like a usage error, the command was
never started; also ``serve --host`` naming an address this machine does not have), 69 ``EX_UNAVAILABLE``
when something it needs is not available now: a service (PostgreSQL, Redis) it cannot use, or the port
``serve`` was given, held by another process (stopping that process fixes it; the command is right).
"""

from __future__ import annotations

from transfers.errors import DomainError, Invalid, Unavailable

EX_SETTINGS = 2
EX_UNAVAILABLE = 69
EX_FAILURE = 1


class OperatorError(DomainError):
    """A failure whose message says everything the operator needs; ``lines`` are printed as they are."""

    exit_code = EX_FAILURE

    def __init__(self, *lines: str, exit_code: int | None = None) -> None:
        super().__init__("; ".join(lines))
        self.lines = list(lines)
        if exit_code is not None:
            self.exit_code = exit_code


class SettingsInvalid(OperatorError, Invalid):
    exit_code = EX_SETTINGS


class BackendUnavailable(OperatorError, Unavailable):
    """PostgreSQL or Redis cannot be used (unreachable, refused, missing, schema not this code's)."""

    exit_code = EX_UNAVAILABLE

    def __init__(self, line: str, *, transient: bool = False) -> None:
        super().__init__(line)
        # Worth waiting for (serve/worker --wait-for-db): the server is down, starting, or full.
        self.transient = transient
