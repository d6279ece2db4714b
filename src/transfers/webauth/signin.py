"""sign_in(): the throttles, the password check and a new session, the same for every realm
(webauth/throttle.py: per client address first, then per e-mail and address).

The realm says where its users are through a ``UserLookup``: given the normalised e-mail, the
user's id, password hash and whether the account may sign in (None: no such user)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.observability.metrics import SIGNIN_REFUSED
from transfers.webauth import repository as repo
from transfers.webauth.passwords import check_password
from transfers.webauth.realm import Realm
from transfers.webauth.sessions import OpenedSession, open_session
from transfers.webauth.throttle import (
    ADDRESS_WINDOW,
    address_key,
    address_retry_after,
    delay_seconds,
    locked_until,
)

MAX_EMAIL_CHARS = 320


@dataclass(frozen=True, slots=True)
class Credentials:
    user_id: int
    password_hash: str
    active: bool


UserLookup = Callable[[AsyncConnection, str], Awaitable[Credentials | None]]


class Outcome(StrEnum):
    SIGNED_IN = "signed_in"
    WRONG = "wrong"  # unknown e-mail, wrong password or a disabled account: one answer for all three
    LOCKED = "locked"  # too many failures for this e-mail from this address
    BUSY = "busy"  # too many attempts from this address: answered before anything else


@dataclass(frozen=True, slots=True)
class SignInResult:
    outcome: Outcome
    opened: OpenedSession | None = None
    user_id: int | None = None
    locked_until: datetime | None = None
    retry_after: int | None = None  # BUSY: seconds until the address may try again


def normalise_email(email: str) -> str:
    """Lower-case, trimmed, at most 320 characters, without NULs (PostgreSQL refuses them in text)."""
    return email.replace("\x00", "").strip().lower()[:MAX_EMAIL_CHARS]


async def admit_attempt(db: Database, address: str, now: datetime, limit: int) -> int | None:
    """Count one sign-in attempt from ``address`` (every realm together) if it has had fewer than ``limit``
    this last minute: None when admitted, else the seconds to wait (nothing recorded). A plain read refuses a
    flood without writing; an admission counts again under the address's lock before recording itself,
    so parallel attempts cannot all slip under the limit."""
    since = now - ADDRESS_WINDOW
    async with db.read() as conn:
        wait = address_retry_after(await repo.attempts_since(conn, address, since), now, limit)
    if wait is not None:
        return wait
    async with db.write() as conn:
        await repo.lock_address(conn, address)
        wait = address_retry_after(await repo.attempts_since(conn, address, since), now, limit)
        if wait is None:
            await repo.record_attempt(conn, address, now)
    return wait


async def sign_in(
    db: Database,
    clock: Clock,
    realm: Realm,
    email: str,
    password: str,
    lookup: UserLookup,
    *,
    client_host: str | None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> SignInResult:
    """Refuse an address past its 10 attempts a minute, then a locked e-mail (from this address), both
    without looking at the password; otherwise check the password (argon2, off the event loop); a
    failure is answered after the throttle's delay; a success clears the e-mail's failures from this
    address and opens a session.

    The attempt is recorded as a failure *before* the password is checked, and the lock-out is judged
    on every other recorded attempt, finished or still running: a burst of parallel guesses sees its
    own attempts and is refused past the limit, instead of all being checked against the count read
    before any of them failed. A success deletes that row with the others; a refused (locked) attempt
    deletes its own, so hammering a locked e-mail does not extend its lock."""
    address = address_key(client_host)
    now = clock.now()
    wait = await admit_attempt(db, address, now, realm.attempts_per_address)
    if wait is not None:
        SIGNIN_REFUSED.labels("address").inc()
        return SignInResult(Outcome.BUSY, retry_after=wait)
    key = normalise_email(email)
    since = now - realm.failure_window - realm.lockout
    async with db.write() as conn:
        attempt_id = await repo.record_failure(conn, realm=realm.name, email=key, address=address, now=now)
    async with db.read() as conn:
        failures = await repo.failures_since(conn, realm.name, key, address, since, excluding=attempt_id)
        creds = await lookup(conn, key) if key else None
    until = locked_until(realm, failures, now)
    if until is not None:
        async with db.write() as conn:
            await repo.delete_failure(conn, attempt_id)
        SIGNIN_REFUSED.labels("locked").inc()
        return SignInResult(Outcome.LOCKED, locked_until=until)
    ok = await check_password(creds.password_hash if creds else None, password)
    if not ok or creds is None or not creds.active:
        failures.append(now)
        wait_seconds = delay_seconds(realm, failures, now)
        if wait_seconds:
            await sleep(wait_seconds)
        until = locked_until(realm, failures, now)
        if until is not None:
            return SignInResult(Outcome.LOCKED, locked_until=until)
        return SignInResult(Outcome.WRONG)
    async with db.write() as conn:
        await repo.clear_failures(conn, realm.name, key, address)
        opened = await open_session(conn, realm, creds.user_id, clock.now())
    return SignInResult(Outcome.SIGNED_IN, opened=opened, user_id=creds.user_id)
