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
