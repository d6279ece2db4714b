"""Idempotency-Key for create and cancel (docs/rules/reliability.md#idempotency), per client, for 24 h.

* first request with a key: an ``in_progress`` row is inserted (unique per client and key), the
  work runs, and its answer is stored;
* same key, same request (method, path, query and body by meaning: ``fingerprint.py``), answer
  stored: the answer is replayed with ``Idempotent-Replayed: true`` and nothing runs again;
* same key, other request: 422 ``IDEMPOTENCY_KEY_REUSED``;
* same key while the first is still running: 409 ``IDEMPOTENCY_KEY_IN_USE``. A run whose process
  died leaves a lock that expires after ``idempotency_lock_seconds`` (60 s); the retry then runs,
  and create-booking's unique (client, key) guarantees it cannot book twice;
* once a key's 24 h are over it is new again, also for create-booking: a fresh run releases the key
  from bookings made in an earlier window (``release_idempotency_key``);
* answers 409, 429 and 5xx are not stored (the row is removed, a retry runs again).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import IntegrityError

from transfers.bookings.repository import release_idempotency_key
from transfers.errors import Conflict, ErrorCode, Invalid
from transfers.idempotency import repository as repo
from transfers.idempotency.fingerprint import Fingerprint
from transfers.services import Services

MAX_KEY = 255


@dataclass(frozen=True)
class StoredAnswer:
    status: int
    body: bytes
    replayed: bool


def check_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY or not key.isprintable():
        raise Invalid(ErrorCode.IDEMPOTENCY_KEY_INVALID)
    return key


async def run_idempotent(
    svc: Services, client_id: int, key: str, request: Fingerprint, work: Callable[[], Awaitable[tuple[int, bytes]]]
) -> StoredAnswer:
    now = svc.clock.now()
    lock = timedelta(seconds=svc.settings.idempotency_lock_seconds)
    async with svc.db.write() as conn:
        row = await repo.find(conn, client_id, key)
        stale_before = now - timedelta(seconds=svc.settings.idempotency_ttl_seconds)
        if row is not None and row.expires_at <= now:
            stale_before = max(stale_before, row.expires_at)
            await repo.delete_by_id(conn, row.id)
            row = None
        if row is None:
            try:
                async with conn.begin_nested():
                    await repo.claim(
                        conn,
                        client_id,
                        key,
                        request.canonical,
                        now=now,
                        locked_until=now + lock,
                        expires_at=now + timedelta(seconds=svc.settings.idempotency_ttl_seconds),
                    )
            except IntegrityError:
                raise _in_use() from None
            # A booking keeps the key that created it (so a retry after a lost answer finds it instead
            # of booking twice); once the key's 24 h are over the key is new again, so a booking from an
            # earlier window lets go of it.
            await release_idempotency_key(conn, client_id, key, created_before=stale_before)
        elif not request.matches(row.request_hash):
            raise Invalid(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        elif row.state == "done":
            # a done row holds its answer (store_answer writes status and body together)
            return StoredAnswer(row.response_status or 0, (row.response_body or "").encode(), True)
        elif row.locked_until > now:
            raise _in_use()
        else:  # the first run died holding the lock: take it over
            await repo.lock_again(conn, row.id, now + lock)
    try:
        status, body = await work()
    except BaseException:
        await _forget(svc, client_id, key)
        raise
    if status in (409, 429) or status >= 500:
        await _forget(svc, client_id, key)
    else:
        async with svc.db.write() as conn:
            await repo.store_answer(conn, client_id, key, status, body.decode())
    return StoredAnswer(status, body, False)


async def _forget(svc: Services, client_id: int, key: str) -> None:
    async with svc.db.write() as conn:
        await repo.forget(conn, client_id, key)


def _in_use() -> Conflict:
    return Conflict(ErrorCode.IDEMPOTENCY_KEY_IN_USE, headers={"Retry-After": "1"})
