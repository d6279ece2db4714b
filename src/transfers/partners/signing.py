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
from binascii import b2a_base64
from collections.abc import Sequence
from functools import lru_cache

SECRET_PREFIX = "whsec_"  # noqa: S105 (a format marker, not a secret)


def new_signing_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


@lru_cache(maxsize=1024)
def _keyed(secret: str) -> hmac.HMAC:
    """The HMAC keyed with the secret, before any message: built once per secret and copied per
    call. Building it (decoding the key, padding it, hashing the two pads) was most of a signature's
    cost: 2.9 µs a call, 1.3 µs with the copy (a 10-partner search signs ten calls;
    docs/operations/performance-history.md#search-fifth-pass). A copy never touches the original, so sharing it is
    safe."""
    return hmac.new(base64.b64decode(secret.removeprefix(SECRET_PREFIX)), digestmod=hashlib.sha256)


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    mac = _keyed(secret).copy()
    mac.update(f"{webhook_id}.{timestamp}.".encode())
    mac.update(body)
    return "v1," + b2a_base64(mac.digest(), newline=False).decode()


def webhook_ids(count: int) -> list[str]:
    """``count`` new webhook ids, each as ``signature_headers`` makes one (``msg_`` and 32 random hex
    digits), from one ``os.urandom`` system call instead of one per call (a search's fan-out signs
    one call per partner; docs/operations/performance-history.md#search-seventh-pass)."""
    digits = os.urandom(16 * count).hex()
    return [f"msg_{digits[at : at + 32]}" for at in range(0, 32 * count, 32)]


def signature_headers(
    secret: str,
    body: bytes,
    webhook_id: str | None = None,
    timestamp: int | None = None,
    also: Sequence[str] = (),
    into: dict[str, str] | None = None,
) -> dict[str, str]:
    """``also``: further secrets to sign with (the previous one during a rotation's overlap, issue
    13); Standard Webhooks carries every signature in the one header, space-separated, the
    current secret's first, and a receiver accepts the call when any of them verifies.
    ``into``: the request's other headers, which the three are added to (and returned): the partner
    client's headers are one dict, not two merged per call."""
    wid, ts, signature = signed(secret, body, webhook_id, timestamp, also)
    headers = {} if into is None else into
    headers["webhook-id"] = wid
    headers["webhook-timestamp"] = ts
    headers["webhook-signature"] = signature
    return headers


def signed(
    secret: str, body: bytes, webhook_id: str | None = None, timestamp: int | None = None, also: Sequence[str] = ()
) -> tuple[str, str, str]:
    """The three headers' values (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``) that
    ``signature_headers`` puts in a dict, for a caller that writes them out itself (a search's
    ``CallBatch``)."""
    wid = webhook_id or f"msg_{os.urandom(16).hex()}"  # 32 hex digits, as uuid4().hex gave (``webhook_ids``)
    ts = int(time.time()) if timestamp is None else timestamp
    signature = sign(secret, wid, ts, body)
    if also:
        signature = " ".join([signature, *(sign(other, wid, ts, body) for other in also)])
    return wid, str(ts), signature


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
