"""tests/unit holds the pure tests: ``make test-fast`` runs them (``pytest tests/unit -m "not process"``).

Pure means no database, no server, no browser and no child process, so the inner loop stays within
seconds and needs nothing running. That is checked here, not trusted: while a unit test that is not
marked ``process`` runs, a Python audit hook refuses to start a process, to open a network
connection or an SQLite file, and the test fails saying which. A unit test that needs one of these
is marked ``process`` (and then runs in ``make test`` only), or belongs in tests/integration.

The source scans (where SQL lives, who writes ``bookings.status``, imports, asserts, the error tree)
are pure: they parse and import code in this process (tests/source_facts.py), so they run before every
landing.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

# Audit events (https://docs.python.org/3/library/audit_events.html) a pure test never raises.
IMPURE_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "socket.connect",
        "sqlite3.connect",
    }
)
_guarded: list[str] = []  # the node id of the pure test running now (empty: none)


class ImpureTestError(RuntimeError):
    pass


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _guarded and event in IMPURE_EVENTS:
        # Unix sockets stay allowed: asyncio's self-pipe and the like are not "a server".
        if event == "socket.connect" and not isinstance(args[1], tuple):
            return
        raise ImpureTestError(
            f"{_guarded[0]} is in tests/unit (pure: make test-fast) but raised the audit event {event!r}: "
            "mark it pytest.mark.process, or move it to tests/integration"
        )


sys.addaudithook(_audit)  # hooks cannot be removed; _guarded switches it on per test


UNIT = Path(__file__).resolve().parent


def _is_unit(item: pytest.Item) -> bool:
    # This conftest's hooks see the items of the whole session, not only tests/unit's.
    return item.path.resolve().is_relative_to(UNIT)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    pure = _is_unit(item) and item.get_closest_marker("process") is None
    if pure:
        _guarded.append(item.nodeid)
    try:
        return (yield)
    finally:
        if pure:
            _guarded.clear()
