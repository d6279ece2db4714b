"""Opaque keyset cursors over one row id, bound to the client and to the list they page (the
wallet statement, the webhook delivery log: docs/rules/wallet.md, docs/rules/webhooks.md).

Every cursor the service issues is sealed here (``seal``/``unseal``; the booking list's
``(created_at, id)`` cursor in ``bookings/client_queries.py`` too): base64url of the position with an HMAC
tag keyed by the deployment's secret, so an edited, truncated, foreign or other-list cursor is
refused with ``INVALID_CURSOR`` instead of silently starting somewhere else. The ``limit`` rule
(1..100, default 20) is shared the same way. Pages are newest first by id; the next page starts
strictly below the cursor's id.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from datetime import UTC, datetime
from typing import Protocol

from transfers.errors import ErrorCode, Invalid

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_CURSOR_CHARS = 200
_VERSION = "1"
_TAG_BYTES = 16


class KeySource(Protocol):
    """Where a cursor's key comes from: the deployment's secret (``partners/secrets_box.SecretBox``),
    one key derived per list, so a cursor of one list is refused by another."""

    def derive(self, purpose: str) -> bytes: ...


def invalid_filter(message: str) -> Invalid:
    return Invalid(ErrorCode.INVALID_FILTER, message)


def parse_instant(name: str, value: str | None) -> datetime | None:
    """A date-time filter (``created_from``, ``pickup_to``, ...): ISO 8601 with an offset, in UTC;
    ``INVALID_FILTER`` otherwise (the booking list and the wallet statement read them alike)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        raise invalid_filter(
            f"{name} must be an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z "
            "(in a URL, write the + of an offset as %2B)."
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise invalid_filter(f"{name} must carry a UTC offset, e.g. 2026-12-01T00:00:00Z or +01:00.")
    return moment.astimezone(UTC)


def parse_limit(value: str | None) -> int:
    """``limit`` 1..100, default 20, ASCII digits only (``INVALID_FILTER`` otherwise)."""
    if value is None:
        return DEFAULT_LIMIT
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_LIMIT:
        raise invalid_filter(f"limit must be an integer from 1 to {MAX_LIMIT}.")
    return int(value)


def seal(key: bytes, owner: int, payload: str) -> str:
    """``payload`` (ASCII, the position) as an opaque cursor: base64url of ``payload|tag``, the tag an
    HMAC of the owner and the payload under ``key``, so a cursor only works for whom it was issued.
    Shared by every list the service pages (this module's id cursors, the booking list's)."""
    raw = payload.encode() + b"|" + _tag(key, owner, payload)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unseal(key: bytes, owner: int, cursor: str) -> str | None:
    """The payload ``seal`` put in ``cursor``, or None when it is not a cursor sealed with ``key`` for
    ``owner`` (empty, too long, not base64url, edited, truncated, foreign); the caller reads the
    payload and answers ``INVALID_CURSOR`` for None."""
    if not cursor or len(cursor) > MAX_CURSOR_CHARS or not cursor.isascii():
        return None
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None
    body, sep, tag = raw[: -_TAG_BYTES - 1], raw[-_TAG_BYTES - 1 : -_TAG_BYTES], raw[-_TAG_BYTES:]
    try:
        payload = body.decode("ascii")
    except UnicodeDecodeError:
        return None
    if sep != b"|" or not hmac.compare_digest(tag, _tag(key, owner, payload)):
        return None
    return payload


def _tag(key: bytes, owner: int, payload: str) -> bytes:
    return hmac.new(key, f"{owner}|{payload}".encode(), hashlib.sha256).digest()[:_TAG_BYTES]


def encode(box: KeySource, purpose: str, owner: int, last_id: int) -> str:
    return seal(box.derive(f"cursor:{purpose}"), owner, f"{_VERSION}|{last_id}")


def decode(box: KeySource, purpose: str, owner: int, cursor: str | None) -> int | None:
    """The id the next page starts below, None without a cursor; ``INVALID_CURSOR`` when it is not
    one this service issued to ``owner`` for ``purpose``."""
    if cursor is None:
        return None
    payload = unseal(box.derive(f"cursor:{purpose}"), owner, cursor)
    if payload is None:
        raise Invalid(ErrorCode.INVALID_CURSOR)
    version, _, id_text = payload.partition("|")
    if version != _VERSION or not id_text.isdigit():
        raise Invalid(ErrorCode.INVALID_CURSOR)
    return int(id_text)
