"""``paging.seal``/``unseal``: the one envelope of every cursor the service issues (the booking
list's ``(created_at, id)`` and the wallet's and webhook log's id cursors). A cursor opens only
with the key and for the owner it was sealed with; anything else is None (``INVALID_CURSOR``)."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from transfers import paging

KEY = b"k" * 32
PAYLOAD = "1|2026-01-02T03:04:05+00:00|17"


def test_a_sealed_payload_opens_for_its_owner_and_key_only() -> None:
    cursor = paging.seal(KEY, 42, PAYLOAD)
    assert cursor.isascii() and "=" not in cursor and PAYLOAD not in cursor
    assert paging.unseal(KEY, 42, cursor) == PAYLOAD
    assert paging.unseal(KEY, 43, cursor) is None  # another client's cursor
    assert paging.unseal(b"x" * 32, 42, cursor) is None  # another list's cursor


def _edited(cursor: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[2] ^= 1
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


@pytest.mark.parametrize(
    "make",
    [
        lambda c: "",
        lambda c: c[:-1],
        lambda c: c[:-4],
        lambda c: c + "AAAA",
        _edited,
        lambda c: "é" + c,
        lambda c: "*" + c[1:],
        lambda c: "A" * (paging.MAX_CURSOR_CHARS + 1),
        lambda c: base64.urlsafe_b64encode(b"\xff\xfe" + b"|" + b"t" * 16).decode(),
    ],
)
def test_anything_else_is_refused(make: Callable[[str], str]) -> None:
    cursor = paging.seal(KEY, 42, PAYLOAD)
    assert paging.unseal(KEY, 42, make(cursor)) is None
