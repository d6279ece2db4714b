"""The SQL of browser sessions, sign-in attempts and failed sign-ins (tables ``web_sessions``,
``web_signin_attempts``, ``web_signin_failures``). Functions run in the caller's transaction; none commits."""

from __future__ import annotations

import hashlib
from dataclasses import fields
from datetime import datetime

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import web_sessions, web_signin_attempts, web_signin_failures
from transfers.rows import row_type


@row_type
class SessionRow:
    """One ``web_sessions`` row: what a cookie's token opens (the token itself is stored only hashed)."""

    id: int
    realm: str
    user_id: int
    token_hash: str
    csrf_token: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


SESSION_FIELDS = tuple(f.name for f in fields(SessionRow))
_SESSION_COLUMNS = tuple(web_sessions.c[name] for name in SESSION_FIELDS)


async def insert_session(
    conn: AsyncConnection,
    *,
    realm: str,
    user_id: int,
    token_hash: str,
    csrf_token: str,
    now: datetime,
    expires_at: datetime,
) -> None:
    await conn.execute(
        insert(web_sessions).values(
            realm=realm,
            user_id=user_id,
            token_hash=token_hash,
            csrf_token=csrf_token,
            created_at=now,
            last_seen_at=now,
            expires_at=expires_at,
        )
    )


async def session_by_token(conn: AsyncConnection, realm: str, token_hash: str) -> SessionRow | None:
    row = (
        await conn.execute(
            select(*_SESSION_COLUMNS).where(web_sessions.c.token_hash == token_hash, web_sessions.c.realm == realm)
        )
    ).first()
    return SessionRow(*row) if row else None


async def touch_session(conn: AsyncConnection, session_id: int, now: datetime) -> None:
    await conn.execute(update(web_sessions).where(web_sessions.c.id == session_id).values(last_seen_at=now))


async def delete_session(conn: AsyncConnection, realm: str, token_hash: str) -> int:
    result = await conn.execute(
        delete(web_sessions).where(web_sessions.c.token_hash == token_hash, web_sessions.c.realm == realm)
    )
    return int(result.rowcount)


async def delete_user_sessions(conn: AsyncConnection, realm: str, user_id: int) -> int:
    result = await conn.execute(
        delete(web_sessions).where(web_sessions.c.realm == realm, web_sessions.c.user_id == user_id)
    )
    return int(result.rowcount)


async def delete_expired_sessions(conn: AsyncConnection, now: datetime, *, limit: int) -> int:
    """Up to ``limit`` sessions past their absolute end (idle ones end on their next use, or here
    once their absolute end passes too)."""
    ids = select(web_sessions.c.id).where(web_sessions.c.expires_at <= now).limit(limit).scalar_subquery()
    result = await conn.execute(delete(web_sessions).where(web_sessions.c.id.in_(ids)))
    return int(result.rowcount)


async def lock_address(conn: AsyncConnection, address: str) -> None:
    """Serialise the address's attempts until the transaction ends, so its count-then-insert is exact: on
    PostgreSQL an advisory lock on the address's hash; on SQLite the write transaction already is one."""
    if conn.dialect.name == "postgresql":
        key = int.from_bytes(hashlib.sha256(f"signin:{address}".encode()).digest()[:8], "big", signed=True)
        await conn.execute(select(func.pg_advisory_xact_lock(key)))


async def attempts_since(conn: AsyncConnection, address: str, since: datetime) -> list[datetime]:
    query = select(web_signin_attempts.c.created_at).where(
        web_signin_attempts.c.client_address == address, web_signin_attempts.c.created_at > since
    )
    return [r[0] for r in await conn.execute(query)]


async def record_attempt(conn: AsyncConnection, address: str, now: datetime) -> None:
    await conn.execute(insert(web_signin_attempts).values(client_address=address, created_at=now))


async def delete_attempts_before(conn: AsyncConnection, cutoff: datetime, *, limit: int) -> int:
    ids = (
        select(web_signin_attempts.c.id).where(web_signin_attempts.c.created_at < cutoff).limit(limit).scalar_subquery()
    )
    result = await conn.execute(delete(web_signin_attempts).where(web_signin_attempts.c.id.in_(ids)))
    return int(result.rowcount)


async def record_failure(conn: AsyncConnection, *, realm: str, email: str, address: str, now: datetime) -> int:
    result = await conn.execute(
        insert(web_signin_failures)
        .values(realm=realm, email=email, client_address=address, created_at=now)
        .returning(web_signin_failures.c.id)
    )
    return int(result.scalar_one())


async def delete_failure(conn: AsyncConnection, failure_id: int) -> None:
    await conn.execute(delete(web_signin_failures).where(web_signin_failures.c.id == failure_id))


async def failures_since(
    conn: AsyncConnection, realm: str, email: str, address: str, since: datetime, *, excluding: int | None = None
) -> list[datetime]:
    """The e-mail's failures from this address (the lock-out never counts another address's)."""
    query = (
        select(web_signin_failures.c.created_at)
        .where(
            web_signin_failures.c.realm == realm,
            web_signin_failures.c.email == email,
            web_signin_failures.c.client_address == address,
            web_signin_failures.c.created_at >= since,
        )
        .order_by(web_signin_failures.c.created_at)
    )
    if excluding is not None:
        query = query.where(web_signin_failures.c.id != excluding)
    return [r[0] for r in await conn.execute(query)]


async def clear_failures(conn: AsyncConnection, realm: str, email: str, address: str) -> None:
    """A success clears the e-mail's failures from its own address only (another address's stay counted)."""
    await conn.execute(
        delete(web_signin_failures).where(
            web_signin_failures.c.realm == realm,
            web_signin_failures.c.email == email,
            web_signin_failures.c.client_address == address,
        )
    )


async def delete_failures_before(conn: AsyncConnection, cutoff: datetime, *, limit: int) -> int:
    ids = (
        select(web_signin_failures.c.id).where(web_signin_failures.c.created_at < cutoff).limit(limit).scalar_subquery()
    )
    result = await conn.execute(delete(web_signin_failures).where(web_signin_failures.c.id.in_(ids)))
    return int(result.rowcount)
