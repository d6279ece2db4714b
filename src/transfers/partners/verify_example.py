"""Verify the service's webhook signatures: a dependency-free helper partners can copy as is.

Needs only the Python standard library. The scheme is Standard Webhooks
(https://www.standardwebhooks.com): the service sends

    webhook-id: msg_...                       unique per message, the same on every retry
    webhook-timestamp: 1614265330             Unix seconds when this attempt was signed
    webhook-signature: v1,<base64 signature>  possibly several, separated by spaces

and the signature is ``base64(HMAC-SHA256(key, f"{webhook_id}.{webhook_timestamp}." + raw_body))``
where ``key`` is the base64-decoded part of your signing secret after ``whsec_``. Verify over the
raw body bytes exactly as received (before any JSON parsing), and refuse stale timestamps so a
captured request cannot be replayed later.

Test vector (also in PARTNER_API.md)::

    secret            whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
    webhook-id        msg_p5jXN8AQM9LWM0D4loKWxJek
    webhook-timestamp 1614265330
    body              {"test": 2432232314}
    signature         v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=

>>> verify_webhook(TEST_SECRET, TEST_HEADERS, TEST_BODY, now=TEST_TIMESTAMP)
True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping

TEST_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # noqa: S105 (the public test vector)
TEST_TIMESTAMP = 1614265330
TEST_BODY = b'{"test": 2432232314}'
TEST_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
TEST_HEADERS = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": str(TEST_TIMESTAMP),
    "webhook-signature": TEST_SIGNATURE,
}


def expected_signature(secret: str, webhook_id: str, timestamp: str, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = webhook_id.encode() + b"." + timestamp.encode() + b"." + body
    return base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def verify_webhook(
    secret: str, headers: Mapping[str, str], body: bytes, *, tolerance_seconds: int = 300, now: int | None = None
) -> bool:
    """True when the request is fresh and one of its ``v1`` signatures matches; header names any case."""
    lowered = {name.lower(): value for name, value in headers.items()}
    webhook_id = lowered.get("webhook-id", "")
    timestamp = lowered.get("webhook-timestamp", "")
    signatures = lowered.get("webhook-signature", "")
    if not webhook_id or not (timestamp.isascii() and timestamp.isdigit()) or not signatures:
        return False
    current = int(time.time()) if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        return False
    expected = expected_signature(secret, webhook_id, timestamp, body)
    for candidate in signatures.split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected.encode()):
            return True
    return False
