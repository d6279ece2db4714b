"""Password hashing: argon2id through argon2-cffi (memory-hard, maintained), with its default cost
parameters (RFC 9106's second recommended set: 64 MiB, 3 passes). Hashes carry their parameters, so
raising them later still verifies old hashes; ``needs_rehash`` tells when to store a new one."""

from __future__ import annotations

import asyncio
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from transfers.observability.metrics import PASSWORD_CHECKS

_HASHER = PasswordHasher()


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    """Verified against when the e-mail is unknown, so an unknown e-mail costs the same time as a wrong
    password (made on first use: hashing costs ~50 ms, not to be paid by every import)."""
    return _HASHER.hash(secrets.token_urlsafe(16))


MAX_PASSWORD_CHARS = 1024  # argon2 takes any length; a bound keeps a sign-in's cost bounded too
MIN_PASSWORD_CHARS = 12


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; False otherwise, also for a missing or malformed hash (the
    same work is done either way)."""
    if len(password) > MAX_PASSWORD_CHARS:
        return False
    try:
        return _HASHER.verify(password_hash or _dummy_hash(), password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


# Sign-in checks run on threads of their own, at most half the machine's cores at once: a burst of
# sign-ins queues here instead of taking every core from the API (argon2 releases the GIL and would).
_CHECKS = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) // 2), thread_name_prefix="password-check")


async def check_password(password_hash: str | None, password: str) -> bool:
    """``verify_password`` off the event loop, on the bounded pool above; counted in
    ``signin_password_checks_total`` (what shows that a refused sign-in hashed nothing)."""
    PASSWORD_CHECKS.inc()
    return await asyncio.get_running_loop().run_in_executor(_CHECKS, verify_password, password_hash, password)


def needs_rehash(password_hash: str) -> bool:
    return _HASHER.check_needs_rehash(password_hash)


def generate_password() -> str:
    """A random password for a new account, shown once: 24 URL-safe characters (~144 bits)."""
    return secrets.token_urlsafe(18)


def password_problem(password: str) -> str | None:
    """Why a chosen password is refused (None: accepted)."""
    if len(password) < MIN_PASSWORD_CHARS:
        return f"a password needs at least {MIN_PASSWORD_CHARS} characters"
    if len(password) > MAX_PASSWORD_CHARS:
        return f"a password has at most {MAX_PASSWORD_CHARS} characters"
    return None
