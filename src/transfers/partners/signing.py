"""Standard Webhooks signatures on every call the service makes to a partner (docs/rules/partners.md#signatures).

``webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>``
where ``key`` is the base64-decoded part of the partner's ``whsec_...`` signing secret.
Partners verify with ``transfers.partners.verify_example`` (dependency-free, meant to be copied).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Sequence
from functools import lru_cache

SECRET_PREFIX = "whsec_"  # noqa: S105 (a format marker, not a secret)


def new_signing_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


@lru_cache(maxsize=1024)
def _key(secret: str) -> bytes:
    """Decoded once per secret: a 10-partner search signs ten calls (bench/README.md, "Profile")."""
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_headers(
    secret: str, body: bytes, webhook_id: str | None = None, timestamp: int | None = None, also: Sequence[str] = ()
) -> dict[str, str]:
    """``also``: further secrets to sign with (the previous one during a rotation's overlap, issue
    13); Standard Webhooks carries every signature in the one header, space-separated, the
    current secret's first, and a receiver accepts the call when any of them verifies."""
    wid = webhook_id or f"msg_{os.urandom(16).hex()}"  # 32 hex digits, as uuid4().hex gave
    ts = int(time.time()) if timestamp is None else timestamp
    signature = sign(secret, wid, ts, body)
    if also:
        signature = " ".join([signature, *(sign(other, wid, ts, body) for other in also)])
    return {
        "webhook-id": wid,
        "webhook-timestamp": str(ts),
        "webhook-signature": signature,
    }


def verify(
    secret: str, headers: dict[str, str], body: bytes, *, tolerance_seconds: int = 300, now: int | None = None
) -> bool:
    """True when one of the ``v1`` signatures matches and the timestamp is within tolerance."""
    wid = headers.get("webhook-id")
    ts_raw = headers.get("webhook-timestamp")
    sig_header = headers.get("webhook-signature")
    if not wid or not ts_raw or not sig_header or not ts_raw.isdigit():
        return False
    ts = int(ts_raw)
    current = int(time.time()) if now is None else now
    if abs(current - ts) > tolerance_seconds:
        return False
    expected = sign(secret, wid, ts, body).split(",", 1)[1]
    for candidate in sig_header.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False
