"""The "limit" columns: bare FastAPI apps on the same server, driver and pool settings as the service.

* ``GET /hello``: a fixed JSON dict (FastAPI's own cost).
* ``GET /resource``: the BookingResource of one real booking, from memory, through FastAPI's
  ``response_model`` (what an idiomatic FastAPI endpoint costs for the service's answer).
* ``GET /row/pg?id=``: one primary-key read of a whole ``bookings`` row through the service's own
  ``Database`` (same pool size, timeout and connect arguments), read the way GET booking reads
  (``Database.read_one``: the direct path of ``db/direct.py``, a plain asyncpg pool with a cached
  prepared statement, one round trip); ``GET /row/sqlite?id=`` the same on the SQLite file (one
  ``sqlite3`` connection on the loop's thread).

Configured by ``BENCH_PG_URL``, ``BENCH_SQLITE_URL`` (SQLAlchemy URLs) and ``BENCH_BOOKING_ID``:

    uvicorn --factory bench.baseline:create_app
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from sqlalchemy import bindparam, select

from transfers.api.schemas import BookingResource
from transfers.bookings.repository import get_by_id
from transfers.bookings.resource import booking_resource
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import bookings

BY_ID = DirectStatement(select(bookings).where(bookings.c.id == bindparam("id")))


def create_app() -> FastAPI:
    settings = Settings()
    databases = {
        name: Database(
            url,
            pool_size=settings.database_pool_size,
            pool_timeout=settings.database_pool_timeout_seconds,
            application_name="bench-baseline",
        )
        for name, url in (
            ("pg", os.environ.get("BENCH_PG_URL", "")),
            ("sqlite", os.environ.get("BENCH_SQLITE_URL", "")),
        )
        if url
    }
    resource: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        db = databases.get("pg") or databases["sqlite"]
        async with db.read() as conn:
            row = await get_by_id(conn, int(os.environ.get("BENCH_BOOKING_ID", "1")))
        assert row is not None, "BENCH_BOOKING_ID names no booking"
        resource.update(booking_resource(row, SystemClock().now()))
        yield
        for database in databases.values():
            await database.dispose()

    app = FastAPI(lifespan=lifespan)

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    @app.get("/resource", response_model=BookingResource)
    async def from_memory() -> dict[str, Any]:
        return resource

    @app.get("/row/{name}")
    async def row(name: str, id: int) -> dict[str, Any]:
        database = databases.get(name)
        if database is None:
            raise HTTPException(404)
        found = await database.read_one(BY_ID, id=id)  # the GET booking read path (see docstring)
        if found is None:
            raise HTTPException(404)
        return {"id": found["id"], "reservation_no": found["reservation_no"], "status": found["status"]}

    return app
