"""Migration 0015 writes the journal of everything that happened before it (docs/rules/statements.md#journal):
a history made by the real code (which journals as it goes) is taken back to 0014, the journal
dropped, and upgraded again. The backfilled journal must be the one written live, line for line
(kind, booking, account, amount, month), the books must reconcile, and the wallet API's figures
must be exactly what they were."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import select

from tests import ledger_world as world
from tests.conftest import ClientFactory
from tests.helpers import own_database
from transfers.accounting import check
from transfers.bookings.cancel import Actor
from transfers.bookings.state import BookingStatus
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import alembic_config, upgrade
from transfers.db.tables import journal_entries, journal_lines, wallets
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner
from transfers.wallet import repository as wallet_repo

S = BookingStatus


@pytest.fixture
async def fresh_url(tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own (the downgrade drops tables every other test uses)."""
    async with own_database(tmp_path, "backfill") as url:
        yield url


async def history(db: Database, clock: ShiftedClock) -> None:
    """Top-ups, wallet and third-party bookings completed, cancelled with and without a fee,
    declined, left pending; over two months."""
    box = SecretBox(Settings(database_url="sqlite+aiosqlite:///x").secret_key)
    partner = await register_partner(
        db,
        clock,
        box,
        name="Backfill partner",
        base_url="http://127.0.0.1:9",
        airports=("LHR",),
        markup_percent=Decimal("0"),
        allow_private=True,
        actor="tests",
    )
    pid = partner.partner_id
    clients = ClientFactory(db, clock)
    wallet_client, _ = await clients(balance="500.00")
    third_party, _ = await clients(balance="0.00", pay_type="reverse_api")
    await client_service.top_up(db, clock, wallet_client, Decimal("20.05"), actor="tests")
    for _month in range(2):
        now = clock.now()
        done = await world.book(db, world.values(wallet_client, pid, now, total="44.00", net="40.00"), now)
        await world.complete(db, done, now)
        fee = await world.book(
            db, world.values(wallet_client, pid, now, total="33.33", net="22.22", policy=world.FEE_20), now
        )
        await world.move(db, fee, S.PENDING_APPROVAL, now)
        await world.cancel(db, fee, now)
        free = await world.book(db, world.values(wallet_client, pid, now, total="25.00", net="20.00"), now)
        await world.move(db, free, S.PENDING_APPROVAL, now)
        await world.cancel(db, free, now, Actor.PARTNER)
        tp_done = await world.book(
            db, world.values(third_party, pid, now, total="30.00", net="24.00", pay_type="reverse_api"), now
        )
        await world.complete(db, tp_done, now)
        tp_declined = await world.book(
            db, world.values(third_party, pid, now, total="31.00", net="25.00", pay_type="reverse_api"), now
        )
        await world.move(db, tp_declined, S.PENDING_APPROVAL, now)
        await world.move(db, tp_declined, S.DECLINED, now)
        tp_fee = await world.book(
            db,
            world.values(
                third_party, pid, now, total="50.00", net="40.00", pay_type="reverse_api", policy=world.FEE_20
            ),
            now,
        )
        await world.move(db, tp_fee, S.PENDING_APPROVAL, now)
        await world.cancel(db, tp_fee, now)
        await world.book(db, world.values(wallet_client, pid, now, total="10.00", net="9.00"), now)  # left PENDING
        clock.advance(timedelta(days=32))


async def journal(db: Database) -> Counter[tuple[Any, ...]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(
                journal_entries.c.kind,
                journal_entries.c.booking_id,
                journal_entries.c.ledger_entry_id,
                journal_lines.c.account,
                journal_lines.c.owner_id,
                journal_lines.c.currency,
                journal_lines.c.amount,
                journal_lines.c.period,
                journal_lines.c.created_at,
            ).join(journal_lines, journal_lines.c.entry_id == journal_entries.c.id)
        )
        return Counter(tuple(r) for r in rows)


async def wallet_figures(db: Database) -> list[Any]:
    """What the wallet API shows every client: currency, balance, each statement line."""
    async with db.read() as conn:
        found = []
        for (client_id,) in await conn.execute(select(wallets.c.client_id).order_by(wallets.c.client_id)):
            wallet = await wallet_repo.wallet_of_client(conn, client_id)
            currency, lines = await wallet_repo.statement_page(
                conn, client_id, created_from=None, created_to=None, below_id=None, limit=100
            )
            found.append((wallet, currency, lines))
        return found


async def test_0015_backfills_the_journal_that_the_code_writes_live(fresh_url: str) -> None:
    await asyncio.to_thread(upgrade, fresh_url)
    db = Database(fresh_url, pool_size=3)
    try:
        clock = ShiftedClock()
        await history(db, clock)
        live, figures = await journal(db), await wallet_figures(db)
        kinds = {key[0] for key in live}
        assert kinds >= {
            "credit_topup",
            "debit_booking",
            "credit_refund",
            "RIDE",
            "CANCELLATION_FEE",
            "third_party_payment",
            "third_party_refund",
        }
        assert len({key[7] for key in live}) >= 2  # two months
        await db.dispose()
        await asyncio.to_thread(command.downgrade, alembic_config(fresh_url), "0014")
        await asyncio.to_thread(upgrade, fresh_url)
        db = Database(fresh_url, pool_size=3)
        assert await journal(db) == live
        assert await wallet_figures(db) == figures
        async with db.read() as conn:
            assert await check.first_difference(conn) is None
    finally:
        await db.dispose()
