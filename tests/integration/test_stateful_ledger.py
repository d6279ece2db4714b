"""Hypothesis stateful model of the books (docs/rules/statements.md): random programs of
bookings, approvals, completions, client cancels keeping a 20 % fee, partner cancels, incidents
resolved with partial and whole refunds for each responsibility (partner: RECOVERY; client; none),
top-ups, payouts of closed months, adjustments either way and month ends run against the real domain code
on the session database. After every step: ``transfers ledger check`` finds no difference (every
entry balances, the accounts add up to zero, every wallet equals its account, no refund above what
was paid, every closed statement equals the partner's account), the wallet is the model's, the
partner's account is the model's to the cent, and a closed statement never changed."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter, defaultdict
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar, TypeVar, cast

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests import ledger_world as world
from tests.conftest import ClientFactory
from transfers.accounting import service as books
from transfers.accounting.statements import Figures
from transfers.bookings.cancel import Actor, CancelRefused
from transfers.bookings.state import BookingStatus
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.incidents.rules import IncidentType
from transfers.partners import repository as partners_repo
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import InsufficientBalance

T = TypeVar("T")
S = BookingStatus
CENT = Decimal("0.01")
PRICES = [("25.00", "20.00"), ("33.33", "22.22"), ("10.00", "3.35"), ("99.99", "90.00")]


class Loop:
    """A private event loop thread, so Hypothesis drives async code synchronously."""

    def __init__(self, database_url: str, secret_key: str) -> None:
        self.secret_key = secret_key
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.db: Database = self.run(self._open(database_url))

    @staticmethod
    async def _open(url: str) -> Database:
        return Database(url, pool_size=3)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout=120)

    def close(self) -> None:
        self.run(self.db.dispose())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def loop(database_url: str, settings: Settings) -> Iterator[Loop]:
    running = Loop(database_url, settings.secret_key)
    yield running
    running.close()


class LedgerModel(RuleBasedStateMachine):
    env: Loop
    seen: ClassVar[Counter[str]] = Counter()  # what the run exercised, checked after it

    @initialize()
    def open_books(self) -> None:
        self.clock = ShiftedClock()
        self.clock.advance(datetime(2026, 6, 10, 12, tzinfo=UTC) - self.clock.now())
        db = self.env.db
        self.client_id, _ = self.env.run(ClientFactory(db, self.clock)(balance="500.00"))
        box = SecretBox(self.env.secret_key)  # the session service's: other tests' workers deliver its messages
        registered = self.env.run(
            register_partner(
                db,
                self.clock,
                box,
                name="Ledger model partner",
                base_url="http://127.0.0.1:9",
                airports=("LHR",),
                markup_percent=Decimal("0"),
                allow_private=True,
                actor="tests",
            )
        )
        self.partner_id = registered.partner_id
        # Never searched by the other tests (its messages are still delivered by their workers).
        self.env.run(self._disable(self.partner_id))
        self.wallet = Decimal("500.00")
        self.owed = Decimal("0.00")
        self.bookings: dict[int, tuple[str, Decimal, Decimal]] = {}  # id -> (status, total, net)
        self.frozen: dict[str, Figures] = {}
        self.refunded: defaultdict[int, Decimal] = defaultdict(Decimal)  # id -> what its incidents refunded
        self.recovered: defaultdict[int, Decimal] = defaultdict(
            Decimal
        )  # id -> the RECOVERY its partner owes back (positive)
        self.incident_types: dict[int, set[IncidentType]] = {}  # id -> the types it has already

    async def _disable(self, partner_id: int) -> None:
        async with self.env.db.write() as conn:
            await partners_repo.set_status(conn, partner_id, "disabled")

    def _mine(self, *statuses: str) -> list[int]:
        return sorted(i for i, (status, _, _) in self.bookings.items() if status in statuses)

    @rule(price=st.sampled_from(PRICES), general=st.booleans())
    def book(self, price: tuple[str, str], general: bool) -> None:
        total, net = Decimal(price[0]), Decimal(price[1])
        now = self.clock.now()
        row = world.values(self.client_id, self.partner_id, now, total=price[0], net=price[1], policy=world.FEE_20)
        try:
            booking_id = self.env.run(world.book(self.env.db, row, now, general=general))
        except InsufficientBalance:
            assert self.wallet < total
            return
        self.wallet -= total
        self.bookings[booking_id] = ("PENDING", total, net)

    @rule(price=st.sampled_from(PRICES))
    def a_ride(self, price: tuple[str, str]) -> None:
        """Booked, approved and completed at once: the common life of a booking."""
        total, net = Decimal(price[0]), Decimal(price[1])
        if self.wallet < total:
            return
        now = self.clock.now()
        row = world.values(self.client_id, self.partner_id, now, total=price[0], net=price[1], policy=world.FEE_20)
        booking_id = self.env.run(world.book(self.env.db, row, now))
        self.env.run(world.complete(self.env.db, booking_id, now))
        self.wallet -= total
        self.owed += net
        self.bookings[booking_id] = ("COMPLETED", total, net)
        self.seen["completed"] += 1

    @rule(price=st.sampled_from(PRICES), by_client=st.booleans())
    def a_cancelled_booking(self, price: tuple[str, str], by_client: bool) -> None:
        """Booked, waiting for the partner, then cancelled by the client (20 % kept) or the partner."""
        total, net = Decimal(price[0]), Decimal(price[1])
        if self.wallet < total:
            return
        now = self.clock.now()
        row = world.values(self.client_id, self.partner_id, now, total=price[0], net=price[1], policy=world.FEE_20)
        booking_id = self.env.run(world.book(self.env.db, row, now))
        self.env.run(world.move(self.env.db, booking_id, S.PENDING_APPROVAL, now))
        self.wallet -= total
        self.bookings[booking_id] = ("PENDING_APPROVAL", total, net)
        self._cancel(booking_id, by_client)

    @precondition(lambda self: bool(self._mine("PENDING", "PENDING_APPROVAL")))
    @rule(data=st.data())
    def approve(self, data: st.DataObject) -> None:
        booking_id = data.draw(st.sampled_from(self._mine("PENDING", "PENDING_APPROVAL")))
        status, total, net = self.bookings[booking_id]
        if status == "PENDING":
            self.env.run(world.move(self.env.db, booking_id, S.PENDING_APPROVAL, self.clock.now()))
        self.env.run(world.move(self.env.db, booking_id, S.APPROVED, self.clock.now()))
        self.bookings[booking_id] = ("APPROVED", total, net)

    @precondition(lambda self: bool(self._mine("APPROVED")))
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        booking_id = data.draw(st.sampled_from(self._mine("APPROVED")))
        _, total, net = self.bookings[booking_id]
        self.env.run(world.move(self.env.db, booking_id, S.COMPLETED, self.clock.now()))
        self.bookings[booking_id] = ("COMPLETED", total, net)
        self.owed += net
        self.seen["completed"] += 1

    @precondition(lambda self: bool(self._mine("PENDING_APPROVAL", "APPROVED")))
    @rule(data=st.data(), by_client=st.booleans())
    def cancel(self, data: st.DataObject, by_client: bool) -> None:
        booking_id = data.draw(st.sampled_from(self._mine("PENDING_APPROVAL", "APPROVED")))
        self._cancel(booking_id, by_client)

    def _cancel(self, booking_id: int, by_client: bool) -> None:
        _, total, net = self.bookings[booking_id]
        actor = Actor.CLIENT if by_client else Actor.PARTNER
        try:
            moved = self.env.run(world.cancel(self.env.db, booking_id, self.clock.now(), actor))
        except CancelRefused:  # a client's cancel after the pickup is refused, nothing written
            refused = True
        else:
            refused = False
        if refused:
            assert by_client
            return
        fee = moved.cancellation_fee or Decimal("0.00")
        assert fee == ((total * Decimal("0.20")).quantize(CENT, ROUND_HALF_UP) if by_client else 0)
        # docs/rules/incidents.md#resolve: less what incidents refunded already, never below nothing
        self.wallet += max(total - fee - self.refunded[booking_id], Decimal("0.00"))
        self.seen["cancelled after an incident refund"] += bool(self.refunded[booking_id])
        self.seen["fee kept" if fee else "refunded in full"] += 1
        self.owed += (fee * net / total).quantize(CENT, ROUND_HALF_UP)
        self._give_back_recoveries(booking_id)  # ended without its ride: the partner keeps what it was not paid
        self.bookings[booking_id] = ("CANCELLED", total, net)

    def _incident_candidates(self) -> list[int]:
        return [
            i
            for i in self._mine("APPROVED", "COMPLETED")
            if self.refunded[i] < self.bookings[i][1] and len(self.incident_types.get(i, ())) < len(IncidentType)
        ]

    @precondition(lambda self: bool(self._incident_candidates()))
    @rule(
        data=st.data(),
        responsible=st.sampled_from(["partner", "client", "none"]),
        part=st.sampled_from(["0.00", "0.01", "5.00", "12.34", "all"]),
    )
    def incident(self, data: st.DataObject, responsible: str, part: str) -> None:
        """docs/rules/incidents.md#resolve: an incident resolved by an operator with a partial or the
        whole unrefunded refund; the partner's share recovered when it is responsible, unless the
        booking then ends without its ride (docs/rules/statements.md#earnings)."""
        booking_id = data.draw(st.sampled_from(self._incident_candidates()))
        status, total, net = self.bookings[booking_id]
        used = self.incident_types.setdefault(booking_id, set())
        kind = data.draw(st.sampled_from([t for t in IncidentType if t not in used]))
        rest = total - self.refunded[booking_id]
        refund = rest if part == "all" else min(Decimal(part), rest)
        resolved = self.env.run(
            world.incident(self.env.db, self.clock, booking_id, kind, responsible=responsible, refund=str(refund))
        )
        assert resolved.status == "RESOLVED"
        used.add(kind)
        self.refunded[booking_id] += refund
        assert self.refunded[booking_id] <= total  # a refund never exceeds what was paid
        self.wallet += refund
        whole = self.refunded[booking_id] == total
        self.seen["incident refunded the rest" if whole else "incident partial refund"] += 1
        share = (refund * net / total).quantize(CENT, ROUND_HALF_UP) if responsible == "partner" else Decimal(0)
        if whole:
            self.bookings[booking_id] = ("REFUNDED", total, net)
        if whole and status == "APPROVED":
            self._give_back_recoveries(booking_id)  # refunded in full before its ride: no RIDE, no RECOVERY
        elif share:
            self.owed -= share
            self.recovered[booking_id] += share
            self.seen["recovered"] += 1

    def _give_back_recoveries(self, booking_id: int) -> None:
        self.owed += self.recovered.pop(booking_id, Decimal(0))

    @rule(amount=st.sampled_from(["0.01", "10.00", "45.55"]))
    def top_up(self, amount: str) -> None:
        self.env.run(client_service.top_up(self.env.db, self.clock, self.client_id, Decimal(amount), actor="model"))
        self.wallet += Decimal(amount)

    @rule(amount=st.sampled_from(["-3.33", "2.50", "0.01", "-0.01"]))
    def adjust(self, amount: str) -> None:
        self.env.run(
            books.adjust(self.env.db, self.partner_id, "EUR", amount, "model", actor="model", now=self.clock.now())
        )
        self.owed += Decimal(amount)

    @rule()
    def pay_a_closed_month(self) -> None:
        payable = [
            s
            for s in self.env.run(books.statements(self.env.db, self.partner_id))
            if s.status.value == "CLOSED" and s.figures.closing > 0
        ]
        if not payable:
            return
        target = payable[-1]
        paid = self.env.run(
            books.mark_paid(
                self.env.db, self.partner_id, target.period, "EUR", "REF", actor="model", now=self.clock.now()
            )
        )
        assert paid == target.figures.closing
        self.owed -= paid
        self.seen["paid"] += 1

    @rule(days=st.sampled_from([1, 12, 31]))
    def time_passes(self, days: int) -> None:
        """Days go by; a month that ends is closed by the scheduled jobs' use case."""
        self.clock.advance(timedelta(days=days))
        self.seen["closed"] += self.env.run(books.close_ended(self.env.db, self.clock.now()))

    @invariant()
    def books_reconcile(self) -> None:
        if not hasattr(self, "partner_id"):
            return
        assert self.env.run(books.ledger_check(self.env.db)) is None

        async def wallet() -> Decimal:
            async with self.env.db.read() as conn:
                found = await wallet_repo.wallet_of_client(conn, self.client_id)
                assert found is not None
                return found[2]

        assert self.env.run(wallet()) == self.wallet
        statements = self.env.run(books.statements(self.env.db, self.partner_id))
        assert (statements[0].figures.closing if statements else Decimal("0.00")) == self.owed
        for statement in statements:
            if statement.status.value == "OPEN":
                continue
            before = self.frozen.setdefault(statement.period, statement.figures)
            assert statement.figures == before, statement.period  # a closed statement never changes


def new_model() -> LedgerModel:
    return LedgerModel()


def test_the_books_model(loop: Loop) -> None:
    LedgerModel.env = loop
    # A factory function, not the class: Hypothesis digests its source, and finding a class's source
    # runs ast.parse over the whole file, which CPython 3.11.7 can fail ("AST constructor recursion
    # depth mismatch") deep in a long session.
    run_state_machine_as_test(
        cast("type[RuleBasedStateMachine]", new_model),  # Hypothesis takes any factory of machines
        settings=settings(
            max_examples=20,
            stateful_step_count=40,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
    exercised = LedgerModel.seen
    assert all(
        exercised[k] > 0
        for k in (
            "completed",
            "fee kept",
            "refunded in full",
            "paid",
            "closed",
            "incident partial refund",
            "incident refunded the rest",
            "recovered",
        )
    ), exercised
