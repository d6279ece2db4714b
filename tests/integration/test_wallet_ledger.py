"""The wallet ledger (docs/rules/accounts.md#payment): balance == SUM(ledger) always, never below zero, exact money,
one debit and at most one refund per booking, and no overdraft under concurrency on either database.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.conftest import ClientFactory
from tests.invariants import check_wallet_invariants
from transfers import money
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, ledger_entries, partners, wallets
from transfers.wallet.ledger import InsufficientBalance, LedgerKind
from transfers.wallet.repository import ledger_sum, post_entry, wallet_of_client

DEBIT = LedgerKind.DEBIT_BOOKING
TOPUP = LedgerKind.CREDIT_TOPUP
REFUND = LedgerKind.CREDIT_REFUND


async def new_wallet(make_client: ClientFactory, db: Database, balance: str) -> int:
    client_id, _ = await make_client(balance=balance)
    async with db.read() as conn:
        found = await wallet_of_client(conn, client_id)
    assert found is not None
    return found[0]


async def post(
    db: Database, clock: ShiftedClock, wallet_id: int, kind: LedgerKind, amount: str, booking_id: int | None = None
) -> Decimal:
    async with db.write() as conn:
        return await post_entry(
            conn, wallet_id=wallet_id, kind=kind, amount=Decimal(amount), now=clock.now(), booking_id=booking_id
        )


async def state(db: Database, wallet_id: int) -> tuple[Decimal, Decimal, list[tuple[str, Decimal]]]:
    """(balance, ledger sum, [(kind, signed amount)] in posting order)."""
    async with db.read() as conn:
        balance = (await conn.execute(select(wallets.c.balance).where(wallets.c.id == wallet_id))).scalar_one()
        total = await ledger_sum(conn, wallet_id)
        entries = [
            (r.kind, r.amount)
            for r in await conn.execute(
                select(ledger_entries.c.kind, ledger_entries.c.amount)
                .where(ledger_entries.c.wallet_id == wallet_id)
                .order_by(ledger_entries.c.id)
            )
        ]
    return balance, total, entries


async def test_top_ups_and_debits_keep_balance_equal_to_the_ledger(
    db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    wallet_id = await new_wallet(make_client, db, "0.00")
    assert await state(db, wallet_id) == (Decimal("0.00"), Decimal("0.00"), [])
    expected = Decimal("0.00")
    for kind, amount in [
        (TOPUP, "50.00"),
        (DEBIT, "20.25"),
        (TOPUP, "0.01"),
        (TOPUP, "7"),
        (DEBIT, "36.76"),
        (REFUND, "20.25"),
        (DEBIT, "20.25"),
    ]:
        returned = await post(db, clock, wallet_id, kind, amount)
        expected += Decimal(amount) * kind.sign
        balance, total, _ = await state(db, wallet_id)
        assert returned == balance == total == expected, (kind, amount)
    balance, total, entries = await state(db, wallet_id)
    assert balance == Decimal("0.00")
    assert entries == [
        ("credit_topup", Decimal("50.00")),
        ("debit_booking", Decimal("-20.25")),
        ("credit_topup", Decimal("0.01")),
        ("credit_topup", Decimal("7.00")),
        ("debit_booking", Decimal("-36.76")),
        ("credit_refund", Decimal("20.25")),
        ("debit_booking", Decimal("-20.25")),
    ]
    # Several entries without a booking (top-ups, ad-hoc debits) do not collide on UNIQUE(booking_id, kind).
    assert sum(1 for kind, _ in entries if kind == "credit_topup") == 3
    await check_wallet_invariants(db)


async def test_opening_balance_is_a_ledger_entry(db: Database, make_client: ClientFactory) -> None:
    wallet_id = await new_wallet(make_client, db, "123.45")
    assert await state(db, wallet_id) == (Decimal("123.45"), Decimal("123.45"), [("credit_topup", Decimal("123.45"))])


async def test_debit_beyond_the_balance_raises_and_writes_nothing(
    db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    wallet_id = await new_wallet(make_client, db, "10.00")
    updated_at = select(wallets.c.updated_at).where(wallets.c.id == wallet_id)
    async with db.read() as conn:
        updated_before = (await conn.execute(updated_at)).scalar_one()
    clock.advance(timedelta(minutes=5))
    # Caught inside the transaction, which then commits: post_entry itself must have written nothing.
    async with db.write() as conn:
        with pytest.raises(InsufficientBalance):
            await post_entry(conn, wallet_id=wallet_id, kind=DEBIT, amount=Decimal("10.01"), now=clock.now())
    async with db.read() as conn:
        updated_after = (await conn.execute(updated_at)).scalar_one()
    assert updated_after == updated_before
    assert await state(db, wallet_id) == (Decimal("10.00"), Decimal("10.00"), [("credit_topup", Decimal("10.00"))])

    assert await post(db, clock, wallet_id, DEBIT, "10.00") == Decimal("0.00")  # exactly the balance fits
    with pytest.raises(InsufficientBalance):
        await post(db, clock, wallet_id, DEBIT, "0.01")
    balance, total, entries = await state(db, wallet_id)
    assert balance == total == Decimal("0.00") and len(entries) == 2
    await check_wallet_invariants(db)


async def test_a_debit_on_an_unknown_wallet_writes_nothing(db: Database, clock: ShiftedClock) -> None:
    async with db.read() as conn:
        count_before = (await conn.execute(select(func.count()).select_from(ledger_entries))).scalar_one()
        missing = ((await conn.execute(select(func.max(wallets.c.id)))).scalar_one() or 0) + 1000
    with pytest.raises(InsufficientBalance):
        await post(db, clock, missing, DEBIT, "1.00")
    async with db.read() as conn:
        assert (await conn.execute(select(func.count()).select_from(ledger_entries))).scalar_one() == count_before


@pytest.mark.parametrize(
    "amount", ["0", "0.00", "-0.01", "-5", "1.001", "0.005", "12.3456", "NaN", "sNaN", "Infinity", "-Infinity"]
)
@pytest.mark.parametrize("kind", list(LedgerKind))
async def test_amounts_must_be_positive_with_at_most_two_decimals(
    db: Database, clock: ShiftedClock, make_client: ClientFactory, amount: str, kind: LedgerKind
) -> None:
    wallet_id = await new_wallet(make_client, db, "100.00")
    with pytest.raises(ValueError, match="ledger amounts"):
        await post(db, clock, wallet_id, kind, amount)
    assert await state(db, wallet_id) == (Decimal("100.00"), Decimal("100.00"), [("credit_topup", Decimal("100.00"))])


@pytest.mark.parametrize(
    ("amount", "stored"), [("0.01", "0.01"), ("1.1", "1.10"), ("2.500", "2.50"), ("3E+1", "30.00")]
)
async def test_amounts_with_two_places_in_value_are_accepted(
    db: Database, clock: ShiftedClock, make_client: ClientFactory, amount: str, stored: str
) -> None:
    wallet_id = await new_wallet(make_client, db, "0.00")
    assert await post(db, clock, wallet_id, TOPUP, amount) == Decimal(stored)
    balance, total, entries = await state(db, wallet_id)
    assert money.text(balance, "EUR") == money.text(total, "EUR") == stored
    assert entries == [("credit_topup", Decimal(stored))]


async def test_check_constraints_refuse_what_the_code_would_never_write(
    db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    wallet_id = await new_wallet(make_client, db, "5.00")
    with pytest.raises(IntegrityError):
        async with db.write() as conn:
            await conn.execute(update(wallets).where(wallets.c.id == wallet_id).values(balance=Decimal("-0.01")))
    for kind, signed in [(DEBIT, "1.00"), (TOPUP, "-1.00"), (REFUND, "0.00")]:
        with pytest.raises(IntegrityError):
            async with db.write() as conn:
                await conn.execute(
                    insert(ledger_entries).values(
                        wallet_id=wallet_id,
                        kind=kind.value,
                        amount=Decimal(signed),
                        created_at=clock.now(),
                        balance_after=Decimal("5.00"),
                    )
                )
    assert await state(db, wallet_id) == (Decimal("5.00"), Decimal("5.00"), [("credit_topup", Decimal("5.00"))])
    await check_wallet_invariants(db)


class _RollBack(Exception):
    """Raised at the end of a scenario so the transaction and everything in it is undone."""


async def _insert_booking(conn: AsyncConnection, clock: ShiftedClock, client_id: int) -> int:
    now = clock.now()
    partner_id = (
        await conn.execute(
            insert(partners)
            .values(
                name="ledger-test partner",
                base_url="http://127.0.0.1:9",
                airports="",
                status="disabled",
                outbound_token_enc="x",
                signing_secret_enc="x",
                created_at=now,
            )
            .returning(partners.c.id)
        )
    ).scalar_one()
    point = {"type": "POINT", "name": "Somewhere", "lat": 51.5, "lng": -0.1}
    return int(
        (
            await conn.execute(
                insert(bookings)
                .values(
                    reservation_no=f"TB-LEDGER{client_id}",
                    client_id=client_id,
                    partner_id=partner_id,
                    status="PENDING",
                    pay_type="wallet",
                    airport_iata="LHR",
                    pickup_at=now + timedelta(days=2),
                    pickup_location={"type": "AIRPORT", "iata_code": "LHR"},
                    dropoff_location=point,
                    flight_number="BA1",
                    adult=1,
                    children=0,
                    infant=0,
                    passenger_name="A",
                    passenger_surname="B",
                    passenger_email="a@example.com",
                    passenger_phone="+441234567890",
                    suitcase=0,
                    small_bags=0,
                    vehicle_make="Make",
                    vehicle_model="Model",
                    vehicle_type="SEDAN",
                    partner_vehicle_id="v1",
                    total=Decimal("30.00"),
                    net_total=Decimal("30.00"),
                    currency="EUR",
                    booking_type="ONEWAY",
                    extras=[],
                    created_at=now,
                    updated_at=now,
                )
                .returning(bookings.c.id)
            )
        ).scalar_one()
    )


async def test_one_debit_and_at_most_one_refund_per_booking(
    db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, _ = await make_client(balance="100.00")
    async with db.read() as conn:
        found = await wallet_of_client(conn, client_id)
    assert found is not None
    wallet_id = found[0]

    # The whole scenario runs in one transaction that is rolled back at the end, so the synthetic
    # partner and booking never become visible to other tests; SAVEPOINTs contain each violation.
    async def scenario() -> None:
        async with db.write() as conn:
            booking_id = await _insert_booking(conn, clock, client_id)
            kw = {"wallet_id": wallet_id, "now": clock.now(), "booking_id": booking_id}
            assert await post_entry(conn, kind=DEBIT, amount=Decimal("30.00"), **kw) == Decimal("70.00")
            with pytest.raises(IntegrityError):
                async with conn.begin_nested():
                    await post_entry(conn, kind=DEBIT, amount=Decimal("30.00"), **kw)
            assert await post_entry(conn, kind=REFUND, amount=Decimal("30.00"), **kw) == Decimal("100.00")
            with pytest.raises(IntegrityError):
                async with conn.begin_nested():
                    await post_entry(conn, kind=REFUND, amount=Decimal("30.00"), **kw)
            # The failed second debit/refund left the balance and the ledger as they were.
            balance = (await conn.execute(select(wallets.c.balance).where(wallets.c.id == wallet_id))).scalar_one()
            assert balance == await ledger_sum(conn, wallet_id) == Decimal("100.00")
            per_booking = (
                (
                    await conn.execute(
                        select(ledger_entries.c.kind)
                        .where(ledger_entries.c.booking_id == booking_id)
                        .order_by(ledger_entries.c.id)
                    )
                )
                .scalars()
                .all()
            )
            assert per_booking == ["debit_booking", "credit_refund"]
            raise _RollBack

    with pytest.raises(_RollBack):
        await scenario()
    assert await state(db, wallet_id) == (Decimal("100.00"), Decimal("100.00"), [("credit_topup", Decimal("100.00"))])


async def test_money_is_exact(db: Database, clock: ShiftedClock, make_client: ClientFactory) -> None:
    wallet_id = await new_wallet(make_client, db, "0.00")
    for _ in range(3):
        await post(db, clock, wallet_id, TOPUP, "0.10")
    balance, total, _ = await state(db, wallet_id)
    assert balance == total == Decimal("0.30") and money.text(balance, "EUR") == "0.30"  # 0.1+0.1+0.1 != 0.3 in floats
    assert await post(db, clock, wallet_id, DEBIT, "0.30") == Decimal("0.00")

    big = "9999999999.99"
    assert await post(db, clock, wallet_id, TOPUP, big) == Decimal(big)
    assert await post(db, clock, wallet_id, TOPUP, "0.01") == Decimal("10000000000.00")
    assert await post(db, clock, wallet_id, DEBIT, big) == Decimal("0.01")
    balance, total, _ = await state(db, wallet_id)
    assert balance == total == Decimal("0.01")

    # The largest amount an operator credits round-trips exactly on both databases.
    top = "999999999999.99"
    wallet2 = await new_wallet(make_client, db, "0.00")
    assert await post(db, clock, wallet2, TOPUP, top) == Decimal(top)
    balance, total, _ = await state(db, wallet2)
    assert balance == total == Decimal(top) and money.text(balance, "EUR") == top
    assert await post(db, clock, wallet2, DEBIT, "0.01") == Decimal("999999999999.98")
    await check_wallet_invariants(db)


# ---- concurrency ---------------------------------------------------------------------------------

# More debits than the wallet can pay for (10 x 10.00 of 100.00), each on a connection of its own: a small
# share of the server's 100 connections, beside the apps the suite keeps open.
RACERS = 30


async def _debit_race(
    database: Database, clock: ShiftedClock, wallet_id: int, amount: str, *, inside_transaction: bool
) -> list[bool]:
    """RACERS debits in separate transactions, released together by a barrier.

    ``inside_transaction``: every transaction is already open (it has run a statement) when the
    barrier lets them all issue their UPDATE at once (PostgreSQL: they queue on the row lock).
    SQLite serialises writers at BEGIN IMMEDIATE, so there the barrier sits just before BEGIN and
    all of them contend for the write lock at the same moment.
    """
    barrier = asyncio.Barrier(RACERS)

    async def one() -> bool:
        if not inside_transaction:
            await barrier.wait()
        try:
            async with database.write() as conn:
                if inside_transaction:
                    await conn.execute(text("SELECT 1"))
                    await barrier.wait()
                await post_entry(conn, wallet_id=wallet_id, kind=DEBIT, amount=Decimal(amount), now=clock.now())
                await asyncio.sleep(0.005)  # hold the row/write lock a moment so the others pile up behind it
        except InsufficientBalance:
            return False
        return True

    return await asyncio.wait_for(asyncio.gather(*(one() for _ in range(RACERS))), timeout=120)


async def _assert_race_outcome(db: Database, wallet_id: int, results: list[bool]) -> None:
    assert sum(results) == 10, f"{sum(results)} debits of 10.00 succeeded against 100.00"
    balance, total, entries = await state(db, wallet_id)
    assert balance == total == Decimal("0.00")
    assert [kind for kind, _ in entries].count("debit_booking") == 10
    await check_wallet_invariants(db)


@pytest.mark.pg_only
async def test_concurrent_debits_never_overdraw_on_postgresql(
    database_url: str, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    wallet_id = await new_wallet(make_client, db, "100.00")
    racing = Database(database_url, pool_size=RACERS, application_name="transfers-tests-race")
    try:
        results = await _debit_race(racing, clock, wallet_id, "10.00", inside_transaction=True)
    finally:
        await racing.dispose()
    await _assert_race_outcome(db, wallet_id, results)


async def test_concurrent_debits_never_overdraw_on_the_session_database(
    database_url: str, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    """The same race on whichever database the session uses (SQLite: writers serialised by BEGIN
    IMMEDIATE, waiting on the busy timeout: no "database is locked", no overdraft)."""
    wallet_id = await new_wallet(make_client, db, "100.00")
    racing = Database(database_url, pool_size=RACERS, application_name="transfers-tests-race")
    try:
        results = await _debit_race(racing, clock, wallet_id, "10.00", inside_transaction=not racing.is_sqlite)
    finally:
        await racing.dispose()
    await _assert_race_outcome(db, wallet_id, results)


async def test_concurrent_top_ups_and_debits_keep_the_ledger_exact(
    database_url: str, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    wallet_id = await new_wallet(make_client, db, "50.00")
    racing = Database(database_url, pool_size=10, application_name="transfers-tests-race")  # 40 movers queue on 20
    start = asyncio.Event()

    async def move(kind: LedgerKind, amount: str) -> bool:
        await start.wait()
        try:
            async with racing.write() as conn:
                await post_entry(conn, wallet_id=wallet_id, kind=kind, amount=Decimal(amount), now=clock.now())
        except InsufficientBalance:
            return False
        return True

    try:
        tasks = [asyncio.create_task(move(DEBIT, "7.00")) for _ in range(25)]
        tasks += [asyncio.create_task(move(TOPUP, "3.00")) for _ in range(15)]
        await asyncio.sleep(0.05)
        start.set()
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    finally:
        await racing.dispose()
    debits_ok = sum(outcomes[:25])
    assert all(outcomes[25:]), "a top-up failed"
    assert debits_ok >= 7  # 7 x 7.00 fit the opening 50.00 whatever the interleaving
    balance, total, entries = await state(db, wallet_id)
    assert balance == total == Decimal("50.00") + 15 * Decimal("3.00") - debits_ok * Decimal("7.00")
    assert balance >= 0
    assert len(entries) == 1 + 15 + debits_ok
    await check_wallet_invariants(db)
