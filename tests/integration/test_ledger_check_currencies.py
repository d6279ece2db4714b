"""``transfers ledger check`` balances every journal entry per currency (docs/rules/statements.md#journal):
an entry whose lines are in two currencies (as a converted booking's will be, through the FX accounts)
passes when each currency's lines add up to zero, and is named, with the currency, when one does not,
even if its lines add up to zero across currencies. Written in a transaction rolled back afterwards, so
the session's books stay whole for the other tests."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import insert

from tests.conftest import ClientFactory
from transfers.accounting import check
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import journal_entries, journal_lines


async def test_an_entry_in_two_currencies_balances_in_each(db: Database, clock: ShiftedClock) -> None:
    now = clock.now()
    period = now.strftime("%Y-%m")

    async def found(lines: list[tuple[str, str, str]]) -> str | None:
        async with db.engine.connect() as conn:
            transaction = await conn.begin()
            try:
                assert await check.first_difference(conn) is None  # whole before
                entry_id = (
                    await conn.execute(
                        insert(journal_entries)
                        .values(kind="test_fx", currency="GBP", created_at=now)
                        .returning(journal_entries.c.id)
                    )
                ).scalar_one()
                await conn.execute(
                    insert(journal_lines),
                    [
                        {"entry_id": entry_id, "account": account, "owner_id": 0, "currency": currency,
                         "amount": Decimal(amount), "period": period, "created_at": now}
                        for account, currency, amount in lines
                    ],
                )  # fmt: skip
                answer = await check.first_difference(conn)
                if answer is not None:
                    assert f"journal entry {entry_id} " in answer
                return answer
            finally:
                await transaction.rollback()

    # 48.00 GBP taken in, 56.05 EUR paid out: each currency balanced by the platform's own lines
    balanced = [
        ("world", "GBP", "-48.00"),
        ("platform", "GBP", "48.00"),
        ("platform", "EUR", "-56.05"),
        ("world", "EUR", "56.05"),
    ]
    assert await found(balanced) is None
    crossed = [("world", "GBP", "-10.00"), ("platform", "EUR", "10.00")]  # zero in sum, not per currency
    assert "does not balance in EUR: 1 lines adding up to 10.00" in str(await found(crossed))
    jpy = [("world", "JPY", "-10010"), ("platform", "JPY", "10009")]
    assert "does not balance in JPY: 2 lines adding up to -1" in str(await found(jpy))
    assert "does not balance: 1 lines" in str(await found([("world", "KWD", "0.000")]))


async def test_the_books_of_a_client_with_two_wallets_reconcile(
    db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    from transfers.clients import service as client_service

    client_id, _ = await make_client(balance="10.00")
    await client_service.add_wallet(db, clock, client_id, "KWD", default=False, actor="tests")
    await client_service.top_up(db, clock, client_id, Decimal("20.475"), actor="tests", currency="KWD")
    async with db.read() as conn:
        assert await check.first_difference(conn) is None
