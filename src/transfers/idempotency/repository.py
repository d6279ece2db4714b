"""The SQL of the ``idempotency_keys`` table (the rules: ``service.py``): a key's row read as a typed
``StoredKey``, claimed, locked again, answered, forgotten."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import idempotency_keys
from transfers.rows import row_type

t = idempotency_keys


@row_type
class StoredKey:
    """The columns the rules read of a client's key."""

    id: int
    request_hash: str
    state: str  # in_progress | done
    response_status: int | None
    response_body: str | None
    locked_until: datetime
    expires_at: datetime


_READ = select(
    t.c.id, t.c.request_hash, t.c.state, t.c.response_status, t.c.response_body, t.c.locked_until, t.c.expires_at
)


async def find(conn: AsyncConnection, client_id: int, key: str) -> StoredKey | None:
    row = (await conn.execute(_READ.where(t.c.client_id == client_id, t.c.key == key))).first()
    return None if row is None else StoredKey(*row)


async def delete_by_id(conn: AsyncConnection, key_id: int) -> None:
    await conn.execute(delete(t).where(t.c.id == key_id))


async def claim(
    conn: AsyncConnection,
    client_id: int,
    key: str,
    request_hash: str,
    *,
    now: datetime,
    locked_until: datetime,
    expires_at: datetime,
) -> None:
    """The key's ``in_progress`` row; IntegrityError when another request holds the key."""
    await conn.execute(
        insert(t).values(
            client_id=client_id,
            key=key,
            request_hash=request_hash,
            state="in_progress",
            locked_until=locked_until,
            created_at=now,
            expires_at=expires_at,
        )
    )


async def lock_again(conn: AsyncConnection, key_id: int, locked_until: datetime) -> None:
    await conn.execute(update(t).where(t.c.id == key_id).values(locked_until=locked_until))


async def store_answer(conn: AsyncConnection, client_id: int, key: str, status: int, body: str) -> None:
    await conn.execute(
        update(t)
        .where(t.c.client_id == client_id, t.c.key == key)
        .values(state="done", response_status=status, response_body=body)
    )


async def forget(conn: AsyncConnection, client_id: int, key: str) -> None:
    await conn.execute(delete(t).where(t.c.client_id == client_id, t.c.key == key))
