"""Money columns store amounts exactly, in every currency's decimals (docs/architecture/money.md#storing):
KWD 20.465 and JPY 10010 read back as written, a sum is exact, a value with more decimals than the
column holds is refused (never rounded), and migration 0023 converts the amounts stored before it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import func, insert, select, text
from sqlalchemy.exc import StatementError

from tests.conftest import ON_POSTGRES
from tests.helpers import own_database
from transfers import money
from transfers.db.engine import Database
from transfers.db.migrate import alembic_config, upgrade
from transfers.db.tables import search_vehicles, wallets

D = Decimal


def _offer(no: int, net: Decimal | float | str, currency: str) -> dict[str, Any]:
    return {
        "search_pk": -1,  # no search: the row lives only inside the test's rolled-back transaction
        "vehicle_no": no,
        "partner_id": -1,
        "partner_vehicle_id": "v",
        "make": "m",
        "model": "m",
        "type": "SEDAN",
        "max_passengers": 1,
        "suitcases": 0,
        "small_bags": 0,
        "net_price": net,
        "sell_price": net,
        "currency": currency,
        "extras": [],
    }


@pytest.mark.parametrize(
    ("amount", "currency"),
    [
        (D("20.465"), "KWD"),
        (D("10010"), "JPY"),
        (D("52.80"), "EUR"),
        (D("0.0001"), "CLF"),
        (D("-12.345"), "BHD"),
        (D("99999999999999.9999"), "CLF"),
    ],
)
async def test_amounts_read_back_exactly(db: Database, amount: Decimal, currency: str) -> None:
    async with db.engine.connect() as conn:
        try:
            await conn.execute(insert(search_vehicles), [_offer(1, amount, currency), _offer(2, amount, currency)])
            mine = search_vehicles.c.search_pk == -1
            stored = (await conn.execute(select(search_vehicles.c.net_price).where(mine).limit(1))).scalar_one()
            total = (await conn.execute(select(func.sum(search_vehicles.c.sell_price)).where(mine))).scalar_one()
        finally:
            await conn.rollback()
    assert stored == amount
    assert total == amount * 2
    assert money.text(stored, currency) == money.text(amount, currency)
    assert money.text(total, currency) == money.text(amount * 2, currency)


@pytest.mark.parametrize(
    "amount",
    [D("20.46501"), D("0.00001"), D("100000000000000"), D("NaN"), D("Infinity"), 20.465, True, "20,5"],
)
async def test_an_amount_the_column_cannot_hold_exactly_is_refused(db: Database, amount: object) -> None:
    async with db.engine.connect() as conn:
        try:
            with pytest.raises(StatementError) as raised:
                await conn.execute(insert(search_vehicles), [_offer(1, amount, "KWD")])  # type: ignore[arg-type]
            assert isinstance(raised.value.orig, ValueError)
        finally:
            await conn.rollback()


@pytest.fixture
async def fresh_url(tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own, migrated step by step."""
    async with own_database(tmp_path, "money") as url:
        yield url


_NOW = "2026-11-22 10:00:00"
# Rows as revision 0022 stored them: on SQLite integer cents, on PostgreSQL NUMERIC(14, 2).
_OLD_ROWS = [
    "INSERT INTO clients (id, name, pay_type, created_at) VALUES (1, 'c', 'PREPAID', '{now}')",
    "INSERT INTO wallets (client_id, currency, balance, updated_at) VALUES (1, 'EUR', {balance}, '{now}')",
    "INSERT INTO search_vehicles (search_pk, vehicle_no, partner_id, partner_vehicle_id, make, model, type,"
    " max_passengers, suitcases, small_bags, net_price, sell_price, currency, extras)"
    " VALUES (1, 1, 1, 'v', 'm', 'm', 'SEDAN', 1, 0, 0, {net}, {sell}, 'EUR', '[]')",
]


async def _read(url: str) -> tuple[Any, ...]:
    db = Database(url, pool_size=1)
    try:
        async with db.read() as conn:
            balance = (await conn.execute(select(wallets.c.balance))).scalar_one()
            net, sell = (await conn.execute(select(search_vehicles.c.net_price, search_vehicles.c.sell_price))).one()
            raw = (await conn.execute(text("SELECT balance FROM wallets"))).scalar_one()
        return balance, net, sell, raw
    finally:
        await db.dispose()


async def _execute(url: str, *statements: str) -> None:
    db = Database(url, pool_size=1)
    try:
        async with db.engine.begin() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await db.dispose()


async def test_0023_converts_the_amounts_stored_before_it_and_back(fresh_url: str) -> None:
    cents = {"balance": 4510, "net": 100, "sell": 12345} if not ON_POSTGRES else {}
    decimals = {"balance": "45.10", "net": "1.00", "sell": "123.45"}
    await asyncio.to_thread(upgrade, fresh_url, "0022")
    await _execute(fresh_url, *(row.format(now=_NOW, **(cents or decimals)) for row in _OLD_ROWS))
    await asyncio.to_thread(upgrade, fresh_url)
    balance, net, sell, raw = await _read(fresh_url)
    assert (balance, net, sell) == (D("45.10"), D("1.00"), D("123.45"))
    assert raw == (451000 if not ON_POSTGRES else D("45.1000"))
    assert money.text(balance, "EUR") == "45.10"

    await asyncio.to_thread(command.downgrade, alembic_config(fresh_url), "0022")
    *_, raw = await _read(fresh_url)
    assert raw == (4510 if not ON_POSTGRES else D("45.10"))

    await asyncio.to_thread(upgrade, fresh_url)
    await _execute(
        fresh_url, "UPDATE wallets SET balance = 204650" if not ON_POSTGRES else "UPDATE wallets SET balance = 20.465"
    )
    with pytest.raises(RuntimeError, match="more than two decimals"):  # the downgrade would have to round
        await asyncio.to_thread(command.downgrade, alembic_config(fresh_url), "0022")
    balance, *_ = await _read(fresh_url)
    assert balance == D("20.465")
