"""Server-side sessions: the cookie holds a random token, the database holds only its SHA-256 with
the user, the session's CSRF token and its times. So any process serves any signed-in person, and
ending a session (sign out, an account disabled) takes effect on every process at once."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.webauth import repository as repo
from transfers.webauth.realm import Realm

TOUCH_EVERY = timedelta(minutes=1)  # last_seen_at is written at most this often (one write per page otherwise)
MAX_TOKEN_CHARS = 100


@dataclass(frozen=True, slots=True)
class Session:
    session_id: int
    realm: str
    user_id: int
    csrf_token: str
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class OpenedSession:
    token: str  # goes into the cookie; never stored
    session: Session


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def open_session(conn: AsyncConnection, realm: Realm, user_id: int, now: datetime) -> OpenedSession:
    token = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    expires = now + realm.session_lifetime
    await repo.insert_session(
        conn,
        realm=realm.name,
        user_id=user_id,
        token_hash=token_hash(token),
        csrf_token=csrf,
        now=now,
        expires_at=expires,
    )
    # the id is not needed by callers of a fresh session; 0 marks "not read back"
    return OpenedSession(token, Session(0, realm.name, user_id, csrf, now, expires))


async def find_session(db: Database, clock: Clock, realm: Realm, token: str | None) -> Session | None:
    """The live session of this cookie token, or None (no token, unknown, expired or idle too long:
    an ended session's row is deleted)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    digest = token_hash(token)
    now = clock.now()
    async with db.read() as conn:
        row = await repo.session_by_token(conn, realm.name, digest)
    if row is None:
        return None
    if row.expires_at <= now or now - row.last_seen_at > realm.idle_timeout:
        async with db.write() as conn:
            await repo.delete_session(conn, realm.name, digest)
        return None
    if now - row.last_seen_at > TOUCH_EVERY:
        async with db.write() as conn:
            await repo.touch_session(conn, row.id, now)
    return Session(row.id, realm.name, row.user_id, row.csrf_token, row.created_at, row.expires_at)


async def end_session(db: Database, realm: Realm, token: str | None) -> bool:
    """Sign out: the session's row is deleted, so the cookie opens nothing anywhere from now on."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return False
    async with db.write() as conn:
        return await repo.delete_session(conn, realm.name, token_hash(token)) > 0


async def end_user_sessions(conn: AsyncConnection, realm: Realm | str, user_id: int) -> int:
    """Every session of one user (an account disabled, a password changed), in the caller's transaction."""
    return await repo.delete_user_sessions(conn, realm if isinstance(realm, str) else realm.name, user_id)


FAILURES_KEPT = timedelta(days=1)  # far longer than any throttle window: enough to look back at an attack


async def prune(conn: AsyncConnection, now: datetime, *, limit: int) -> int:
    """Sessions past their end, sign-in failures and attempts older than a day, every realm; at most
    ``limit`` of each per call (the scheduled job drains a backlog batch by batch)."""
    ended = await repo.delete_expired_sessions(conn, now, limit=limit)
    ended += await repo.delete_attempts_before(conn, now - FAILURES_KEPT, limit=limit)
    return ended + await repo.delete_failures_before(conn, now - FAILURES_KEPT, limit=limit)
