"""The direct read path (``db/direct.py``) gives exactly the row the SQLAlchemy engine gives.

GET booking reads through it; a difference in any column's type or value (Money as Decimal with
two places, aware UTC instants, decoded JSON, NULLs) would change the BookingResource. Compared
here on real bookings of every kind the API makes, on whichever database the session runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import bindparam, select

from tests.api.test_cancel_and_get import DRIVER, IATA, book
from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import row_of
from transfers.bookings import repository as repo
from transfers.bookings.models import BookingView
from transfers.bookings.resource import RESOURCE_FIELDS
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import bookings


def _same(direct: dict[str, Any], engine: dict[str, Any]) -> None:
    assert direct.keys() == engine.keys()
    for key, value in engine.items():
        assert direct[key] == value, key
        assert type(direct[key]) is type(value), (key, type(direct[key]), type(value))
        if hasattr(value, "tzinfo"):
            assert direct[key].tzinfo is not None and direct[key].utcoffset() == value.utcoffset(), key


async def test_direct_read_equals_the_engine_read_column_by_column(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, key = await make_client()
    await make_partner(airports=(IATA,), create_status="APPROVED", driver=DRIVER)
    approved = await book(http, key, extra_services=[{"id": 1, "quantity": 2}, {"id": 2}])
    plain = await book(http, key, flight_number=None)
    for created in (approved, plain):
        engine_row = BookingView.from_row(await row_of(db, created["reservation_no"]))
        direct_row = await repo.resource_fields_for_client(db, client_id, created["reservation_no"])
        assert direct_row is not None
        _same(
            {k: getattr(direct_row, k) for k in RESOURCE_FIELDS}, {k: getattr(engine_row, k) for k in RESOURCE_FIELDS}
        )
    assert (await row_of(db, approved["reservation_no"]))["driver_name"] == DRIVER["name"]


async def test_direct_read_is_scoped_and_answers_none(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    owner_id, key = await make_client()
    other_id, _ = await make_client()
    await make_partner(airports=(IATA,))
    created = await book(http, key)
    assert await repo.resource_fields_for_client(db, other_id, created["reservation_no"]) is None
    assert await repo.resource_fields_for_client(db, owner_id, "TB-NOSUCHONE") is None
    # Parameters are bound, never spliced: a quote or a unicode string is just a value.
    for hostile in ("' OR '1'='1", "TB-ÄÖÜ-日本", "x" * 255, "%", "_"):
        assert await repo.resource_fields_for_client(db, owner_id, hostile) is None


@pytest.mark.parametrize("many", [1, 40])
async def test_concurrent_direct_reads(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database, many: int
) -> None:
    """More reads at once than the direct pool has connections: all answered, none mixed up."""
    _, key = await make_client()
    await make_partner(airports=(IATA,))
    await book(http, key)
    ids = DirectStatement(select(bookings.c.id, bookings.c.reservation_no).where(bookings.c.id == bindparam("id")))
    async with db.read() as conn:
        known = [
            tuple(r)
            for r in (
                await conn.execute(select(bookings.c.id, bookings.c.reservation_no).order_by(bookings.c.id).limit(many))
            )
        ]
    assert known
    rows = await asyncio.gather(*(db.read_one(ids, id=booking_id) for booking_id, _ in known * 3))
    assert [(r["id"], r["reservation_no"]) for r in rows if r is not None] == known * 3
