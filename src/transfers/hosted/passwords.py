"""Partner users' password hashes: argon2id (memory-hard), verified in constant time.

Kept apart so the portal's sign-in and the CLI share one scheme; it follows the operator
console's choice (DECISIONS 15: "a maintained memory-hard scheme")."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_HASHER = PasswordHasher()


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(stored_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
