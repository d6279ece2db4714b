"""API keys: random, shown once, stored as a hash, found by a non-secret prefix.

Format: ``<kind>_<prefix>_<secret>``, e.g. ``tk_3f9a2c7b01de_Vb6...`` where ``kind`` is ``tk`` for a
client key and ``pk`` for a partner's reverse-API key, ``prefix`` is 12 hex characters (48 bits,
unique, safe to log) and ``secret`` is 32 random bytes in URL-safe base64.

The stored hash is SHA-256 of the whole key. A slow password hash (bcrypt, argon2) protects
low-entropy secrets; a 256-bit random key cannot be brute-forced, so a fast hash loses nothing and
keeps authentication off the hot path's profile. Hashes are compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Literal

KeyKind = Literal["tk", "pk"]
_KEY_RE = re.compile(r"(tk|pk)_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")


@dataclass(frozen=True)
class IssuedKey:
    key: str  # the full secret: shown once, never stored
    prefix: str  # e.g. "tk_3f9a2c7b01de": stored, logged, used by `keys revoke`
    key_hash: str


def issue_key(kind: KeyKind) -> IssuedKey:
    prefix = f"{kind}_{secrets.token_hex(6)}"
    key = f"{prefix}_{secrets.token_urlsafe(32)}"
    return IssuedKey(key=key, prefix=prefix, key_hash=hash_key(key))


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_key(key: str) -> tuple[KeyKind, str] | None:
    """Return (kind, prefix) of a well-formed key, or None. Says nothing about validity."""
    match = _KEY_RE.fullmatch(key)
    if match is None:
        return None
    kind: KeyKind = "tk" if match.group(1) == "tk" else "pk"
    return kind, f"{match.group(1)}_{match.group(2)}"


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive)."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token or None


def hashes_match(stored_hash: str, presented_key: str) -> bool:
    return hmac.compare_digest(stored_hash, hash_key(presented_key))
