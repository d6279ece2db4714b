"""Failpoints for crash tests (RELIABILITY-TESTS.md section 0): die at an exact, named spot.

``TRANSFERS_FAILPOINTS="booking.after_commit=exit"`` (comma-separated ``name=action`` pairs) makes
the process end with ``os._exit(137)`` when it reaches ``hit("booking.after_commit")``: the same
as ``kill -9`` at that point (nothing is flushed, no finally block runs). ``exit`` is the only
action. Unset, as in production, ``hit`` is one lookup in an empty dict.

Named spots: ``booking.after_commit`` (booking, debit and outbox row committed; nothing answered
yet), ``booking.before_response`` (the immediate partner attempt done), ``cancel.after_commit``
(cancellation and refund committed), ``outbox.after_send`` (the partner has answered; the answer is
not recorded yet).

The variable is read here, once, rather than through Settings: this is a test hook that must be
reachable from code that has no Settings at hand, and it must never be set in a deployment.
"""

from __future__ import annotations

import os
from functools import lru_cache

EXIT_CODE = 137  # what a shell reports for a process killed by SIGKILL


@lru_cache(maxsize=1)
def armed() -> dict[str, str]:
    spec = os.environ.get("TRANSFERS_FAILPOINTS", "")
    points: dict[str, str] = {}
    for item in spec.split(","):
        name, _, action = item.strip().partition("=")
        if name:
            points[name] = action or "exit"
    return points


def hit(name: str) -> None:
    """Act on the failpoint ``name`` if it is armed."""
    if armed().get(name) == "exit":
        os.write(2, f"failpoint {name}: exit {EXIT_CODE}\n".encode())
        os._exit(EXIT_CODE)
