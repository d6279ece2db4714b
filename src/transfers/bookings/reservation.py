"""Reservation numbers: ``TB-`` and ten characters of an alphabet without look-alikes.

30 symbols (no 0/O, 1/I/L, U) ^ 10 ~ 2^49 values, drawn with ``secrets``: unguessable and not
sequential, short enough to read over the phone. Ownership scoping makes a guess useless anyway.
"""

from __future__ import annotations

import secrets

ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
LENGTH = 10


def new_reservation_no() -> str:
    return "TB-" + "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


MAX_LENGTH = 255  # docs/rules/booking.md#limits: the longest reservation_no a client may send


def could_exist(value: str) -> bool:
    """False for values no booking can carry: over 255 characters, or holding a NUL (which
    PostgreSQL refuses to compare in text). Such values are answered "not found" without a query."""
    return len(value) <= MAX_LENGTH and "\x00" not in value
